"""A labelling sheet as a spreadsheet saves it (werest.estimation.sheets): the separator
sniffed from the header, decimal commas, empty rows below, .xlsx cells as text, design
numbers within the stated tolerance, and the errors that name file, row and column."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.unit.test_labels import numbered_sheet, sheets_table
from werest.errors import InputError
from werest.estimation.labels import read_labels
from werest.estimation.sheets import (
    DESIGN_RTOL,
    as_numbers,
    design_matches,
    read_sheet_file,
    sniff_separator,
)

REQUIRED = ("dataset", "utt_id", "reference")


@pytest.mark.parametrize(
    ("text", "separator"),
    [
        ('dataset;utt_id;reference\r\na;u1;"well, yes, no"\r\n', ";"),
        ("dataset\tutt_id\treference\na\tu1\tone, two, three, four\n", "\t"),
        ('dataset,utt_id,reference\na,u1,"one; two; three"\n', ","),
        ('"notes, misc";dataset;utt_id;reference\n', ";"),  # a ',' in a quoted header cell
        ("\ufeffdataset;utt_id;reference\n", ";"),
        ("reference\nhello\n", ","),  # one column: the suffix's separator
    ],
)
def test_the_separator_is_sniffed_from_the_header(text, separator):
    assert sniff_separator(text, REQUIRED, ",") == separator


def test_numbers_as_spreadsheets_write_them():
    cells = pd.Series(["0,0123", "1.23457E-04", " 3 ", "", None, "-0,5", "1,2,3", "often"])
    numbers = as_numbers(cells)
    assert numbers.iloc[:3].tolist() == [0.0123, 1.23457e-04, 3.0]
    assert numbers.iloc[5] == -0.5
    assert numbers.iloc[[3, 4, 6, 7]].isna().all()


def test_the_tolerance_takes_four_significant_digits():
    p = 0.000123456789
    assert design_matches(float(f"{p:.5E}"), p)  # 1.23457E-04
    assert design_matches(float(f"{p:.3E}"), p)  # 1.235E-04
    assert not design_matches(float(f"{p:.1E}"), p)  # 1.2E-04: 3 % off
    assert DESIGN_RTOL == 1e-3


def test_empty_rows_below_are_dropped_and_a_quoted_cell_that_spans_lines_is_kept(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text('dataset;utt_id;reference\na;u1;"two\nlines\n;;"\n;;\n  ;  ;\n\n')
    rows = read_sheet_file(path, REQUIRED)
    assert rows["reference"].tolist() == ["two\nlines\n;;"]
    path.write_text("dataset;utt_id;reference;x\r\na;u1;a line\u2028;\r\n;;;\r\n")
    assert read_sheet_file(path, REQUIRED)["reference"].tolist() == ["a line\u2028"]


def test_an_xlsx_sheet_is_read_as_text_numbers_exactly(tmp_path):
    """IDs that look like numbers stay strings (stored as text), a transcript that is a number
    stays its text, and a double comes back as the same double; formatted empty rows below
    the sheet are ignored."""
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["dataset", "utt_id", "reference", "expected_draws", "draws"])
    sheet.append(["a", "0073", "42", 0.000123456789012345, 1])
    sheet.append(["a", "0074", "words", 1 / 3, 2.0])
    sheet["A9"].number_format = "0.00"  # a formatted, empty cell further down
    sheet["B12"] = ""
    path = tmp_path / "s.xlsx"
    book.save(path)
    rows = read_sheet_file(path, REQUIRED)
    assert rows["utt_id"].tolist() == ["0073", "0074"]
    assert rows["reference"].tolist() == ["42", "words"]
    assert float(rows["expected_draws"].iat[0]) == 0.000123456789012345
    assert float(rows["expected_draws"].iat[1]) == 1 / 3
    assert rows["draws"].tolist() == ["1", "2"]


@pytest.mark.parametrize(
    ("name", "data", "fragment"),
    [
        ("s.xlsx", b"dataset,utt_id,reference\n", "not a readable .xlsx workbook"),
        ("s.ods", b"PK\x03\x04", "save it as one"),
        ("s.xls", b"\xd0\xcf\x11\xe0", "as .xlsx or as CSV"),
    ],
)
def test_a_workbook_that_cannot_be_read_is_one_error_naming_the_file(
    tmp_path, name, data, fragment
):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError) as caught:
        read_sheet_file(path, REQUIRED)
    assert str(caught.value).startswith(f"{path}: ")
    assert fragment in str(caught.value)


def test_a_renamed_reference_column_is_named_with_its_new_name(tmp_path):
    path = numbered_sheet(tmp_path, "s.csv", 0, ["u1", "u2"])
    rows = pd.read_csv(path, dtype=str, keep_default_na=False)
    rows.rename(columns={"reference": "Transcript "}).to_csv(path, index=False)
    with pytest.raises(InputError) as caught:
        read_labels([path], sheets_table())
    message = str(caught.value)
    assert message.startswith(f"{path}, column 'reference': missing required column")
    assert "'Transcript'" in message and "header" in message


def test_an_id_a_spreadsheet_made_a_number_is_named(tmp_path):
    table = sheets_table().assign(utt_id=lambda t: t["utt_id"].str.replace("u", "00"))
    path = tmp_path / "s.csv"
    pd.DataFrame({"dataset": ["a"], "utt_id": ["3"], "reference": ["words"]}).to_csv(
        path, index=False
    )
    with pytest.raises(InputError) as caught:
        read_labels([path], table)
    message = str(caught.value)
    assert message.startswith(f"{path}, row 1, column 'utt_id'")
    assert "the input has '003'" in message


def test_rows_keep_their_file_and_row(tmp_path):
    """read_labels sorts a numbered sheet's rows by utterance; each keeps where it was read,
    for the errors the decision finds later."""
    path = numbered_sheet(tmp_path, "s.csv", 0, ["u3", "u1", "u2"])
    labels = read_labels([path], sheets_table())
    assert labels["utt_id"].tolist() == ["u1", "u2", "u3"]
    assert labels["sheet_row"].tolist() == [2, 3, 1]
    assert (labels["sheet_file"] == str(path)).all()


def test_a_winner_design_of_unknown_systems_names_the_leader(tmp_path):
    from werest.estimation.sheets import check_winner_design

    rows = pd.DataFrame(
        {
            "leader": ["x", "x"],
            "rivals": ["s1", "s1"],
            "selection_probability": [0.1, 0.2],
            "sheet_file": "s.csv",
            "sheet_row": [2, 1],
        }
    )
    with pytest.raises(InputError, match=r"^s\.csv, row 2, column 'leader': .*'x'"):
        check_winner_design(rows, None, "d", ["x"])
    check_winner_design(rows, np.array([0.10005, 0.2]), "d", [])  # within the tolerance
    with pytest.raises(InputError, match=r"^s\.csv, row 1, column 'selection_probability'"):
        check_winner_design(rows, np.array([0.1, 0.21]), "d", [])
