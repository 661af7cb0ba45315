"""Screenshots of the three shared leaderboards' web pages (``leaderboard.html``).

    python experiments/leaderboard_pages.py            # ~15 min on 2 cores (AfriSpeech ~10)
    python experiments/leaderboard_pages.py --reuse    # only re-screenshot existing pages

Runs ``werest leaderboard`` (the CLI, :func:`werest.cli.main.main`) with the settings of
``experiments/leaderboard_coverage.py`` on the tables it imported
(``outputs/leaderboard_coverage/{dighr,mubench,afrispeech}.parquet``; imported here from
``../shared/data`` when absent), into ``outputs/leaderboard_pages/<name>/``, then opens each
page in headless Chromium at 1280 px: it measures every tab's width (the page must not scroll
sideways) and height, and screenshots the Ranking tab and, where the page has them, the
Fairness and Latency tabs into ``experiments/results/leaderboard_pages/<name>_<tab>.png``.
Writes ``experiments/results/leaderboard_pages.md``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from werest.cli.main import main as werest
from werest.report.webpage import measure_tabs, screenshot

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
TABLES = REPO / "outputs" / "leaderboard_coverage"
WORK = REPO / "outputs" / "leaderboard_pages"
RESULTS = REPO / "experiments" / "results"
SHOTS = RESULTS / "leaderboard_pages"

WIDTH = 1280
#: the tallest screenshot (px); a longer tab is cut there
MAX_HEIGHT = 4200
#: PNGs above this many bytes are written with a 256-colour palette
MAX_BYTES = 600_000

#: name -> (title, importer's shared folder, extra leaderboard settings), as in
#: experiments/leaderboard_coverage.py
BOARDS = {
    "dighr": ("dighr (English)", SHARED / "dighr" / "en", ["exclude_datasets=[dighr-181215]"]),
    "mubench": ("mu-bench", SHARED / "mubench", []),
    "afrispeech": ("AfriSpeech", SHARED / "afrispeech", []),
}

SHOWN = ("tab-ranking", "tab-fairness", "tab-latency")


def run(*args: str) -> None:
    status = werest(list(args))
    if status:
        sys.exit(status)


def measure(page: Path) -> dict:
    """Per tab of ``page`` at 1280 px: the document's width and height, and how many tables
    scroll inside their own box."""
    found = measure_tabs(page, WIDTH)
    assert found["viewport"] == WIDTH, found
    return found["tabs"]


def shoot(page: Path, png: Path, tab: str, height: int) -> Path:
    """A screenshot of ``tab``, kept under :data:`MAX_BYTES` (a palette PNG if need be)."""
    from PIL import Image

    screenshot(page, png, WIDTH, min(height, MAX_HEIGHT), tab=tab)
    if png.stat().st_size > MAX_BYTES:
        image = Image.open(png).convert("RGB")
        image.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(png, optimize=True)
    return png


def main() -> None:
    reuse = "--reuse" in sys.argv[1:]
    SHOTS.mkdir(parents=True, exist_ok=True)
    lines = [
        "# The leaderboard pages, as a browser shows them",
        "",
        "`python experiments/leaderboard_pages.py`: `werest leaderboard` (settings of "
        "`experiments/leaderboard_coverage.py`) on the dighr, mu-bench and AfriSpeech tables, "
        "each `leaderboard.html` opened in headless Chromium at 1280 px. Width: the document's "
        "scroll width with that tab shown (≤ 1280: the page never scrolls sideways); tables "
        "scrolling in their own box: none wanted.",
        "",
        "| leaderboard | tab | width px | height px | tables scrolling in their box | screenshot |",
        "|---|---|---|---|---|---|",
    ]
    for name, (title, folder, extra) in BOARDS.items():
        table = TABLES / f"{name}.parquet"
        if not table.exists():
            run("import", f"format={name}", f"paths=[{folder}]", f"out={table}")
        out = WORK / name
        page = out / "leaderboard.html"
        if not (reuse and page.exists()):
            run("leaderboard", f"input={table}", f"output_dir={out}", f"title='{title}'", *extra)
        tabs = measure(page)
        for tab, size in tabs.items():
            shot = ""
            if tab in SHOWN:
                png = shoot(
                    page, SHOTS / f"{name}_{tab.removeprefix('tab-')}.png", tab, size["height"]
                )
                shot = (
                    f"[{png.name}](leaderboard_pages/{png.name}) ({png.stat().st_size // 1000} KB)"
                )
            lines.append(
                f"| {title} | {tab.removeprefix('tab-')} | {size['width']} | {size['height']} | "
                f"{size['scrolling_tables']} | {shot} |"
            )
            print(name, tab, size, shot, flush=True)
    lines.append("")
    (RESULTS / "leaderboard_pages.md").write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    main()
