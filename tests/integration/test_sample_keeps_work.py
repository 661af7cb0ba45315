"""``werest sample`` never loses a transcript and never dead-ends (issue 49): it refuses, in
one line naming the file and a free name, to overwrite a sheet that holds transcripts (or a
file that is no sheet); it may redraw over a sheet nobody has filled; and once the question
is answered it writes nothing and says so."""

from __future__ import annotations

import pytest

from tests.helpers import assert_one_line_error, run_cli
from tests.integration.test_winner_loop import fill
from tests.unit.test_winner import synthetic_table
from werest.estimation.loop import free_sheet_name


@pytest.fixture()
def calls(tmp_path):
    """Two systems far apart (2 % and 40 % WER): a few labels decide."""
    full = synthetic_table([0.02, 0.40], n=120, seed=3)
    full.drop(columns=["reference"]).to_csv(tmp_path / "calls.csv", index=False)
    truth = full.drop_duplicates("utt_id").set_index("utt_id")["reference"]
    return tmp_path / "calls.csv", truth


def sample(capsys, table, out, *labels):
    given = [f"labels=[{','.join(map(str, labels))}]"] if labels else []
    return run_cli(
        capsys, "sample", f"input={table}", "strategy=winner", "budget=10", f"out={out}", *given
    )


def test_a_filled_sheet_is_never_overwritten(calls, capsys):
    table, truth = calls
    first = table.parent / "s0.csv"
    assert sample(capsys, table, first)[0] == 0
    fill(first, truth)
    before = first.read_bytes()
    status, _, err = sample(capsys, table, first)  # round 2 forgot out=s1.csv and labels=
    assert_one_line_error(status, err, "sample", str(first), "holds 10 transcript", "out=")
    assert f"out={table.parent / 's1.csv'}" in err  # a name no file has
    assert first.read_bytes() == before


def test_a_file_that_is_no_sheet_is_never_overwritten(calls, capsys):
    table, _ = calls
    notes = table.parent / "notes.csv"
    notes.write_text("my,own\nnotes,here\n", encoding="utf-8")
    status, _, err = sample(capsys, table, notes)
    assert_one_line_error(status, err, "sample", str(notes), "is not an empty sheet")
    assert notes.read_text(encoding="utf-8") == "my,own\nnotes,here\n"


def test_an_unfilled_sheet_may_be_drawn_again(calls, capsys):
    table, _ = calls
    first = table.parent / "s0.csv"
    assert sample(capsys, table, first)[0] == 0
    drawn = first.read_bytes()
    assert sample(capsys, table, first)[0] == 0  # the same draw, nothing transcribed
    assert first.read_bytes() == drawn


def test_after_the_answer_sample_writes_nothing_and_says_so(calls, capsys):
    table, truth = calls
    sheets = []
    for number in range(6):
        sheet = table.parent / f"s{number}.csv"
        status, out, err = sample(capsys, table, sheet, *sheets)
        assert status == 0, err
        if not sheet.exists():
            break
        fill(sheet, truth)
        sheets.append(sheet)
    else:
        pytest.fail("two systems 38 points apart were not decided in 50 labels")
    assert "every dataset is answered" in out and "no sheet written" in out
    assert "decided" in out
    assert not sheet.exists() and not sheet.with_name(f"{sheet.name}.config.yaml").exists()
    assert not sheet.with_suffix(".html").exists()
    assert sheets  # at least one sheet was needed


def test_free_names(tmp_path):
    (tmp_path / "s1.csv").write_text("x")
    (tmp_path / "s2.csv").write_text("x")
    assert free_sheet_name(tmp_path / "s1.csv") == tmp_path / "s3.csv"
    assert free_sheet_name(tmp_path / "to_label.csv") == tmp_path / "to_label-2.csv"
