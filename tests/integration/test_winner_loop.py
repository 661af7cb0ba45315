"""The label loop of docs/winner.md through the real commands: ``werest sample
strategy=winner labels=[...]`` and ``werest estimate labels=[...]`` round after round, on a
table whose truth is known (system s0 substitutes 2 % of words, s1 10 %, s2 25 %)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.helpers import assert_one_line_error, run_cli
from tests.unit.test_winner import synthetic_table


@pytest.fixture(scope="module")
def loop_table(tmp_path_factory):
    folder = tmp_path_factory.mktemp("loop")
    full = synthetic_table([0.02, 0.10, 0.25], n=400, seed=7)
    full.drop(columns=["reference"]).to_csv(folder / "calls.csv", index=False)
    truth = full.drop_duplicates("utt_id").set_index("utt_id")["reference"]
    return folder, truth


def fill(sheet, truth) -> int:
    rows = pd.read_csv(sheet, keep_default_na=False, dtype={"utt_id": str})
    empty = rows["reference"].astype(str).str.strip() == ""
    rows.loc[empty, "reference"] = rows.loc[empty, "utt_id"].map(truth)
    rows.to_csv(sheet, index=False)
    return int(empty.sum())


def decision_after(capsys, calls, sheets, folder) -> tuple[dict, str]:
    """``werest estimate labels=[sheets]``: its winner.json entry and its console."""
    status, out, err = run_cli(
        capsys,
        "estimate",
        f"input={calls}",
        f"labels=[{','.join(map(str, sheets))}]",
        f"output_dir={folder}",
    )
    assert status == 0, err
    return json.loads((folder / "winner.json").read_text())[0], out


def test_the_loop_names_the_best_system_and_reuses_every_label(loop_table, capsys):
    folder, truth = loop_table
    calls = folder / "calls.csv"
    status, out, err = run_cli(capsys, "estimate", f"input={calls}", f"output_dir={folder / 'e'}")
    assert status == 0, err
    assert out.startswith("Which system is best:")
    summary = json.loads((folder / "e" / "summary.json").read_text())
    assert all(isinstance(row["contender"], bool) for row in summary)
    entry = json.loads((folder / "e" / "winner.json").read_text())[0]
    assert entry["status"] == "undecided" and entry["labels_used"] == 0
    sheets, entry, transcribed = [], None, 0
    for number in range(12):
        sheet = folder / f"s{number}.csv"
        given = [f"labels=[{','.join(map(str, sheets))}]"] if sheets else []
        status, out, err = run_cli(
            capsys,
            "sample",
            f"input={calls}",
            "strategy=winner",
            "budget=10",
            f"out={sheet}",
            *given,
        )
        assert status == 0, err
        rows = pd.read_csv(sheet, keep_default_na=False, dtype={"utt_id": str})
        assert (rows["strategy"] == "winner").all() and rows["draws"].sum() == 10
        labelled = {u for s in sheets for u in pd.read_csv(s, dtype={"utt_id": str})["utt_id"]}
        redrawn = rows["utt_id"].isin(labelled)
        assert (rows.loc[redrawn, "reference"] != "").all()  # filled in: no new label needed
        assert (rows.loc[~redrawn, "reference"] == "").all()
        transcribed += fill(sheet, truth)
        sheets.append(sheet)
        entry, out = decision_after(capsys, calls, sheets, folder / "e")
        assert entry["labels_used"] == transcribed  # distinct utterances, each once
        if entry["status"] != "undecided":
            break
    assert entry["status"] in ("decided", "good") and entry["winner"] == "s0"
    assert entry["low"] <= entry["difference"] <= entry["high"]
    assert entry["low"] > -entry["margin"] and entry["regret_bound"] <= entry["margin"]
    assert f"s0, {entry['status']} (" in out


def first_sheet(capsys, calls, folder, truth):
    """``werest sample strategy=winner budget=10 out=<folder>/s0.csv``, filled in."""
    sheet = folder / "s0.csv"
    status, _, err = run_cli(
        capsys, "sample", f"input={calls}", "strategy=winner", "budget=10", f"out={sheet}"
    )
    assert status == 0, err
    fill(sheet, truth)
    return sheet


def test_a_sheet_drawn_from_another_table_is_refused(loop_table, capsys, tmp_path):
    folder, truth = loop_table
    calls = folder / "calls.csv"
    sheet = first_sheet(capsys, calls, tmp_path, truth)
    rows = pd.read_csv(sheet, keep_default_na=False, dtype={"utt_id": str})
    rows.loc[0, "selection_probability"] *= 2
    rows.to_csv(sheet, index=False)
    status, _, err = run_cli(
        capsys, "estimate", f"input={calls}", f"labels=[{sheet}]", f"output_dir={tmp_path / 'e'}"
    )
    assert_one_line_error(status, err, "estimate", "selection_probability", "does not follow")
    assert not (tmp_path / "e").exists()


def test_two_sheets_that_disagree_on_a_transcript_are_refused(loop_table, capsys, tmp_path):
    folder, truth = loop_table
    calls = folder / "calls.csv"
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    status, _, err = run_cli(
        capsys, "sample", f"input={calls}", "strategy=random", "budget=5", f"out={first}"
    )
    assert status == 0, err
    fill(first, truth)
    rows = pd.read_csv(first, keep_default_na=False, dtype={"utt_id": str})
    rows.loc[[0], "reference"] = "something else entirely"
    # a table of one label made by hand (no sheet number: not a part of a.csv's draw)
    rows.iloc[[0]].drop(columns=["sheet", "draw_order"]).to_csv(second, index=False)
    status, _, err = run_cli(
        capsys,
        "estimate",
        f"input={calls}",
        f"labels=[{first},{second}]",
        f"output_dir={tmp_path / 'e'}",
    )
    assert_one_line_error(status, err, "estimate", "b.csv", "row 1", "earlier sheet")


def test_a_random_sheet_after_labels_draws_only_unlabelled_utterances(loop_table, capsys, tmp_path):
    folder, truth = loop_table
    calls = folder / "calls.csv"
    first, second = tmp_path / "r0.csv", tmp_path / "r1.csv"
    assert (
        run_cli(capsys, "sample", f"input={calls}", "strategy=random", "budget=50", f"out={first}")[
            0
        ]
        == 0
    )
    fill(first, truth)
    status, _, err = run_cli(
        capsys,
        "sample",
        f"input={calls}",
        "strategy=random",
        "budget=50",
        f"labels=[{first}]",
        f"out={second}",
    )
    assert status == 0, err
    before = set(pd.read_csv(first, dtype={"utt_id": str})["utt_id"])
    after = pd.read_csv(second, keep_default_na=False, dtype={"utt_id": str})
    assert len(after) == 50 and not before & set(after["utt_id"])
    fill(second, truth)
    entry, _ = decision_after(capsys, calls, [first, second], tmp_path / "e")
    assert entry["labels_used"] == entry["draws"] == 100  # fresh uniform draws, none repeated


def test_the_asymptotic_bounds_say_what_they_assume(loop_table, capsys, tmp_path):
    """`winner.bounds=asymptotic` is an option, never the default: under its decision the
    console prints its caveat; the default (betting) prints none."""
    folder, truth = loop_table
    calls = folder / "calls.csv"
    sheet = first_sheet(capsys, calls, tmp_path, truth)
    said = {}
    for bounds in ("asymptotic", "betting"):
        status, out, err = run_cli(
            capsys,
            "estimate",
            f"input={calls}",
            f"labels=[{sheet}]",
            f"winner.bounds={bounds}",
            f"output_dir={tmp_path / bounds}",
        )
        assert status == 0, err
        said[bounds] = out
    assert (
        "note: winner.bounds=asymptotic assumes the draws have already seen the tail"
        in (said["asymptotic"])
    )
    assert "assumes the draws" not in said["betting"]
