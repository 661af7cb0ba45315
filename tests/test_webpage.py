"""leaderboard.html: self-contained, complete, and rendered by a real headless chromium."""

from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from werest.cli import main
from werest.webpage import chromium, html_table, screenshot

from .test_leaderboard import models, toy_table  # noqa: F401  (the fixture)


class TableReader(HTMLParser):
    """The cell texts of every table, by table id (the DOM chromium dumps)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.hidden: set[str] = set()
        self._table: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section" and "none" in (attrs.get("style") or ""):
            self.hidden.add(attrs.get("id"))
        if tag == "table":
            self._table = attrs.get("id") or f"table{len(self.tables)}"
            self.tables[self._table] = []
        elif tag == "tr" and self._table:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[self._table].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None


def read_tables(markup: str) -> TableReader:
    reader = TableReader()
    reader.feed(markup)
    return reader


def test_html_table_escapes_and_keeps_blanks():
    frame = pd.DataFrame({"system": ["<b>x</b>", "a&b"], "WER": ["1.00", np.nan]})
    markup = html_table(frame, "t")
    assert "<b>x</b>" not in markup and "&lt;b&gt;x&lt;/b&gt;" in markup
    assert read_tables(markup).tables["t"] == [["system", "WER"], ["<b>x</b>", "1.00"], ["a&b", ""]]


@pytest.fixture(scope="module")
def board_dir(tmp_path_factory):
    """``werest leaderboard`` on the three-system toy table (references, gender, timings)."""
    out = tmp_path_factory.mktemp("board")
    source = out / "toy.csv"
    toy_table().to_csv(source, index=False)
    status = main(
        [
            "leaderboard",
            f"input={source}",
            f"output_dir={out}",
            "bootstrap.n_resamples=100",
            "fairness.min_group_size=5",
            "title='toy <board>'",
        ]
    )
    assert status == 0
    return out


def test_page_is_self_contained(board_dir):
    page = (board_dir / "leaderboard.html").read_text(encoding="utf-8")
    # nothing fetched: no external script, stylesheet, image or font
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<link" not in page and "@import" not in page
    assert not re.search(r"url\(\s*['\"]?(https?:|//)", page)  # SVG clip paths are url(#id)
    assert page.count("<svg") >= 3  # estimate vs truth, WER vs RTFx, fairness groups
    for tab in (
        "Ranking",
        "Datasets",
        "Paired tests",
        "Fairness",
        "Latency",
        "Language ID",
        "Metrics",
    ):
        assert f">{tab}</button>" in page
    assert "<title>toy &lt;board&gt;</title>" in page
    ranking = read_tables(page).tables["ranking"]
    header = ranking[0]
    for column in (
        "est. WER %",
        "95% interval",
        "sampling CI",
        "true WER %",
        "true rank",
        "RTFx",
        "latency p50 s",
        "latency p95 s",
        "FAAS est",
        "FAAS true",
    ):
        assert column in header, column
    rows = {row[1]: dict(zip(header, row, strict=True)) for row in ranking[1:]}
    assert rows["good"]["true WER %"] == "0.00" and rows["poor"]["RTFx"] == "10.0"
    for row in rows.values():  # the interval with the model's error holds the sampling CI
        interval = [float(v) for v in row["95% interval"].strip("[]").split(",")]
        sampling = [float(v) for v in row["sampling CI"].strip("[]").split(",")]
        assert interval[0] <= sampling[0] and sampling[1] <= interval[1]
        assert interval[1] - interval[0] > sampling[1] - sampling[0]
    assert rows["good"]["latency p50 s"] == "1.500"


@pytest.mark.skipif(
    shutil.which("chromium") is None,
    reason="needs Debian's chromium (make test installs it as root: apt-get install chromium)",
)
def test_chromium_renders_the_table_and_plots(board_dir):
    page = board_dir / "leaderboard.html"
    dom = read_tables(chromium(page, "--dump-dom", "--virtual-time-budget=5000"))
    systems = {row[1] for row in dom.tables["ranking"][1:]}
    assert systems == set(toy_table()["system"])
    # the script ran: every tab but the first is hidden
    assert dom.hidden == {
        "tab-datasets",
        "tab-pairs",
        "tab-fairness",
        "tab-latency",
        "tab-lid",
        "tab-metrics",
    }
    # a tab named in the address opens at load
    fairness = read_tables(chromium(page, "--dump-dom", tab="tab-fairness"))
    assert "tab-fairness" not in fairness.hidden and "tab-ranking" in fairness.hidden
    from PIL import Image

    image = np.asarray(Image.open(screenshot(page, board_dir / "shot.png")).convert("RGB"))
    assert image.shape[:2] == (1800, 1400)
    background = np.median(image.reshape(-1, 3), axis=0)
    inked = np.abs(image.astype(int) - background).sum(axis=2) > 60
    assert inked.mean() > 0.03  # header, table text and plot marks, not a blank page
    assert len(np.unique(image.reshape(-1, 3), axis=0)) > 100  # anti-aliased text and plots
    # below the header and the three-row table (~330 px) the plots are drawn, not blank
    assert inked[380:900].mean() > 0.01


def test_page_without_references_or_timings(models):  # noqa: F811
    from werest.leaderboard import build
    from werest.stats import Bootstrap
    from werest.webpage import render

    table = toy_table(24).drop(columns=["reference", "processing_seconds"])
    page = render(build(table, models, boot=Bootstrap(20, 0.95, 0), fairness=None))
    ranking = read_tables(page).tables["ranking"]
    assert "true WER %" not in ranking[0] and "RTFx" not in ranking[0]
    assert {row[1] for row in ranking[1:]} == {"good", "fair", "poor"}
    assert page.count("<svg") == 1  # the estimates with their CIs; no RTFx plot
    assert "No demographic column" in page
