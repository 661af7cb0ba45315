"""A screenshot of the page ``werest sample`` writes to transcribe on (issue 49), filled in
part way, as a transcriber sees it: experiments/results/sheet_page.png.

    PYTHONPATH=src .venv/bin/python experiments/sheet_page_screenshot.py

The demo table (the hypotheses stay in it: the page must not show them) with an ``audio``
column of short WAV tones written here (one file left missing) and a ``duration`` column;
``werest sample budget=8 strategy=random`` takes every utterance of both datasets, and
headless chromium (playwright on Debian's chromium) types the references of the first rows,
skips one and leaves the cursor in the next box.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments"))

from tests.browser import playwright_chromium, write_tone  # noqa: E402

from werest.demo import demo_table_path  # noqa: E402
from werest_cli import run, value  # noqa: E402

OUT = ROOT / "experiments" / "results" / "sheet_page.png"
#: the utterance whose audio file is left missing (its row says so)
MISSING = "c04"


def table_with_audio(folder: Path) -> Path:
    """The demo table with ``audio`` (relative to the table) and ``duration``; every WAV
    written but :data:`MISSING`'s."""
    table = pd.read_csv(demo_table_path(), keep_default_na=False)
    utterances = sorted(set(table["utt_id"]))
    seconds = {u: 1.5 + 0.7 * i for i, u in enumerate(utterances)}
    table["audio"] = "audio/" + table["utt_id"] + ".wav"
    table["duration"] = table["utt_id"].map(seconds)
    for utt_id in utterances:
        if utt_id != MISSING:
            write_tone(folder / "audio" / f"{utt_id}.wav", seconds[utt_id], rate=4000)
    path = folder / "calls.csv"
    table.to_csv(path, index=False)
    return path


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="werest-sheet-page-") as scratch:
        folder = Path(scratch)
        table = table_with_audio(folder)
        sheet = folder / "labels" / "to_label.csv"
        run("sample", f"input={value(table)}", "budget=8", "strategy=random", f"out={sheet}")
        rows = pd.read_csv(sheet, keep_default_na=False, dtype=str)
        truth = pd.read_csv(demo_table_path(), keep_default_na=False, dtype=str)
        truth = truth.drop_duplicates("utt_id").set_index("utt_id")["reference"]
        with playwright_chromium() as browser:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(sheet.with_suffix(".html").as_uri())
            page.wait_for_function("document.querySelectorAll('audio').length > 0")
            page.wait_for_timeout(500)  # the players load their metadata
            for i in range(4):
                page.fill(f"#ref-{i}", truth[rows["utt_id"].iat[i]])
            page.check("#skip-4")
            page.focus("#ref-5")
            page.keyboard.type(truth[rows["utt_id"].iat[5]].split()[0] + " ")
            OUT.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(OUT), full_page=True)
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
