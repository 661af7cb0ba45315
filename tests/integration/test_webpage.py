"""leaderboard.html: self-contained, complete, and rendered by a real headless chromium."""

from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from tests.unit.test_leaderboard import models, toy_table  # noqa: F401  (the fixture)
from werest.cli.main import main
from werest.report.webpage import chromium, html_table, measure_tabs, screenshot

pytestmark = [pytest.mark.browser]


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


PLOT_DIV = re.compile(r'<div id="([^"]+)" class="plotly-graph-div"')


def outside_plotly(page: str) -> str:
    """The page without the inlined plotly.js library (its own source names URLs)."""
    from werest.report.webpage import plotly_js

    library = plotly_js()
    assert page.count(library) == 1  # inlined once, in the head
    assert page.index(library) < page.index("</head>")
    return page.replace(library, "")


def test_page_is_self_contained(board_dir):
    page = (board_dir / "leaderboard.html").read_text(encoding="utf-8")
    ours = outside_plotly(page)
    # nothing fetched: no external script, stylesheet, image or font
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", ours)
    assert "<link" not in ours and "@import" not in ours and "<script src" not in page
    assert not re.search(r"url\(\s*['\"]?(https?:|//)", ours)
    # the charts: plotly figures with fixed ids and hover text
    assert PLOT_DIV.findall(page) == ["plot-estimate-vs-truth", "plot-wer-vs-rtfx"] + [
        f"plot-fairness-{i}" for i in range(len(PLOT_DIV.findall(page)) - 2)
    ]
    assert "plot-fairness-0" in PLOT_DIV.findall(page)
    assert "95 % interval %{customdata[1]}" in page and "true %{x:.2f} %" in page
    assert "Pareto front" in page and '"type":"log"' in page
    for tab in ("Ranking", "Datasets", "Paired tests", "Fairness", "Latency", "Metrics"):
        assert f">{tab}</button>" in page
    # no language columns: no Language ID tab, and the footer says exactly why
    assert ">Language ID</button>" not in page and 'id="tab-lid"' not in page
    assert "the table has no <code>language</code> and no <code>detected_language</code>" in page
    assert "<title>toy &lt;board&gt;</title>" in page
    assert "beside the true WER from the references" in page
    tables = read_tables(page).tables
    ranking = tables["ranking"]
    header = ranking[0]
    for column in (
        "datasets",
        "est. WER %",
        "95% interval",
        "true WER %",
        "true rank",
        "RTFx",
        "FAAS est",
        "FAAS true",
        "toy",
        "toy-b",
    ):
        assert column in header, column
    rows = {row[1]: dict(zip(header, row, strict=True)) for row in ranking[1:]}
    assert rows["good"]["true WER %"] == "0.00" and rows["poor"]["RTFx"] == "10.0"
    assert rows["good"]["datasets"] == "2/2"
    datasets = pd.read_csv(board_dir / "datasets.csv")
    for cell in datasets.itertuples():  # one column per dataset, in percent
        assert rows[cell.system][cell.dataset] == f"{100 * cell.est_wer:.2f}"
    board = pd.read_csv(board_dir / "leaderboard.csv")
    for line in board.itertuples():
        assert rows[line.system]["est. WER %"] == f"{100 * line.est_wer:.2f}"
    details = tables["details"]
    rows = {row[1]: dict(zip(details[0], row, strict=True)) for row in details[1:]}
    for row in rows.values():  # the interval with the model's error holds the sampling CI
        interval = [float(v) for v in row["95% interval"].strip("[]").split(",")]
        sampling = [float(v) for v in row["sampling CI"].strip("[]").split(",")]
        assert interval[0] <= sampling[0] and sampling[1] <= interval[1]
        assert interval[1] - interval[0] > sampling[1] - sampling[0]
    # the latency tab: one row per system, seconds and percent
    latency = tables["latency"]
    rows = {row[1]: dict(zip(latency[0], row, strict=True)) for row in latency[1:]}
    assert set(rows) == {"good", "fair", "poor"}
    assert rows["good"]["latency p50 s"] == "1.500" and rows["good"]["RTF≤1 %"] == "100.0"
    descriptive = pd.read_csv(board_dir / "descriptive.csv")
    mean = descriptive.query("system == 'fair' and measure == 'est_wer'")["mean"].item()
    assert rows["fair"]["mean utt. est. WER %"] == f"{100 * mean:.2f}"
    # fairness: compact tables, and the CSVs linked by file name
    assert len(tables["fairness"]) == 1 + 3  # one row per system
    assert '<a href="fairness_groups.csv">' in page


def test_page_is_reproducible(board_dir, models):  # noqa: F811
    """The same leaderboard gives the same page, byte for byte (fixed chart ids)."""
    from werest.partition.leaderboard import LeaderboardOptions, build
    from werest.report.webpage import write_page
    from werest.stats import Bootstrap

    table = toy_table(24)
    result = build(table, models, LeaderboardOptions(bootstrap=Bootstrap(20, 0.95, 0)))
    first = write_page(result, board_dir / "a.html").read_bytes()
    again = build(table, models, LeaderboardOptions(bootstrap=Bootstrap(20, 0.95, 0)))
    assert write_page(again, board_dir / "b.html").read_bytes() == first
    assert PLOT_DIV.findall(first.decode()) == ["plot-estimate-vs-truth", "plot-wer-vs-rtfx"]


@pytest.mark.skipif(
    shutil.which("chromium") is None,
    reason="needs Debian's chromium (make test installs it as root: apt-get install chromium)",
)
def test_chromium_renders_the_table_and_plots(board_dir):

    page = board_dir / "leaderboard.html"
    dumped = chromium(page, "--dump-dom", "--virtual-time-budget=5000")
    dom = read_tables(dumped)
    systems = {row[1] for row in dom.tables["ranking"][1:]}
    assert systems == set(toy_table()["system"])
    # the script ran: every tab but the first is hidden
    assert dom.hidden == {"tab-datasets", "tab-pairs", "tab-fairness", "tab-latency", "tab-metrics"}
    # plotly drew every chart: its plot containers and SVG layers are in the DOM
    for div in PLOT_DIV.findall(page.read_text(encoding="utf-8")):
        drawn = re.search(rf'<div id="{div}" class="plotly-graph-div[^"]*js-plotly-plot', dumped)
        assert drawn, div
    assert dumped.count('class="main-svg"') >= 2 * 3
    assert dumped.count('class="point plotly-customdata"') >= 3  # the systems' markers
    # a tab named in the address opens at load
    fairness = read_tables(chromium(page, "--dump-dom", tab="tab-fairness"))
    assert "tab-fairness" not in fairness.hidden and "tab-ranking" in fairness.hidden
    # at 1280 px no tab makes the page scroll sideways
    found = measure_tabs(page, 1280)
    assert found["viewport"] == 1280
    assert set(found["tabs"]) == {
        "tab-ranking", "tab-datasets", "tab-pairs", "tab-fairness", "tab-latency", "tab-metrics"
    }  # fmt: skip
    assert max(tab["width"] for tab in found["tabs"].values()) <= 1280, found
    from PIL import Image

    image = np.asarray(Image.open(screenshot(page, board_dir / "shot.png")).convert("RGB"))
    assert image.shape[:2] == (1800, 1400)
    background = np.median(image.reshape(-1, 3), axis=0)
    inked = np.abs(image.astype(int) - background).sum(axis=2) > 60
    assert inked.mean() > 0.03  # header, table text and plot marks, not a blank page
    assert len(np.unique(image.reshape(-1, 3), axis=0)) > 100  # anti-aliased text and plots
    # below the header and the three-row table (~400 px) the plots are drawn, not blank
    assert inked[450:1100].mean() > 0.01


def test_page_without_references_or_timings(models):  # noqa: F811
    from werest.partition.leaderboard import LeaderboardOptions, build
    from werest.report.webpage import render
    from werest.stats import Bootstrap

    table = toy_table(24).drop(columns=["reference", "processing_seconds"])
    page = render(build(table, models, LeaderboardOptions(bootstrap=Bootstrap(20, 0.95, 0))))
    ranking = read_tables(page).tables["ranking"]
    assert "true WER %" not in ranking[0] and "RTFx" not in ranking[0]
    assert {row[1] for row in ranking[1:]} == {"good", "fair", "poor"}
    # the estimates with their intervals; no truth, no RTFx chart
    assert PLOT_DIV.findall(page) == ["plot-estimates"]
    assert "estimate %{x:.2f} %" in page
    # only the tabs with data
    for tab in ("Fairness", "Latency", "Language ID"):
        assert f">{tab}</button>" not in page
    assert "Fairness: no demographic column" in page and "Latency: no timings" in page
    # the subtitle promises no truth
    assert "WER estimated without references by werest." in page
    assert "true WER" not in page.split("</header>")[0]


def test_the_lid_message_names_what_is_missing(models):  # noqa: F811
    from werest.partition.leaderboard import LeaderboardOptions, build
    from werest.report.webpage import render
    from werest.stats import Bootstrap

    table = toy_table(24).assign(language="en")
    page = render(build(table, models, LeaderboardOptions(bootstrap=Bootstrap(20, 0.95, 0))))
    assert ">Language ID</button>" not in page
    assert (
        "Language ID: the table has <code>language</code> but no <code>detected_language</code> "
        "column" in page
    )


def test_faas_explanation_matches_the_audit():
    """The Metrics tab's FAAS range is what werest.evaluation.fairness.faas computes: negative when
    the
    overall score is below the WER fraction, about 27 for a fair system at 20 % WER."""
    from werest.evaluation.fairness import faas
    from werest.report.webpage import METRICS

    text = dict(METRICS)["FAAS est / true"]
    assert "10·log10(overall fairness score / WER)" in text
    assert round(faas(100, 0.2)) == 27 and "≈ 27" in text
    assert round(faas(0.001, 0.2)) == -23 and "≈ −23" in text
