"""Sheets as spreadsheets save them (issue 49), through the real commands: a sheet saved by
Excel or LibreOffice (a byte-order mark, CRLF, ``;`` or tab between the cells, decimal
commas, rows in another order, extra columns, empty rows below, probabilities rounded, or
an ``.xlsx`` workbook) gives ``werest estimate labels=[...]`` the winner.json of the plain
CSV, byte for byte; every other deviation is refused with exit status 2 and one line
naming the file, the row and the column."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.helpers import assert_one_line_error, run_cli
from tests.integration.test_winner_loop import fill
from tests.integration.test_winner_sheets import (
    estimate,
    loop,  # noqa: F401  (a fixture)
    read_sheet,
    winner_json,
)
from tests.unit.test_winner import synthetic_table
from werest.cli.main import main

FRACTIONS = ["expected_draws", "inclusion_probability", "selection_probability", "uniform_share"]


def text(rows: pd.DataFrame, sep: str = ",") -> str:
    return rows.to_csv(index=False, sep=sep)


def german(rows: pd.DataFrame) -> bytes:
    """As Excel saves "CSV UTF-8" in a German locale: a byte-order mark, CRLF, ';' between
    the cells and a decimal comma in every fraction."""
    rows = rows.copy()
    for column in FRACTIONS:
        rows[column] = rows[column].str.replace(".", ",", regex=False)
    return ("\ufeff" + text(rows, ";")).replace("\n", "\r\n").encode("utf-8")


def rounded(rows: pd.DataFrame, digits: int) -> pd.DataFrame:
    """The fractions as a spreadsheet shows and saves them: ``digits`` significant digits
    in scientific notation (0.000123456789 as 1.23457E-04 for 6)."""
    rows = rows.copy()
    for column in ("expected_draws", "inclusion_probability", "selection_probability"):
        rows[column] = rows[column].astype(float).map(lambda x: f"{x:.{digits - 1}E}")
    return rows


def empty_rows(rows: pd.DataFrame, sep: str, n: int = 3) -> str:
    """What a spreadsheet saves below the sheet: rows of empty cells (white space in one)."""
    return (sep * (len(rows.columns) - 1) + "\n") * (n - 1) + " " + sep * 2 + "\n"


def saved(path, rows: pd.DataFrame, how: str):
    """``rows`` (a sheet read as text) saved the way ``how`` says; the file's path."""
    if how == "xlsx":
        path = path.with_suffix(".xlsx")
        numbers = rows.copy()  # as a spreadsheet holds them: numbers as numbers
        for column in [*FRACTIONS, "draws", "n_utterances", "budget", "sheet"]:
            numbers[column] = pd.to_numeric(numbers[column])
        numbers.to_excel(path, index=False, engine="openpyxl")
        return path
    data = {
        "bom, crlf, ';' and decimal commas": lambda: german(rows),
        "tab": lambda: text(rows, "\t"),
        "rows reversed": lambda: text(rows.iloc[::-1]),
        "extra columns": lambda: text(
            rows.assign(notes="checked, twice", who="ann")[["notes", *rows.columns, "who"]]
        ),
        "empty rows below": lambda: text(rows) + empty_rows(rows, ",") + "\n",
        "empty rows below, ';'": lambda: text(rows, ";") + empty_rows(rows, ";"),
        "6 significant digits": lambda: text(rounded(rows, 6)),
        "4 significant digits": lambda: text(rounded(rows, 4)),
    }[how]()
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


VARIANTS = [
    "bom, crlf, ';' and decimal commas",
    "tab",
    "rows reversed",
    "extra columns",
    "empty rows below",
    "empty rows below, ';'",
    "6 significant digits",
    "4 significant digits",
    "xlsx",
]


@pytest.fixture(scope="module")
def plain(loop, tmp_path_factory):  # noqa: F811
    """winner.json of the three sheets as werest sample wrote them."""
    folder, _, sheets = loop
    out = tmp_path_factory.mktemp("plain") / "out"
    given = f"labels=[{','.join(map(str, sheets))}]"
    assert main(["estimate", f"input={folder / 'calls.csv'}", given, f"output_dir={out}"]) == 0
    return (out / "winner.json").read_bytes()


@pytest.mark.parametrize("how", VARIANTS)
def test_a_sheet_as_a_spreadsheet_saves_it_gives_the_same_winner_json(
    loop,  # noqa: F811
    plain,
    capsys,
    tmp_path,
    how,
):
    """Every sheet of the loop saved the same way: the decision is the plain CSV's, byte
    for byte (winner.json recomputes the design from the table; a rounded probability only
    has to match it to 0.1 %)."""
    folder, _, sheets = loop
    copies = [saved(tmp_path / f"s{k}.csv", read_sheet(path), how) for k, path in enumerate(sheets)]
    again, _ = winner_json(capsys, folder / "calls.csv", tmp_path / "out", *copies)
    assert again == plain


def test_werest_sample_reads_an_xlsx_sheet(loop, capsys, tmp_path):  # noqa: F811
    """``werest sample labels=[s0.xlsx]`` draws the sheet ``labels=[s0.csv]`` draws: sheet 1,
    the same draws."""
    folder, _, (s0, s1, _) = loop
    workbook = saved(tmp_path / "s0.csv", read_sheet(s0), "xlsx")
    out = tmp_path / "next.csv"
    status, _, err = run_cli(
        capsys,
        "sample",
        f"input={folder / 'calls.csv'}",
        "strategy=winner",
        "budget=10",
        f"out={out}",
        f"labels=[{workbook}]",
    )
    assert status == 0, err
    columns = ["utt_id", "draws", "draw_order", "sheet"]
    drawn, expected = read_sheet(out), read_sheet(s1)
    assert drawn[columns].equals(expected[columns])
    q = drawn["selection_probability"].astype(float)
    assert np.allclose(q, expected["selection_probability"].astype(float), rtol=1e-12)


def test_one_sheet_as_csv_and_as_xlsx_counts_once(loop, plain, capsys, tmp_path):  # noqa: F811
    """The same sheet saved once as CSV and once as .xlsx (other bytes, the same rows) counts
    once, and the console says so under the decision."""
    folder, _, (s0, s1, s2) = loop
    workbook = saved(tmp_path / "s0.csv", read_sheet(s0), "xlsx")
    again, out = winner_json(capsys, folder / "calls.csv", tmp_path / "o", s0, workbook, s1, s2)
    assert again == plain
    note = f"labels: {workbook} is the same sheet as {s0} (the same rows); its labels count once"
    assert f"  note: {note}" in out.splitlines()


def deviation(rows: pd.DataFrame, case: str) -> pd.DataFrame:
    rows = rows.copy()
    if case == "leader":
        rows.loc[3, "leader"] = "s1" if rows.loc[3, "leader"] != "s1" else "s2"
    elif case == "strategy":
        rows.loc[3, "strategy"] = "random"
    elif case == "uniform_share":
        rows.loc[3, "uniform_share"] = "0.3"
    elif case == "budget":
        rows.loc[3, "budget"] = "12"
    elif case == "expected_draws":
        rows.loc[3, "expected_draws"] = str(float(rows.loc[3, "expected_draws"]) * 1.5)
    elif case == "selection_probability":
        rows.loc[3, "selection_probability"] = str(
            float(rows.loc[3, "selection_probability"]) * 1.5
        )
    elif case == "selection_probability to 2 digits":  # beyond the tolerance
        rows["selection_probability"] = rows["selection_probability"].map(
            lambda x: f"{float(x):.1E}"
        )
    elif case == "draws":
        rows.loc[3, "draws"] = str(int(rows.loc[3, "draws"]) + 1)
    elif case == "draw_order":
        rows.loc[3, "draw_order"] = rows.loc[2, "draw_order"]
    elif case == "sheet":
        rows.loc[3, "sheet"] = "7"
    elif case == "reference renamed":
        rows = rows.rename(columns={"reference": "transcript"})
    elif case == "duplicated, two transcripts":
        rows = pd.concat([rows, rows.iloc[[3]].assign(reference="other words")], ignore_index=True)
    elif case == "utterance not in the input":
        rows.loc[3, "utt_id"] = "u9999"
    elif case == "an empty row among the others":
        empty = pd.DataFrame([[""] * len(rows.columns)], columns=rows.columns)
        rows = pd.concat([rows.iloc[:3], empty, rows.iloc[3:]], ignore_index=True)
    return rows


#: case → (the row named, the column named; None: the last row, the one appended)
DEVIATIONS = {
    "leader": ("row 4", "'leader'"),
    "strategy": ("row 4", "'strategy'"),
    "uniform_share": ("row 4", "'uniform_share'"),
    "budget": ("row 4", "'budget'"),
    "expected_draws": ("row 4", "'expected_draws'"),
    "selection_probability": ("row 4", "'selection_probability'"),
    "selection_probability to 2 digits": ("row ", "'selection_probability'"),
    "draws": ("row 4", "'draws'"),
    "draw_order": ("row 4", "'draw_order'"),
    "sheet": ("row 4", "'sheet'"),
    "reference renamed": ("the header", "'reference'"),
    "duplicated, two transcripts": (None, "'utt_id'"),  # None: the sheet's last row
    "utterance not in the input": ("row 4", "'utt_id'"),
    "an empty row among the others": ("row 4", "'dataset'"),
}


@pytest.mark.parametrize("saved_as", ["csv", "xlsx"])
@pytest.mark.parametrize("case", list(DEVIATIONS))
def test_each_deviation_is_one_line_naming_file_row_and_column(
    loop,  # noqa: F811
    capsys,
    tmp_path,
    case,
    saved_as,
):
    folder, _, (s0, s1, _) = loop
    rows = deviation(read_sheet(s1), case)
    path = tmp_path / "s1.csv"
    if saved_as == "xlsx":
        path = path.with_suffix(".xlsx")
        rows.to_excel(path, index=False, engine="openpyxl")
    else:
        rows.to_csv(path, index=False)
    status, _, err = estimate(capsys, folder / "calls.csv", tmp_path / "e", s0, path)
    row, column = DEVIATIONS[case]
    row = f"row {len(rows)}, " if row is None else row  # rows are numbered from 1
    assert_one_line_error(status, err, "estimate", f"{path}, ", row, f"column {column}")
    assert not (tmp_path / "e").exists()


def test_a_sheet_drawn_from_another_input_is_refused_naming_file_row_and_column(
    loop,  # noqa: F811
    capsys,
    tmp_path,
):
    """The same utterances and systems, other transcripts: the winner sheet drawn from them
    names the first row whose recorded probability this input does not give."""
    folder, truth, _ = loop
    other = synthetic_table([0.05, 0.06, 0.20], n=400, seed=12)
    other.drop(columns=["reference"]).to_csv(tmp_path / "other.csv", index=False)
    sheet = tmp_path / "theirs.csv"
    status, _, err = run_cli(
        capsys,
        "sample",
        f"input={tmp_path / 'other.csv'}",
        "strategy=winner",
        "budget=10",
        f"out={sheet}",
    )
    assert status == 0, err
    fill(sheet, truth)
    status, _, err = estimate(capsys, folder / "calls.csv", tmp_path / "e", sheet)
    line = assert_one_line_error(
        status, err, "estimate", f"{sheet}, row ", "column 'selection_probability'", "another input"
    )
    assert "does not follow from this input table" in line


def test_a_winner_sheet_of_two_datasets_records_each_ones_inclusion(capsys, tmp_path):
    """inclusion_probability is 1 − (1 − q)^budget within each dataset (it took the draws of
    every dataset of the sheet together), so the check of a changed design column can tell
    which of selection_probability and expected_draws changed."""
    from werest.demo import demo_table_path

    out = tmp_path / "s.csv"
    status, _, err = run_cli(
        capsys,
        "sample",
        f"input={demo_table_path()}",
        "strategy=winner",
        "budget=4",
        f"out={out}",
        f"cache_dir={tmp_path / 'cache'}",
    )
    assert status == 0, err
    rows = pd.read_csv(out)
    assert rows["dataset"].nunique() == 2
    assert (rows.groupby("dataset")["draws"].sum() == 4).all()
    q = rows["selection_probability"]
    assert np.allclose(rows["inclusion_probability"], 1 - (1 - q) ** 4)
