"""A screenshot of ``werest leaderboard labels=[...]``'s page (issue 49 item 3), as it opens:
the decision first, then each dataset's certificate round by round:
experiments/results/leaderboard_decision.png.

    PYTHONPATH=src .venv/bin/python experiments/leaderboard_decision_screenshot.py

Two synthetic datasets (the test suite's ``synthetic_table``: system k substitutes each word
with its own probability; ``a``: three systems at 4, 7 and 12 %, ``b``: two at 3 and 10 %),
their references held back. Three rounds of the real loop: ``werest sample strategy=winner
budget=10`` with the sheets so far, each sheet filled from the held-back references as a
transcriber would; then ``werest leaderboard`` with the three sheets, and headless chromium
(playwright on Debian's chromium) photographs the page at 1280 px.
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

from tests.browser import playwright_chromium  # noqa: E402
from tests.unit.test_winner import synthetic_table  # noqa: E402

from werest_cli import run, value  # noqa: E402

OUT = ROOT / "experiments" / "results" / "leaderboard_decision.png"
ROUNDS = 3


def loop(folder: Path) -> tuple[Path, list[Path]]:
    """The table without references, and the sheets of :data:`ROUNDS` rounds, filled."""
    a = synthetic_table([0.04, 0.07, 0.12], n=400, seed=11, dataset="a")
    b = synthetic_table([0.03, 0.10], n=200, seed=3, dataset="b")
    b["utt_id"] = "b" + b["utt_id"]
    full = pd.concat([a, b], ignore_index=True)
    calls = folder / "calls.csv"
    full.drop(columns=["reference"]).to_csv(calls, index=False)
    truth = full.drop_duplicates("utt_id").set_index("utt_id")["reference"]
    sheets: list[Path] = []
    for number in range(ROUNDS):
        sheet = folder / f"s{number}.csv"
        given = [f"labels=[{','.join(value(s) for s in sheets)}]"] if sheets else []
        run("sample", f"input={value(calls)}", "strategy=winner", "budget=10",
            f"out={value(sheet)}", *given)  # fmt: skip
        if not sheet.exists():  # every dataset answered: nothing more to draw
            break
        rows = pd.read_csv(sheet, keep_default_na=False, dtype=str)
        empty = rows["reference"].str.strip() == ""
        rows.loc[empty, "reference"] = rows.loc[empty, "utt_id"].map(truth)
        rows.to_csv(sheet, index=False)
        sheets.append(sheet)
    return calls, sheets


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="werest-decision-page-") as scratch:
        folder = Path(scratch)
        calls, sheets = loop(folder)
        board = folder / "board"
        labels = f"labels=[{','.join(value(s) for s in sheets)}]"
        run("leaderboard", f"input={value(calls)}", labels, f"output_dir={value(board)}",
            "title='werest leaderboard: which system is best'")  # fmt: skip
        with playwright_chromium() as browser:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto((board / "leaderboard.html").as_uri())
            page.wait_for_function(
                "document.querySelectorAll('#tab-decision .main-svg').length > 0"
            )
            page.wait_for_timeout(500)  # plotly's last layout pass
            OUT.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(OUT), full_page=True)
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
