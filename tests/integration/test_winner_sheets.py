"""The label loop's sheets cannot break the decision's guarantee (issue 47), through the real
commands: ``werest sample strategy=winner`` records each sheet's number (``sheet``) and the
order of its draws (``draw_order``); ``werest estimate labels=[...]`` counts a sheet given
twice once, refuses two sheets of one number and a sheet with a row deleted, and reads the
sheets in the order of their numbers and each sheet's draws in the order they were made, so
neither the list's order nor the rows' order changes winner.json."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

from tests.helpers import assert_one_line_error, run_cli
from tests.integration.test_winner_loop import fill
from tests.unit.test_winner import synthetic_table
from werest.cli.main import main


def read_sheet(path) -> pd.DataFrame:
    return pd.read_csv(path, keep_default_na=False, dtype=str)


def sample(capsys, calls, out, *labels) -> str:
    """``werest sample strategy=winner budget=10``, after ``labels`` when there are some."""
    given = [f"labels=[{','.join(map(str, labels))}]"] if labels else []
    status, out_text, err = run_cli(
        capsys, "sample", f"input={calls}", "strategy=winner", "budget=10", f"out={out}", *given
    )
    assert status == 0, err
    return out_text


def estimate(capsys, calls, folder, *sheets) -> tuple[int, str, str]:
    return run_cli(
        capsys,
        "estimate",
        f"input={calls}",
        f"labels=[{','.join(map(str, sheets))}]",
        f"output_dir={folder}",
    )


def winner_json(capsys, calls, folder, *sheets) -> tuple[bytes, str]:
    """winner.json's bytes after ``werest estimate labels=[sheets]``, and the console."""
    status, out, err = estimate(capsys, calls, folder, *sheets)
    assert status == 0, err
    return (folder / "winner.json").read_bytes(), out


@pytest.fixture(scope="module")
def loop(tmp_path_factory):
    """Three rounds of the loop, each sheet filled: s0, then s1 after [s0], then s2 after
    [s0, s1] (three systems close enough that 30 labels do not decide)."""
    folder = tmp_path_factory.mktemp("sheets")
    full = synthetic_table([0.04, 0.05, 0.12], n=400, seed=11)  # the top two 1 point apart
    full.drop(columns=["reference"]).to_csv(folder / "calls.csv", index=False)
    truth = full.drop_duplicates("utt_id").set_index("utt_id")["reference"]
    sheets = []
    for number in range(3):
        sheet = folder / f"s{number}.csv"
        given = [f"labels=[{','.join(map(str, sheets))}]"] if sheets else []
        command = ["sample", f"input={folder / 'calls.csv'}", "strategy=winner", "budget=10"]
        assert main([*command, f"out={sheet}", *given]) == 0  # a module's fixture: no capsys
        fill(sheet, truth)
        sheets.append(sheet)
    return folder, truth, sheets


def test_every_sheet_records_its_number_and_its_draws_order(loop):
    _, _, sheets = loop
    for number, path in enumerate(sheets):
        rows = read_sheet(path)
        assert (rows["sheet"] == str(number)).all()
        draws = rows["draws"].astype(int)
        places = [int(p) for cell in rows["draw_order"] for p in cell.split("|")]
        assert sorted(places) == list(range(10)) == list(range(draws.sum()))
        assert (rows["draw_order"].str.count(r"\|") + 1 == draws).all()


def test_a_sheet_given_twice_counts_once(loop, capsys, tmp_path):
    """[s0, s0] is [s0]: the same winner.json (the repeat would double its draws), and the
    console says the repeat counted once, under the decision; a byte-identical copy too."""
    folder, _, (s0, *_) = loop
    calls = folder / "calls.csv"
    once, _ = winner_json(capsys, calls, tmp_path / "once", s0)
    twice, out = winner_json(capsys, calls, tmp_path / "twice", s0, s0)
    assert twice == once
    lines = out.splitlines()
    note = f"  note: labels: {s0} is given again; its labels count once"
    assert note in lines
    assert lines[0] == "Which system is best:" and lines.index(note) == 2  # under the decision
    copy = tmp_path / "copy.csv"
    shutil.copyfile(s0, copy)
    again, out = winner_json(capsys, calls, tmp_path / "copy", s0, copy)
    assert again == once
    assert f"labels: {copy} is the same sheet as {s0}; its labels count once" in out


def test_a_redraw_of_sheet_0_is_refused(loop, capsys, tmp_path):
    """Round 2 drawn without labels= is sheet 0 again, the same draws as s0; transcribed
    again (one transcript with its spaces written differently), it is refused beside s0 in
    one line naming both files."""
    folder, truth, (s0, *_) = loop
    calls = folder / "calls.csv"
    redraw = tmp_path / "round2.csv"
    sample(capsys, calls, redraw)
    first, second = read_sheet(s0), read_sheet(redraw)
    columns = ["utt_id", "draws", "draw_order", "sheet"]
    assert second[columns].equals(first[columns])  # the same draws: the trap
    fill(redraw, truth)
    rows = read_sheet(redraw)
    rows.loc[0, "reference"] = rows.loc[0, "reference"].replace(" ", "  ")
    rows.to_csv(redraw, index=False)
    status, _, err = estimate(capsys, calls, tmp_path / "e", s0, redraw)
    assert_one_line_error(status, err, "estimate", str(redraw), str(s0), "sheet 0", "'sheet'")
    assert not (tmp_path / "e").exists()


def test_the_sheets_order_and_their_rows_order_do_not_change_the_decision(loop, capsys, tmp_path):
    folder, _, sheets = loop
    calls = folder / "calls.csv"
    in_order, out = winner_json(capsys, calls, tmp_path / "a", *sheets)
    assert "undecided (" in out  # 30 draws: the interval exists, and depends on the order
    backwards, _ = winner_json(capsys, calls, tmp_path / "b", *reversed(sheets))
    assert backwards == in_order
    shuffled = []
    for k, path in enumerate(sheets):
        rows = read_sheet(path)
        copy = tmp_path / f"shuffled{k}.csv"
        rows.iloc[np.random.default_rng(k).permutation(len(rows))].to_csv(copy, index=False)
        shuffled.append(copy)
    rows_moved, _ = winner_json(capsys, calls, tmp_path / "c", *shuffled)
    assert rows_moved == in_order
    # the same sheets without the recorded columns (as before issue 47) are read in the
    # list's order and the rows' order, and the decision moves with them: what the
    # columns guard against
    old = []
    for k, path in enumerate([*sheets, *shuffled]):
        copy = tmp_path / f"old{k}.csv"
        read_sheet(path).drop(columns=["sheet", "draw_order"]).to_csv(copy, index=False)
        old.append(copy)
    old_in_order, _ = winner_json(capsys, calls, tmp_path / "d", *old[:3])
    assert winner_json(capsys, calls, tmp_path / "e", *reversed(old[:3]))[0] != old_in_order
    assert winner_json(capsys, calls, tmp_path / "f", *old[3:])[0] != old_in_order


def test_a_deleted_row_is_refused(loop, capsys, tmp_path):
    folder, _, (s0, s1, _) = loop
    calls = folder / "calls.csv"
    rows = read_sheet(s1)
    cut = tmp_path / "s1.csv"
    rows.drop(index=int(np.flatnonzero(rows["draws"] == "1")[0])).to_csv(cut, index=False)
    status, _, err = estimate(capsys, calls, tmp_path / "e", s0, cut)
    assert_one_line_error(status, err, "estimate", str(cut), "'draws'", "add up to 9", "10")
    assert not (tmp_path / "e").exists()


def test_two_identical_systems_are_good_before_any_transcript(capsys, tmp_path):
    """Two systems whose outputs are the same on every utterance: the difference is exactly
    0 everywhere, so `werest sample strategy=winner` says good with no label and draws
    nothing (it took 20 transcripts before issue 47)."""
    table = synthetic_table([0.05], n=60, seed=2)
    twins = pd.concat([table, table.assign(system="s0-copy")], ignore_index=True)
    calls = tmp_path / "twins.csv"
    twins.drop(columns=["reference"]).to_csv(calls, index=False)
    out = sample(capsys, calls, tmp_path / "s0.csv")
    assert "d: s0, good (0 labels): at most 0.00 points worse than the best" in out
    assert "every dataset is answered" in out  # nothing to transcribe: no sheet (issue 49)
    assert not (tmp_path / "s0.csv").exists()
