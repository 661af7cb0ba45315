"""A labelling sheet as a spreadsheet saves it: the file read, its design checked.

A person fills the sheet ``werest sample`` writes, often in Excel or LibreOffice, and saves
it the way the spreadsheet does. :func:`read_sheet_file` reads what comes back:

* CSV whatever the spreadsheet chose: UTF-8 with or without a byte-order mark, CRLF or LF
  line endings, ``,``, ``;`` or tab between the cells (:func:`sniff_separator`, from the
  header line: a ``,`` inside a quoted reference does not count), extra columns, rows in
  any order, and the empty rows a spreadsheet leaves at the end (ignored);
* ``.xlsx`` workbooks (the first worksheet, through openpyxl), every cell read as text, as
  the CSV path does: an ID that looks like a number stays a string, and a number comes
  back as the shortest text that is the same double (``0.0547629621456003``), so it reads
  back exactly;
* numbers written with a decimal comma (``0,0123``, as ``;`` locales write them) or
  re-formatted (``1.23457E-04``) in the design's fractional columns (:func:`as_numbers`).

A design number a spreadsheet rounded is accepted where it matches the design to within
:data:`DESIGN_RTOL` (a relative 0.1 %: four significant digits). Every other deviation is
one :class:`werest.errors.InputError` naming the file, the row and the column
(:func:`check_sheet_design`, :func:`check_winner_design`).
"""

from __future__ import annotations

import csv
import difflib
import re
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from werest import logs
from werest.columns import ORDER_SEPARATOR, SHEET_COLUMNS
from werest.errors import InputError
from werest.ingest.table import (
    check_readable,
    decode_utf8,
    parse_csv,
    read_table,
    validate_table,
)

#: the files read as spreadsheets' sheets; any other name is a table (``read_table``)
TEXT_SUFFIXES = {".csv": ",", ".tsv": "\t"}
WORKBOOK_SUFFIXES = (".xlsx", ".xlsm")
#: the workbooks that are not read: what to save them as instead
OTHER_WORKBOOKS = (".xls", ".ods", ".numbers")
#: the separators a spreadsheet writes between cells
SEPARATORS = (",", ";", "\t")

#: a design number recorded on a sheet matches the design's when they agree to this relative
#: tolerance: a spreadsheet that shows (and saves) 0.000123456789 as 1.23457E-04, or with 4
#: significant digits, still matches; the design of another input does not
DESIGN_RTOL = 1e-3

#: the design's fractional columns: the ones a spreadsheet rounds, or writes with a comma
FRACTIONS = ("expected_draws", "inclusion_probability", "selection_probability", "uniform_share")


# --------------------------------------------------------------------------- reading


def read_sheet_file(path: str | Path, required: tuple[str, ...]) -> pd.DataFrame:
    """A sheet file as :func:`werest.ingest.table.validate_table` rows, every cell text
    (module docstring); rows numbered from 1 after the header, as in the file. A file that
    is neither CSV/TSV nor ``.xlsx`` is read as a table (``.jsonl``, ``.parquet``).

    Raises
    ------
    InputError : naming the file: unreadable, not UTF-8, not a workbook, a required column
        missing from the header (naming the column, and the renamed one where it can tell),
        and the rows' own problems (:func:`werest.ingest.table.validate_table`).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in OTHER_WORKBOOKS:
        raise InputError(
            f"a {suffix} workbook: werest reads a sheet saved as .xlsx or as CSV; save it as one",
            path=path,
        )
    if suffix not in TEXT_SUFFIXES and suffix not in WORKBOOK_SUFFIXES:
        return read_table(path, required=required)
    check_readable(path)
    with logs.stage(f"read ({path.name})"):
        if suffix in WORKBOOK_SUFFIXES:
            frame = _read_workbook(path)
        else:
            frame = _read_text(path, TEXT_SUFFIXES[suffix], required)
        frame = without_trailing_empty_rows(frame)
        check_header(frame, path, required)
        return validate_table(frame, source=path, required=required)


def _read_text(path: Path, default: str, required: tuple[str, ...]) -> pd.DataFrame:
    text = decode_utf8(path)  # a byte-order mark is dropped
    if not text.strip():
        raise InputError("the file is empty", path=path)
    separator = sniff_separator(text, required, default)
    return parse_csv(path, _trim_empty_lines(text, separator), separator)


def sniff_separator(text: str, required: tuple[str, ...] = (), default: str = ",") -> str:
    """The separator of CSV ``text``, from its header line alone (the first line: a ``,``
    in a quoted reference further down cannot sway it): of ``,``, ``;`` and tab, the one
    under which the header holds the most ``required`` columns, then the most columns;
    ``default`` on a tie."""
    header = text.lstrip("\ufeff").split("\n", 1)[0].rstrip("\r")
    wanted = set(required)

    def score(separator: str) -> tuple[int, int]:
        try:
            cells = next(csv.reader([header], delimiter=separator), [])
        except csv.Error:
            return (-1, -1)
        return (len(wanted & {c.strip() for c in cells}), len(cells))

    candidates = [default, *(s for s in SEPARATORS if s != default)]
    return max(candidates, key=score)  # max keeps the first of equals: the default


def _trim_empty_lines(text: str, separator: str) -> str:
    """``text`` without the lines at its end that hold nothing but separators and white
    space (the empty rows a spreadsheet saves below the last one). A line with a quote is
    kept: it may close a quoted cell that spans lines. Lines end at ``\n`` only (a
    transcript may hold U+2028, which ``str.splitlines`` would cut at)."""
    lines = text.split("\n")
    while lines and '"' not in lines[-1] and not lines[-1].replace(separator, "").strip():
        lines.pop()
    return "\n".join(lines) + "\n"


def _read_workbook(path: Path) -> pd.DataFrame:
    """The first worksheet of an ``.xlsx`` workbook, every cell as text ("" when empty)."""
    try:
        import openpyxl  # noqa: F401  (pandas' engine: say so if it is missing)
    except ImportError:  # pragma: no cover - a core dependency
        raise InputError(
            "reading an .xlsx sheet needs openpyxl: pip install openpyxl", path=path
        ) from None
    from openpyxl.utils.exceptions import InvalidFileException

    try:
        frame = pd.read_excel(
            path,
            sheet_name=0,
            dtype=str,
            keep_default_na=False,
            na_filter=False,
            engine="openpyxl",
        )
    except (zipfile.BadZipFile, InvalidFileException, KeyError, ValueError, OSError) as error:
        message = " ".join(str(error).split()) or type(error).__name__
        raise InputError(
            f"not a readable .xlsx workbook ({message}): save the sheet again as .xlsx or CSV",
            path=path,
        ) from None
    return frame.rename(columns=str).fillna("").astype(str)


def without_trailing_empty_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` without its last rows whose every cell is empty (white space aside): what a
    spreadsheet leaves below the sheet. An empty row among the others stays (the row's
    own error names it)."""
    if frame.empty:
        return frame
    text = frame.astype(object).where(frame.notna(), "").astype(str)
    filled = np.flatnonzero((text.apply(lambda c: c.str.strip()) != "").any(axis=1).to_numpy())
    last = int(filled[-1]) + 1 if len(filled) else 0
    return frame.iloc[:last]


def check_header(frame: pd.DataFrame, path: Path, required: tuple[str, ...]) -> None:
    """InputError naming the file and the column when the header lacks a required column;
    where one column of the header is not a sheet's (a renamed one), it is named too."""
    columns = [str(c).strip() for c in frame.columns]
    missing = [c for c in required if c not in columns]
    if not missing:
        return
    column = missing[0]
    known = {*SHEET_COLUMNS, *required, "skip"}
    strangers = [c for c in columns if c not in known and not c.startswith("Unnamed:")]
    close = difflib.get_close_matches(column, strangers, n=1, cutoff=0.6)
    guess = close[0] if close else strangers[0] if len(strangers) == 1 else None
    shown = ", ".join(columns[:8]) + (", …" if len(columns) > 8 else "")
    hint = (
        f"; is {guess!r} it, renamed? name it {column} again"
        if guess is not None
        else f" (its columns: {shown})"
    )
    raise InputError(
        f"missing required column: the header (the first row) has no {column!r}{hint}; werest "
        "reads the sheet's columns by their names",
        path=path,
        column=column,
    )


_DECIMAL_COMMA = re.compile(r"^([+-]?\d*),(\d+(?:[eE][+-]?\d+)?)$")


def as_numbers(values: pd.Series) -> pd.Series:
    """A design column's cells as floats (NaN where blank or not a number): white space
    aside, a decimal comma (``0,0123``) read as a point, scientific notation
    (``1.23457E-04``) as such."""
    text = values.map(lambda v: "" if v is None or (isinstance(v, float) and np.isnan(v)) else v)
    text = text.astype(str).str.strip().str.replace(_DECIMAL_COMMA, r"\1.\2", regex=True)
    return pd.to_numeric(text.where(text != ""), errors="coerce")


def read_design_numbers(labels: pd.DataFrame, columns: tuple[str, ...], source) -> None:
    """A sheet's design ``columns`` as floats, in place (NaN where blank; a column the sheet
    lacks is added, all NaN): the fractions (:data:`FRACTIONS`) as a spreadsheet writes them
    (:func:`as_numbers`). InputError naming the row and column of a cell that is not a number,
    or of ``draws`` that are not whole."""
    for column in columns:
        if column not in labels:
            labels[column] = np.nan
            continue
        given = labels[column].notna() & (labels[column].astype(str).str.strip() != "")
        if column in FRACTIONS:  # a decimal comma, 1.23457E-04: as a spreadsheet writes them
            labels[column] = as_numbers(labels[column].where(given))
        else:
            labels[column] = pd.to_numeric(labels[column].where(given), errors="coerce")
        text = given & labels[column].isna()
        if text.any():
            raise InputError("not a number", path=source, row=first_row(text), column=column)
        if column == "draws" and (labels[column].dropna() % 1 != 0).any():
            raise InputError(
                "not a whole number (as werest sample writes it)",
                path=source,
                row=first_row(labels[column] % 1 > 0),
                column=column,
            )


def check_draw_numbers(labels: pd.DataFrame, source) -> None:
    """A sheet's ``draws`` ≥ 1 and 0 < ``expected_draws``, where recorded, and
    ``expected_draws`` on every row of a dataset or on none (after :func:`read_design_numbers`)."""
    for column, bad in (
        ("draws", labels["draws"].notna() & ~(labels["draws"] >= 1)),
        ("expected_draws", labels["expected_draws"].notna() & ~(labels["expected_draws"] > 0)),
    ):
        if bad.any():
            raise InputError(
                f"{column} must be a positive number (as werest sample writes it)",
                path=source,
                row=first_row(bad),
                column=column,
            )
    partial = labels.groupby("dataset")["expected_draws"].apply(
        lambda s: 0 < s.isna().sum() < len(s)
    )
    if partial.any():
        raise InputError(
            f"dataset {partial.index[partial.to_numpy()][0]}: expected_draws is filled on some "
            "rows only; keep the sheet's design columns on every row or remove them",
            path=source,
            column="expected_draws",
        )


def first_row(mask) -> int:
    """The row number (1 = the first row after the header) of the first True of ``mask``."""
    return int(np.flatnonzero(np.asarray(mask))[0]) + 1


def design_matches(recorded, design, rtol: float = DESIGN_RTOL) -> np.ndarray:
    """Per row, whether a recorded design number matches the design's, to within ``rtol``
    (relative; :data:`DESIGN_RTOL`)."""
    recorded, design = np.asarray(recorded, dtype=float), np.asarray(design, dtype=float)
    return np.isclose(recorded, design, rtol=rtol, atol=0.0)


# --------------------------------------------------------------------------- the design


#: the columns ``werest sample`` writes once per sheet and dataset (the same on every row)
PER_SHEET = ("strategy", "budget", "n_utterances", "uniform_share", "leader", "rivals")


def where(rows: pd.DataFrame, position: int) -> dict:
    """The file and row (``sheet_file``, ``sheet_row`` of :func:`werest.estimation.labels.
    read_labels`) of ``rows``' row at ``position``, for an InputError."""
    row = rows.iloc[position]
    file = row.get("sheet_file")
    number = row.get("sheet_row")
    return {
        "path": None if file is None or pd.isna(file) else str(file),
        "row": None if number is None or pd.isna(number) else int(number),
    }


def sheet_groups(labels: pd.DataFrame) -> list[tuple[object, pd.DataFrame]]:
    """A file's rows per dataset and sheet number (per dataset where it records none)."""
    numbered = "sheet" in labels and labels["sheet"].notna().any()
    keys = ["dataset", "sheet"] if numbered else ["dataset"]
    return [(key[0], rows) for key, rows in labels.groupby(keys, sort=True)]


def check_sheet_design(labels: pd.DataFrame) -> None:
    """One file's design columns as ``werest sample`` wrote them, per dataset and sheet
    number (:func:`sheet_groups`; the rows carry ``sheet_file`` and ``sheet_row``): the
    columns of :data:`PER_SHEET` the same on every row. InputError naming the file, the row
    and the column that differs from the sheet's other rows."""
    for dataset, rows in sheet_groups(labels):
        for column in PER_SHEET:
            if column in rows:
                _check_one_value(rows, column, dataset)


def check_sheet_probabilities(labels: pd.DataFrame) -> None:
    """Each row's ``expected_draws`` = ``selection_probability`` × its sheet's draws (every
    strategy writes them so), within twice :data:`DESIGN_RTOL`, where both are recorded, on
    a sheet that records its number (whose draws are all there: checked before, by
    :func:`werest.estimation.labels.read_labels`; a table without a number may be a few
    rows cut from a sheet). InputError naming the file, the row and the column that changed
    (``inclusion_probability`` tells which of the two it follows)."""
    if "sheet" not in labels or labels["sheet"].isna().all():
        return
    for dataset, rows in sheet_groups(labels):
        _check_probabilities(rows, dataset)


def _check_one_value(rows: pd.DataFrame, column: str, dataset) -> None:
    """InputError at the first row whose ``column`` differs from the sheet's most common
    value (numbers within :data:`DESIGN_RTOL`, however they are written)."""
    text = rows[column].map(lambda v: "" if pd.isna(v) else str(v).strip()).reset_index(drop=True)
    numbers = as_numbers(text) if column != "strategy" else pd.Series(np.nan, index=text.index)
    if numbers.notna().all():
        common = float(numbers.mode().iloc[0])
        differ = ~design_matches(numbers, common)
        usual = f"{common:g}"
    else:
        counts = text.value_counts(sort=False)  # ties: the value seen first
        usual = str(counts.idxmax())
        differ = (text != usual).to_numpy()
    if not differ.any():
        return
    k = int(np.flatnonzero(differ)[0])
    raise InputError(
        f"dataset {dataset}: {column} is {text.iat[k]!r} here and {usual!r} on the sheet's "
        f"other rows: werest sample writes one {column} per sheet; restore it",
        column=column,
        **where(rows, k),
    )


def _check_probabilities(rows: pd.DataFrame, dataset) -> None:
    """``expected_draws`` = ``selection_probability`` × the sheet's draws, row by row (where
    both are recorded)."""
    expected = rows["expected_draws"].to_numpy(dtype=float)
    selected = rows["selection_probability"].to_numpy(dtype=float)
    total = float(rows["draws"].fillna(1).round().sum())
    both = np.isfinite(expected) & np.isfinite(selected)
    rtol = 2 * DESIGN_RTOL  # two recorded numbers, each rounded on its own
    differ = both & ~design_matches(expected, selected * total, rtol)
    if not differ.any():
        return
    k = int(np.flatnonzero(differ)[0])
    column = "expected_draws"
    if "inclusion_probability" in rows:
        inclusion = as_numbers(rows["inclusion_probability"]).to_numpy(dtype=float)
        census = bool(np.isclose(inclusion, 1.0).all())
        strategy = str(rows["strategy"].iat[0]) if "strategy" in rows else ""
        with_replacement = strategy in ("winner", "active") and not census

        def follows(p: float) -> bool:  # P(drawn at least once) of a per-draw probability p
            drawn = 1 - (1 - min(p, 1.0)) ** total if with_replacement else p * total
            return bool(design_matches(inclusion[k], drawn, rtol))

        if follows(expected[k] / total) and not follows(selected[k]):
            column = "selection_probability"  # the inclusion follows from expected_draws
    raise InputError(
        f"dataset {dataset}: expected_draws {expected[k]:.6g} does not follow from "
        f"selection_probability {selected[k]:.6g} × the sheet's {total:.0f} draws (to within "
        f"{rtol:.1%}): a changed design column; restore it as werest sample wrote it",
        column=column,
        **where(rows, k),
    )


def check_winner_design(
    sheet: pd.DataFrame, design: np.ndarray | None, dataset: str, unknown: list[str]
) -> None:
    """A ``winner`` sheet's recorded ``selection_probability`` (``sheet``: one dataset's rows
    of one sheet, with ``sheet_file`` and ``sheet_row``) against the design recomputed from
    this input (``design``, one per row; None when ``unknown`` names systems of the sheet's
    ``leader``/``rivals`` that the input does not have). InputError naming the file, the
    row and the column where they differ by more than :data:`DESIGN_RTOL`: a sheet drawn
    from another input, or a design column changed on every row."""
    advice = "a sheet drawn from another input table? label the sheets drawn from this one"
    if unknown:
        column = "leader" if str(sheet["leader"].iat[0]) in unknown else "rivals"
        raise InputError(
            f"dataset {dataset}: system {unknown[0]!r} is not in this input table: {advice}",
            column=column,
            **where(sheet, 0),
        )
    recorded = sheet["selection_probability"].to_numpy(dtype=float)
    differ = ~design_matches(recorded, design)
    if not differ.any():
        return
    k = int(np.flatnonzero(differ)[0])
    raise InputError(
        f"dataset {dataset}: selection_probability {recorded[k]:.6g} does not follow from this "
        f"input table (its leader, rivals and uniform_share give {design[k]:.6g}; "
        f"{DESIGN_RTOL:.1%} is the tolerance): {advice}",
        column="selection_probability",
        **where(sheet, k),
    )


def draw_places(cell) -> list[int]:
    """A ``draw_order`` cell's places, the 0-based indices of a row's draws in the order its
    sheet's draws were made (``3`` or ``3|7``); [] for an empty cell. ValueError: not
    whole numbers ≥ 0."""
    text = "" if cell is None or (isinstance(cell, float) and np.isnan(cell)) else str(cell)
    if not text.strip():
        return []
    places = []
    for part in text.split(ORDER_SEPARATOR):
        number = float(part.strip())  # 3.0: a spreadsheet's number
        if not number.is_integer() or number < 0:
            raise ValueError(part)
        places.append(int(number))
    return places
