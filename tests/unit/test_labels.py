"""``werest estimate labels=…``: bad labels exit 2 with one line and write nothing; a few labels
turn the estimates into prediction-powered ones (real dighr data), and too few keep the
zero-label estimate with a warning."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import REPO
from tests.helpers import assert_one_line_error, run_cli

DEMO = REPO / "src" / "werest" / "data" / "demo_transcripts.csv"


def demo_labels(rows: list[dict], tmp_path: Path) -> Path:
    path = tmp_path / "labels.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def demo_reference(utt: int = 0) -> dict:
    table = pd.read_csv(DEMO)
    first = table.drop_duplicates(["dataset", "utt_id"]).iloc[utt]
    return {"dataset": first["dataset"], "utt_id": first["utt_id"], "reference": first["reference"]}


@pytest.mark.parametrize(
    ("case", "fragments"),
    [
        ("unknown", ["row 2", "'utt_id'", "not in the input table"]),
        ("duplicate", ["row 2", "duplicate"]),
        ("empty", ["row 1", "'reference'", "empty reference"]),
        ("disagrees", ["row 1", "'reference'", "differs from the input's own reference"]),
        ("no reference column", ["'reference'", "missing required column"]),
        ("design not a number", ["row 1", "'expected_draws'", "not a number"]),
        ("draws below one", ["row 1", "'draws'", "positive number"]),
    ],
)
def test_bad_labels(tmp_path, monkeypatch, capsys, case, fragments):
    monkeypatch.chdir(tmp_path)
    good = demo_reference(0)
    rows = {
        "unknown": [good, {**good, "utt_id": "no-such-utterance"}],
        "duplicate": [good, good],
        "empty": [{**good, "reference": ""}, demo_reference(1)],
        "disagrees": [{**good, "reference": good["reference"] + " extra words"}],
        "no reference column": [{"dataset": good["dataset"], "utt_id": good["utt_id"]}],
        "design not a number": [{**good, "draws": 1, "expected_draws": "often"}],
        "draws below one": [{**good, "draws": 0, "expected_draws": 0.1}],
    }[case]
    labels = demo_labels(rows, tmp_path)
    status, _, err = run_cli(
        capsys, "estimate", f"input={DEMO}", f"labels={labels}", "output_dir=out"
    )
    line = assert_one_line_error(status, err, "estimate", *fragments)
    assert str(labels) in line or "labels.csv" in line
    assert not (tmp_path / "out").exists()


def test_too_few_labels_keep_the_zero_label_estimate(tmp_path, monkeypatch, capsys):
    """labels=input on the demo table (every utterance labelled, 6 and 8 per dataset, below
    min_labels=20): every row stays zero_label, and the warning says so. With min_labels=5
    the labels are a census, so the prediction-powered estimate is the true corpus WER."""
    monkeypatch.chdir(tmp_path)
    status, out, err = run_cli(
        capsys, "estimate", f"input={DEMO}", "labels=input", "output_dir=out"
    )
    assert status == 0, err
    records = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert {r["method"] for r in records} == {"zero_label"}
    assert all(r["n_labelled"] == r["n_utterances"] for r in records)
    assert "fewer than 20 labelled utterances" in out + err
    status, out, err = run_cli(
        capsys,
        "estimate",
        f"input={DEMO}",
        "labels=input",
        "few_labels.min_labels=5",
        "output_dir=out5",
    )
    assert status == 0, err
    records = json.loads((tmp_path / "out5" / "summary.json").read_text())
    assert {r["method"] for r in records} == {"ppi"}
    for r in records:
        assert r["estimated_wer"] == pytest.approx(r["wer"])
        assert r["classical_wer"] == pytest.approx(r["wer"])
    assert "ppi" in out


@pytest.fixture(scope="module")
def dighr_190331(dighr_table):
    table = dighr_table[dighr_table["dataset"] == "dighr-190331"].reset_index(drop=True)
    return table


@pytest.mark.shared
def test_a_few_labels_give_prediction_powered_estimates(
    dighr_190331, tmp_path, monkeypatch, capsys
):
    """40 labelled utterances of dighr-190331 (645 utterances, 4 systems), references removed
    from the input: every system gets a prediction-powered estimate whose interval holds the
    labels-only estimate's centre region, the effective labels exceed the labels used, the
    pairs' verdicts follow their intervals, and the truth of the whole dataset (which the run
    never sees) lies in most intervals."""
    monkeypatch.chdir(tmp_path)
    table = dighr_190331
    table.drop(columns="reference").to_parquet("input.parquet")
    utterances = table.drop_duplicates(["dataset", "utt_id"])
    labelled = utterances.sample(40, random_state=0)[["dataset", "utt_id", "reference"]]
    labelled.to_csv("labels.csv", index=False)
    status, out, err = run_cli(
        capsys, "estimate", "input=input.parquet", "labels=labels.csv", "output_dir=out"
    )
    assert status == 0, err
    records = json.loads(Path("out/summary.json").read_text())
    assert {r["method"] for r in records} == {"ppi"}
    for r in records:
        assert r["n_labelled"] == 40
        assert r["interval_low"] <= r["estimated_wer"] <= r["interval_high"]
        assert r["classical_low"] <= r["classical_wer"] <= r["classical_high"]
        assert 0 <= r["ppi_lambda"] <= 1
        assert "wer" not in r  # the input has no reference: no truth to show
    # the truth of all 645 utterances, scored as werest score scores it
    truth = json.loads(_truth(table, tmp_path, capsys))
    covered = [r["interval_low"] <= truth[r["system"]] <= r["interval_high"] for r in records]
    assert sum(covered) >= 3
    pairs = pd.read_csv("out/pairs.csv")
    assert len(pairs) == 6
    for pair in pairs.itertuples():
        expected = "A better" if pair.high < 0 else "B better" if pair.low > 0 else "not separable"
        assert pair.verdict == expected
        # more labels: 0 once separated, else 40·(half-width / |difference|)² − 40
        half = (pair.high - pair.low) / 2
        wanted = (
            0
            if expected != "not separable"
            else np.ceil(40 * (half / abs(pair.difference)) ** 2) - 40
        )
        assert pair.more_labels_to_separate == wanted
    for r in records:
        half = (r["interval_high"] - r["interval_low"]) / 2
        assert r["more_labels_for_2_points"] == max(0, np.ceil(40 * (half / 0.02) ** 2) - 40)
    assert "labels only %" in out
    assert "More labels:" in out and "would bring every interval to ±2 points" in out


def _truth(table: pd.DataFrame, tmp_path: Path, capsys) -> str:
    table.to_parquet(tmp_path / "full.parquet")
    status, _, err = run_cli(
        capsys, "score", f"input={tmp_path / 'full.parquet'}", f"output_dir={tmp_path / 'score'}"
    )
    assert status == 0, err
    scores = pd.read_csv(tmp_path / "score" / "scores.csv")
    return json.dumps(dict(zip(scores["system"], scores["wer"].astype(float), strict=True)))


def test_more_labels_follow_the_square_root_law():
    from werest.estimation.ppi import more_labels

    # half-width 4 points at 50 labels -> 2 points at 50·(4/2)² = 200 labels: 150 more
    assert more_labels(50, 0.04, 0.02) == 150
    assert more_labels(50, 0.015, 0.02) == 0  # there already
    assert more_labels(10, 0.03, 0.02) == 13  # 10·2.25 = 22.5 -> 23 labels
    assert np.isnan(more_labels(50, 0.04, 0.0))  # equal estimates: no number is sure


def test_design_weights_from_the_sheet():
    """An actively drawn sheet's expected_draws become weights 1 / (N p), p = expected_draws /
    Σ draws; a sheet without them is a simple random sample (weights 1); an utterance drawn
    twice counts twice."""
    from werest.estimation.labels import design_rows

    frame = pd.Index([f"u{i}" for i in range(10)])
    sheet = pd.DataFrame({"utt_id": ["u1", "u4"], "draws": [2, 1], "expected_draws": [0.6, 0.3]})
    rows, weight = design_rows(sheet, frame)
    assert list(rows) == [1, 1, 4]
    p = np.array([0.6, 0.6, 0.3]) / 3
    assert np.allclose(weight, 1 / (10 * p))
    rows, weight = design_rows(sheet.assign(expected_draws=np.nan, draws=np.nan), frame)
    assert list(rows) == [1, 4] and list(weight) == [1.0, 1.0]


@pytest.mark.shared
def test_the_leaderboard_with_a_few_labels(dighr_190331, tmp_path, monkeypatch, capsys):
    """werest leaderboard labels=…: every system's macro estimate is prediction-powered on
    40 labels (the leaderboard.csv and the page say how many), the ranking follows the
    estimates, and each neighbour pair's verdict follows its paired interval."""
    monkeypatch.chdir(tmp_path)
    table = dighr_190331
    table.drop(columns="reference").to_parquet("input.parquet")
    utterances = table.drop_duplicates(["dataset", "utt_id"])
    utterances.sample(40, random_state=1)[["dataset", "utt_id", "reference"]].to_csv(
        "labels.csv", index=False
    )
    status, out, err = run_cli(
        capsys, "leaderboard", "input=input.parquet", "labels=labels.csv", "output_dir=lb"
    )
    assert status == 0, err
    board = pd.read_csv("lb/leaderboard.csv")
    assert set(board["method"]) == {"ppi"}
    assert (board["n_labelled"] == 40).all()
    assert list(board["est_wer"]) == sorted(board["est_wer"])
    assert (
        (board["est_ci_low"] <= board["est_wer"]) & (board["est_wer"] <= board["est_ci_high"])
    ).all()
    pairs = pd.read_csv("lb/pairs.csv", keep_default_na=False)
    for pair in pairs.itertuples():
        expected = (
            "A better" if pair.ppi_high < 0 else "B better" if pair.ppi_low > 0 else "not separable"
        )
        assert pair.verdict == expected
    page = Path("lb/leaderboard.html").read_text(encoding="utf-8")
    assert "how many transcribed utterances each number rests on" in page
    assert "label-free predictions corrected with up to 40 transcribed utterances per" in page
    assert "<th>labels</th>" in page or ">labels<" in page
    assert "A − B on the labelled utterances" in out


def test_labels_in_a_partitioned_run_are_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    labels = demo_labels([demo_reference(0)], tmp_path)
    for command in ("estimate", "leaderboard"):
        status, _, err = run_cli(
            capsys,
            command,
            f"input={DEMO}",
            f"labels={labels}",
            "partition.rows=5",
            "output_dir=out",
        )
        assert_one_line_error(status, err, command, "labels=", "partitioned")
        assert not (tmp_path / "out").exists()


def test_more_labels_than_the_dataset_has_point_to_a_census():
    """A census gives every WER exactly, so advice beyond the utterances left says so."""
    from werest.estimation.labels import format_more_labels

    def record(system, wer, more):
        return {
            "dataset": "d",
            "system": system,
            "method": "ppi",
            "estimated_wer": wer,
            "n_labelled": 50,
            "n_utterances": 100,
            "more_labels_for_2_points": more,
        }

    records = [record("a", 0.10, 30), record("b", 0.11, 200), record("c", 0.12, 0)]
    pairs = pd.DataFrame(
        {
            "dataset": ["d", "d"],
            "system_a": ["a", "c"],
            "system_b": ["b", "b"],
            "verdict": ["not separable", "not separable"],
            "more_labels_to_separate": [80.0, 30.0],
        }
    )
    assert format_more_labels(records, pairs).splitlines() == [
        "More labels:",
        "  d: only labelling all 100 utterances would bring every interval to ±2 points",
        "    a vs b: only labelling all 100 utterances would tell them apart",
        "    b vs c: about 30 more labels would separate them if their difference held",
    ]
    records[1]["more_labels_for_2_points"] = 50  # exactly the 50 left: still a number
    assert "about 50 more labels (beyond 50)" in format_more_labels(records, pairs)


# --------------------------------------------------------------------------- sheets (issue 47)


def sheets_table() -> pd.DataFrame:
    """Two datasets of ten utterances, one system: what read_labels checks labels against."""
    return pd.DataFrame(
        {
            "dataset": ["a"] * 10 + ["b"] * 10,
            "utt_id": [f"u{i}" for i in range(10)] * 2,
            "system": "s",
            "hypothesis": "some words",
        }
    )


def numbered_sheet(
    tmp_path: Path,
    name: str,
    number: int | None,
    utterances: list[str],
    *,
    dataset: str = "a",
    draws: list[int] | None = None,
    order: list[str] | None = None,
    budget: int | None = None,
    strategy: str = "winner",
) -> Path:
    """A filled sheet as werest sample writes it: ``sheet`` (None: no such column, a sheet
    from before it was recorded), ``draw_order`` (default: the rows' order), ``budget``
    (default: the draws' sum)."""
    draws = draws or [1] * len(utterances)
    if order is None:
        places = np.split(np.arange(sum(draws)), np.cumsum(draws)[:-1])
        order = ["|".join(map(str, p)) for p in places]
    rows = pd.DataFrame(
        {
            "dataset": dataset,
            "utt_id": utterances,
            "reference": [f"words of {u}" for u in utterances],
            "strategy": strategy,
            "draws": draws,
            "n_utterances": 10,
            "budget": budget if budget is not None else sum(draws),
            "draw_order": order,
        }
    )
    if number is not None:
        rows["sheet"] = number
    else:
        rows = rows.drop(columns="draw_order")
    path = tmp_path / name
    rows.to_csv(path, index=False)
    return path


def test_sheets_are_read_in_the_order_of_their_numbers(tmp_path):
    from werest.estimation.labels import read_labels
    from werest.estimation.sampling import next_sheet

    s0 = numbered_sheet(tmp_path, "s0.csv", 0, ["u3", "u1"])
    s1 = numbered_sheet(tmp_path, "s1.csv", 1, ["u5"])
    s4 = numbered_sheet(tmp_path, "s4.csv", 4, ["u7", "u2"], draws=[2, 1], order=["0|2", "1"])
    labels = read_labels([s4, s1, s0], sheets_table())
    assert list(labels["sheet"]) == [0, 0, 1, 4, 4]
    assert list(labels["utt_id"]) == ["u1", "u3", "u5", "u2", "u7"]  # rows by utterance
    assert list(labels["draw_order"]) == ["1", "0", "0", "1", "0|2"]  # each with its places
    assert next_sheet(labels) == 5  # past the highest number, not the count of sheets
    assert labels.equals(read_labels([s0, s1, s4], sheets_table()))


def test_a_sheet_given_twice_counts_once_with_a_note(tmp_path, caplog):
    from werest.estimation.labels import read_labels

    s0 = numbered_sheet(tmp_path, "s0.csv", 0, ["u3", "u1"])
    s1 = numbered_sheet(tmp_path, "s1.csv", 1, ["u5"])
    once = read_labels([s0, s1], sheets_table())
    notes: list[str] = []
    assert read_labels([s0, s1, s0], sheets_table(), notes=notes).equals(once)
    assert notes == [f"labels: {s0} is given again; its labels count once"]
    copy = tmp_path / "copy.csv"
    copy.write_bytes(s0.read_bytes())
    notes = []
    assert read_labels([s0, copy, s1], sheets_table(), notes=notes).equals(once)
    assert notes == [f"labels: {copy} is the same sheet as {s0}; its labels count once"]
    with caplog.at_level("WARNING"):  # no list to take the note: the log says it
        read_labels([s0, s0], sheets_table())
    assert "is given again; its labels count once" in caplog.text


def test_two_sheets_of_one_number_are_refused_naming_both(tmp_path):
    from werest.errors import InputError
    from werest.estimation.labels import read_labels

    s0 = numbered_sheet(tmp_path, "s0.csv", 0, ["u3", "u1"])
    redraw = numbered_sheet(tmp_path, "redraw.csv", 0, ["u3", "u4"])
    with pytest.raises(InputError) as caught:
        read_labels([s0, redraw], sheets_table())
    message = str(caught.value)
    assert message.startswith(f"{redraw}, column 'sheet': dataset a: this is sheet 0")
    assert f"and so is {s0}" in message and "\n" not in message
    # sheet 0 of another dataset is another sheet: its own generator, its own draws
    other = numbered_sheet(tmp_path, "b0.csv", 0, ["u3", "u4"], dataset="b")
    assert sorted(read_labels([s0, other], sheets_table())["dataset"]) == ["a", "a", "b", "b"]


def test_sheets_without_a_number_keep_their_place_in_the_list(tmp_path):
    """A sheet from before the number was recorded is numbered by its place among the list's
    distinct sheets, as werest sample numbered the sheet after it; a recorded number that
    falls on such a place is refused too."""
    from werest.errors import InputError
    from werest.estimation.labels import read_labels

    old0 = numbered_sheet(tmp_path, "old0.csv", None, ["u3"])
    old1 = numbered_sheet(tmp_path, "old1.csv", None, ["u5"])
    new2 = numbered_sheet(tmp_path, "new2.csv", 2, ["u7"])
    labels = read_labels([old1, old0, old1, new2], sheets_table())
    assert list(zip(labels["utt_id"], labels["sheet"], strict=True)) == [
        ("u5", 0),
        ("u3", 1),
        ("u7", 2),
    ]
    assert (labels.loc[labels["sheet"] < 2, "draw_order"] == "").all()
    new1 = numbered_sheet(tmp_path, "new1.csv", 1, ["u7"])
    with pytest.raises(InputError, match="records no sheet number") as caught:
        read_labels([old0, old1, new1], sheets_table())
    assert str(old1) in str(caught.value) and str(new1) in str(caught.value)


@pytest.mark.parametrize(
    ("case", "fragments"),
    [
        ("deleted row", ["column 'draws'", "dataset a, sheet 0", "add up to 2", "drew 3"]),
        ("added draw", ["column 'draws'", "add up to 4", "drew 3"]),
        ("a census short of one", ["column 'draws'", "add up to 9", "drew 10"]),
        ("places and draws differ", ["row 1", "column 'draw_order'"]),
        ("a place twice", ["column 'draw_order'", "0 to 2"]),
        ("not a place", ["row 2", "column 'draw_order'", "whole numbers"]),
        ("sheet on some rows", ["row 2", "column 'sheet'", "some rows only"]),
        ("sheet not whole", ["row 1", "column 'sheet'", "not a whole number"]),
    ],
)
def test_a_sheet_that_does_not_hold_its_draws_is_refused(tmp_path, case, fragments):
    from werest.errors import InputError
    from werest.estimation.labels import read_labels

    utterances = ["u1", "u2", "u3"]
    made = {
        "deleted row": lambda: numbered_sheet(
            tmp_path, "s.csv", 0, utterances[:2], order=["2", "0"], budget=3
        ),
        "added draw": lambda: numbered_sheet(
            tmp_path, "s.csv", 0, utterances, draws=[1, 2, 1], budget=3
        ),
        "a census short of one": lambda: numbered_sheet(
            tmp_path,
            "s.csv",
            0,
            [f"u{i}" for i in range(9)],
            budget=20,
            strategy="random",
        ),
        "places and draws differ": lambda: numbered_sheet(
            tmp_path, "s.csv", 0, utterances[:2], draws=[2, 1], order=["0", "1|2"], budget=3
        ),
        "a place twice": lambda: numbered_sheet(
            tmp_path, "s.csv", 0, utterances, order=["0", "1", "1"]
        ),
        "not a place": lambda: numbered_sheet(
            tmp_path, "s.csv", 0, utterances, order=["0", "first", "2"]
        ),
    }
    if case in made:
        path = made[case]()
    else:
        path = numbered_sheet(tmp_path, "s.csv", 0, utterances)
        rows = pd.read_csv(path, dtype=str, keep_default_na=False)
        rows["sheet"] = ["1", "", "1"] if case == "sheet on some rows" else ["0.5", "0", "0"]
        rows.to_csv(path, index=False)
    with pytest.raises(InputError) as caught:
        read_labels([path], sheets_table())
    message = str(caught.value)
    assert message.startswith(str(path))
    for fragment in fragments:
        assert fragment in message, message


def test_a_census_and_a_winner_sheet_hold_their_draws(tmp_path):
    """What the draws must add up to: ``min(budget, n_utterances)`` without replacement (a
    census of N = 10 at budget 20 holds 10), ``budget`` for ``winner``'s draws with
    replacement (a redrawn utterance is one row of two draws)."""
    from werest.estimation.labels import read_labels

    census = numbered_sheet(
        tmp_path, "c.csv", 0, [f"u{i}" for i in range(10)], budget=20, strategy="random"
    )
    assert len(read_labels([census], sheets_table())) == 10
    winner = numbered_sheet(tmp_path, "w.csv", 1, ["u1", "u2"], draws=[2, 1], budget=3)
    assert read_labels([winner], sheets_table())["draws"].sum() == 3


def test_draw_places():
    from werest.estimation.sheets import draw_places

    assert draw_places("3|7") == [3, 7]
    assert draw_places("3.0") == [3]  # a spreadsheet's number
    assert draw_places(4) == [4]
    assert draw_places("") == [] and draw_places(float("nan")) == []
    for bad in ("x", "1|-2", "1.5"):
        with pytest.raises(ValueError):
            draw_places(bad)
