"""``werest leaderboard labels=[s0.csv,s1.csv]`` leads with the decision (issue 49 item 3):
the sheets of a real label loop (``werest sample strategy=winner``, each filled from the
truth), read as ``werest estimate labels=`` reads them; the same ``winner.json``; the console,
``leaderboard.md`` and the page say the decision first, and the page plots each dataset's
certificate round by round, one point per sheet."""

from __future__ import annotations

import contextlib
import io
import json

import pandas as pd
import pytest

import werest
from tests.browser import chromium_binary, playwright_chromium
from tests.helpers import run_cli
from tests.integration.test_winner_loop import fill
from tests.unit.test_winner import synthetic_table
from werest.cli.main import main
from werest.report.decision_text import format_winner
from werest.report.leaderboard_report import CONTENDERS_HEAD

BOOT = "bootstrap.n_resamples=50"


def listed(*sheets) -> str:
    return f"labels=[{','.join(map(str, sheets))}]"


@pytest.fixture(scope="module")
def loop(tmp_path_factory):
    """Two rounds of the loop on two datasets (a: three systems close enough that 20 labels
    do not decide; b: two systems 3 points apart, good within the margin but not yet decided
    after 20), each sheet filled from the truth; then ``werest estimate``
    and ``werest leaderboard`` with both sheets, and ``werest estimate`` with the first."""
    folder = tmp_path_factory.mktemp("decision")
    a = synthetic_table([0.04, 0.07, 0.12], n=400, seed=11, dataset="a")
    b = synthetic_table([0.03, 0.06], n=200, seed=3, dataset="b")
    b["utt_id"] = "b" + b["utt_id"]
    full = pd.concat([a, b], ignore_index=True)
    calls = folder / "calls.csv"
    full.drop(columns=["reference"]).to_csv(calls, index=False)
    truth = full.drop_duplicates("utt_id").set_index("utt_id")["reference"]
    sheets = []
    for number in range(2):
        sheet = folder / f"s{number}.csv"
        given = [listed(*sheets)] if sheets else []
        command = ["sample", f"input={calls}", "strategy=winner", "budget=10", f"out={sheet}"]
        assert main([*command, *given]) == 0  # a module's fixture: no capsys
        fill(sheet, truth)
        sheets.append(sheet)
    assert main(["estimate", f"input={calls}", listed(*sheets), f"output_dir={folder}/e"]) == 0
    assert main(["estimate", f"input={calls}", listed(sheets[0]), f"output_dir={folder}/e0"]) == 0
    console = io.StringIO()
    with contextlib.redirect_stdout(console):
        board = ["leaderboard", f"input={calls}", listed(*sheets), f"output_dir={folder}/board"]
        assert main([*board, BOOT]) == 0
    return folder, sheets, console.getvalue()


def test_the_leaderboard_decides_as_estimate_does_round_by_round(loop):
    """A list of sheets works; winner.json is estimate's, byte for byte; the rounds: one row
    per dataset and sheet, the first sheet's what estimate says of it alone, the last's
    winner.json."""
    folder, sheets, _ = loop
    written = (folder / "board" / "winner.json").read_bytes()
    assert written == (folder / "e" / "winner.json").read_bytes()
    decisions = json.loads(written)
    assert [d["dataset"] for d in decisions] == ["a", "b"]
    assert {d["status"] for d in decisions} == {"undecided", "good"}  # both kinds shown
    rounds = pd.read_csv(folder / "board" / "winner_rounds.csv", keep_default_na=False)
    assert len(rounds) == 2 * len(sheets)
    first = json.loads((folder / "e0" / "winner.json").read_text())
    for number, said in ((0, first), (1, decisions)):
        mine = rounds[rounds["round"] == number].set_index("dataset")
        for entry in said:
            row = mine.loc[entry["dataset"]]
            assert row["status"] == entry["status"] and row["leader"] == entry["leader"]
            assert row["labels_used"] == entry["labels_used"]
            assert row["regret_bound"] == entry["regret_bound"]
            assert (row["low"], row["high"]) == (entry["low"], entry["high"])
    # transcripts, not draws: the distinct utterances of the sheets
    drawn = pd.concat([pd.read_csv(s, dtype=str) for s in sheets])
    for entry in decisions:
        assert (
            entry["labels_used"]
            == drawn.query(f"dataset == '{entry['dataset']}'")["utt_id"].nunique()
        )


def test_the_console_and_the_markdown_lead_with_the_decision(loop):
    folder, _, console = loop
    decisions = json.loads((folder / "board" / "winner.json").read_text())
    lines = console.splitlines()
    block = format_winner(decisions).splitlines()
    assert lines[: len(block)] == block  # estimate's block, first
    assert lines[0] == "Which system is best:" and CONTENDERS_HEAD not in console
    assert console.index(block[-1]) < console.index(" rank system")  # then the ranking
    markdown = (folder / "board" / "leaderboard.md").read_text(encoding="utf-8")
    headings = [line for line in markdown.splitlines() if line.startswith("## ")]
    assert headings[:2] == ["## Which system is best", "## Ranking"]
    assert CONTENDERS_HEAD not in markdown
    lead = markdown.split("## Ranking")[0]
    for entry in decisions:
        line = next(x for x in lead.splitlines() if x.startswith(f"- {entry['dataset']}: "))
        assert f"from {entry['labels_used']} transcripts" in line
        assert f"{entry['regret_bound']:.2f} points worse than the best" in line
        named = entry["winner"] or entry["leader"]
        assert named in line and entry["status"] in line
    assert "### Round by round" in lead and "| sheet | transcripts |" in lead


def test_the_api_leaderboard_takes_the_sheets_and_returns_the_decision(loop, tmp_path):
    """``werest.leaderboard(labels=[...])`` on DataFrames: the command's decision and rounds;
    ``werest.write_leaderboard`` writes the same winner.json; one sheet's path works too."""
    folder, sheets, _ = loop
    frames = [pd.read_csv(s, keep_default_na=False, dtype=str) for s in sheets]
    board = werest.leaderboard(folder / "calls.csv", labels=frames, n_resamples=50)
    written = json.loads((folder / "board" / "winner.json").read_text())
    assert json.loads(json.dumps(board.decisions)) == written
    assert board.decisions == werest.decide(folder / "calls.csv", frames)
    rounds = pd.read_csv(folder / "board" / "winner_rounds.csv")
    assert board.rounds[["dataset", "round", "labels_used", "status"]].equals(
        rounds[["dataset", "round", "labels_used", "status"]]
    )
    assert set(board.board["method"]) == {"ppi"}  # the labelled estimates too
    files = werest.write_leaderboard(board, tmp_path / "api", n_resamples=50)
    assert tmp_path / "api" / "winner.json" in files
    assert (tmp_path / "api" / "winner.json").read_bytes() == (
        folder / "board" / "winner.json"
    ).read_bytes()
    one = werest.leaderboard(folder / "calls.csv", labels=str(sheets[0]), n_resamples=50)
    assert json.loads(json.dumps(one.decisions)) == json.loads(
        (folder / "e0" / "winner.json").read_text()
    )
    assert werest.leaderboard(folder / "calls.csv", n_resamples=50).decisions is None


def test_a_run_without_labels_leaves_no_decision_behind(loop, tmp_path, capsys):
    """The folder is replaced whole: a label-free run over a labelled one removes winner.json
    and the rounds, and its page says why there is no decision tab."""
    folder, _, _ = loop
    out = tmp_path / "board"
    status, _, err = run_cli(
        capsys, "leaderboard", f"input={folder / 'calls.csv'}", listed(folder / "s0.csv"),
        f"output_dir={out}", BOOT,
    )  # fmt: skip
    assert status == 0, err
    assert (out / "winner.json").exists() and (out / "winner_rounds.csv").exists()
    status, printed, err = run_cli(
        capsys, "leaderboard", f"input={folder / 'calls.csv'}", f"output_dir={out}", BOOT
    )
    assert status == 0, err
    assert not (out / "winner.json").exists() and not (out / "winner_rounds.csv").exists()
    assert printed.startswith(CONTENDERS_HEAD)
    page = (out / "leaderboard.html").read_text(encoding="utf-8")
    assert 'id="tab-decision"' not in page and "Which system is best: no labels=" in page


@pytest.mark.browser
@pytest.mark.skipif(
    chromium_binary() is None,
    reason="needs Debian's chromium (make test installs it as root: apt-get install chromium)",
)
def test_the_page_shows_the_decision_first_and_its_rounds(loop):
    """In headless chromium: the page opens on the decision, its lead sits in the header above
    the ranking, and each dataset's chart has one point per sheet: the certificate and the
    runner-up's interval at the transcripts each round used."""
    folder, sheets, _ = loop
    decisions = json.loads((folder / "board" / "winner.json").read_text())
    rounds = pd.read_csv(folder / "board" / "winner_rounds.csv")
    with playwright_chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto((folder / "board" / "leaderboard.html").as_uri())
        page.wait_for_function("document.querySelectorAll('#tab-decision .main-svg').length > 0")
        tabs = page.eval_on_selector_all("nav button", "bs => bs.map(b => b.textContent)")
        assert tabs[:2] == ["Which system is best", "Ranking"]
        assert page.is_visible("#tab-decision") and not page.is_visible("#tab-ranking")
        lead = page.inner_text("#decision-lead")
        for entry in decisions:
            assert f"{entry['dataset']}: " in lead
            assert f"from {entry['labels_used']} transcripts" in lead
        table = page.inner_text("table#decision")
        assert "undecided" in table and "good" in table
        for number, (dataset, mine) in enumerate(rounds.groupby("dataset", sort=True)):
            plot = f"plot-rounds-{number}"
            data = page.evaluate(
                f"(() => {{ const d = document.getElementById('{plot}')._fullData;"
                " return d.map(t => ({name: t.name, x: Array.from(t.x), y: Array.from(t.y)})); })()"
            )
            assert [t["name"] for t in data] == ["regret bound", "runner-up − leader"]
            assert data[0]["x"] == mine["labels_used"].tolist()
            assert data[0]["y"] == pytest.approx(mine["regret_bound"].tolist())
            assert data[1]["y"] == pytest.approx(mine["difference"].tolist())
            drawn = page.evaluate(
                f"Array.from(document.querySelectorAll('#{plot} .scatterlayer .trace'))"
                ".map(t => t.querySelectorAll('.point').length)"
            )
            assert drawn == [len(sheets), len(sheets)], (dataset, drawn)  # one per sheet
            assert page.inner_text(f"#{plot}").find(dataset) >= 0  # the chart's title
        # the decision above the ranking: the header's lead, then the ranking table
        page.click("nav button:has-text('Ranking')")
        assert page.is_visible("#tab-ranking") and page.is_visible("#decision-lead")
        above = page.eval_on_selector("#decision-lead", "e => e.getBoundingClientRect().bottom")
        ranking = page.eval_on_selector("table#ranking", "e => e.getBoundingClientRect().top")
        assert above < ranking
        assert errors == []
    html = (folder / "board" / "leaderboard.html").read_text(encoding="utf-8")
    assert html.index('id="tab-decision"') < html.index('id="tab-ranking"')  # without JS too
