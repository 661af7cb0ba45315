"""Reading the label loop's sheets (``labels=``): :func:`read_labels` of one sheet, a list of
them, DataFrames or ``input`` (the table's own references), each checked against the table
and against the others, one line naming file, row and column for every deviation; the
files themselves as spreadsheets save them: :mod:`werest.estimation.sheets`."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import re
from pathlib import Path

import numpy as np
import pandas as pd

from werest.columns import ORDER_SEPARATOR
from werest.errors import ConfigError, InputError
from werest.estimation.sheets import (
    check_draw_numbers,
    check_sheet_design,
    check_sheet_probabilities,
    draw_places,
    first_row,
    read_design_numbers,
    read_sheet_file,
)
from werest.ingest.table import UTTERANCE, validate_table

log = logging.getLogger(__name__)

#: ``labels=input``: the input's own references.
FROM_INPUT = "input"
#: The columns a labels table must have.
LABEL_COLUMNS = (*UTTERANCE, "reference")


#: the design columns a sheet may carry besides ``draws`` and ``expected_draws``
#: (``werest sample`` writes them; the decision of :mod:`werest.estimation.winner` reads them)
DESIGN_TEXT = ("strategy", "leader", "rivals")
DESIGN_NUMBERS = ("selection_probability", "uniform_share")
#: where each row of :func:`read_labels` was read: the file (as given) and its row there
#: (1 = the first row after the header), for the errors the decision finds
PROVENANCE = ("sheet_file", "sheet_row")


def read_labels(
    source: str | Path | pd.DataFrame | list,
    table: pd.DataFrame,
    input_path=None,
    notes: list[str] | None = None,
) -> pd.DataFrame:
    """The labels (a file, several files, ``input``, or a DataFrame), one row per (sheet,
    dataset, utt_id) with ``reference``, ``sheet``, ``draw_order`` (:func:`draw_places`; ""
    where the sheet records none), ``draws`` and ``expected_draws`` (NaN: no design recorded,
    a simple random sample) and the design columns of :data:`DESIGN_TEXT` and
    :data:`DESIGN_NUMBERS` (empty where the sheet has none) and :data:`PROVENANCE` (the
    file and its row), in the order of the sheets' numbers.

    A sheet file is read as a spreadsheet saves it (:func:`werest.estimation.sheets.
    read_sheet_file`): CSV with any of ``,``, ``;`` or tab, a byte-order mark, CRLF, extra
    columns, trailing empty rows, decimal commas, or an ``.xlsx`` workbook.

    A sheet's number is the ``sheet`` it records (``werest sample`` writes it); a sheet
    without one (drawn before werest recorded it, a test split, ``input``) is numbered by its
    place among the distinct sheets listed, the number ``werest sample`` gave the sheet
    after them before it recorded one. The rows of a numbered sheet are sorted by utterance
    (their order says nothing: ``draw_order`` does); an unnumbered sheet keeps its rows'
    order. The same sheet given twice (the same file, the same bytes, or the same rows saved
    in another format: :func:`_content_key`) counts once: a note says so, appended to
    ``notes`` (logged when ``notes`` is None).

    Raises
    ------
    InputError : naming file, row and column: a label for an utterance not in the table, a
        duplicated label, an empty reference, a reference that differs from the input's own
        or from an earlier sheet's for the same utterance; a recorded ``sheet`` or
        ``draw_order`` that is not whole numbers, or filled on some rows only; a sheet whose
        draws do not add up to its ``budget`` (a deleted row) or do not match its
        ``draw_order``; a design column changed on a row (one value per sheet, and
        ``expected_draws`` = ``selection_probability`` × the draws, within
        :data:`werest.estimation.sheets.DESIGN_RTOL`: :mod:`werest.estimation.sheets`); a
        header without ``reference`` (naming the file and column); two files that are the
        same sheet of a dataset (naming both).
    """
    sources = list(source) if isinstance(source, list | tuple) else [source]
    if not sources:
        raise ConfigError("labels=[] names no sheet")
    sheets, seen, numbers = [], {}, {}
    for one in sources:
        sheet = _unseen_sheet(one, table, input_path, seen, notes)
        if sheet is not None:
            sheets.append(_numbered(sheet, one, sheets, numbers))
    labels = pd.concat(sheets, ignore_index=True)
    return labels.sort_values("sheet", kind="stable").reset_index(drop=True)


def _unseen_sheet(one, table: pd.DataFrame, input_path, seen: dict, notes) -> pd.DataFrame | None:
    """The sheet ``one`` (:func:`_read_sheet`), or None, with a note, when it is a sheet read
    already: the same file or bytes (:func:`_source_keys`) or the same rows in another file
    (:func:`_content_key`). ``seen``: the name each key and content was read under."""
    name = _source_name(one)
    keys = _source_keys(one)
    earlier = next((seen[key] for key in keys if key in seen), None)
    if earlier is not None:
        same = "given again" if earlier == name else f"the same sheet as {earlier}"
        _note(notes, f"labels: {name} is {same}; its labels count once")
        return None
    seen.update(dict.fromkeys(keys, name))
    sheet = _read_sheet(one, table, input_path)
    content = _content_key(sheet)  # the same rows in another file (CSV and .xlsx)
    if content in seen:
        _note(
            notes,
            f"labels: {name} is the same sheet as {seen[content]} (the same rows); "
            "its labels count once",
        )
        return None
    seen[content] = name
    return sheet


def _numbered(sheet: pd.DataFrame, one, earlier: list, numbers: dict) -> pd.DataFrame:
    """``sheet`` numbered: the ``sheet`` it records, else its place after the sheets read
    before it (``earlier``), as werest sample numbered the next one; checked against their
    numbers and labels. A numbered sheet's rows are sorted by utterance."""
    recorded = bool(sheet["sheet"].notna().any())
    if not recorded:  # its place in the list, as werest sample numbered the next one
        sheet["sheet"] = len(earlier)
    sheet["sheet"] = sheet["sheet"].astype(int)
    _check_numbers(sheet, _source_name(one), recorded, numbers)
    if earlier:
        _check_across_sheets(pd.concat(earlier, ignore_index=True), sheet, one)
    if recorded:  # its rows' order says nothing: the draw_order does
        sheet = sheet.sort_values(["sheet", *UTTERANCE], kind="stable")
    return sheet


def with_label_notes(block: str | None, notes: list[str]) -> str | None:
    """The console's block (the decision's, ``Which system is best:``) with
    :func:`read_labels`' notes under it, one ``  note:`` line each."""
    if not notes:
        return block
    lines = [f"  note: {note}" for note in notes]
    return "\n".join([block or "Labels:", *lines])


def _note(notes: list[str] | None, note: str) -> None:
    if notes is None:
        log.warning(note)
    else:
        notes.append(note)


def _source_name(source) -> str:
    """How messages name a labels source."""
    return "<labels>" if isinstance(source, pd.DataFrame) else str(source)


def _source_keys(source) -> list[tuple]:
    """What makes two labels sources one sheet: a file's resolved path and its bytes' hash, a
    DataFrame's content, ``input`` itself."""
    if isinstance(source, pd.DataFrame):
        content = pd.util.hash_pandas_object(source, index=False).to_numpy().tobytes()
        header = "|".join(map(str, source.columns)).encode()
        return [("frame", hashlib.sha256(header + content).hexdigest())]
    if str(source) == FROM_INPUT:
        return [("input",)]
    path = Path(source)
    keys: list[tuple] = [("path", str(path.resolve()))]
    with contextlib.suppress(OSError):  # reading it says what is wrong
        keys.append(("bytes", hashlib.sha256(path.read_bytes()).hexdigest()))
    return keys


#: what makes two sheets read from different files one sheet (:func:`_content_key`)
SAME_SHEET = (*UTTERANCE, "reference", "skip", "sheet", "draw_order", "draws", *DESIGN_TEXT)


def _content_key(sheet: pd.DataFrame) -> tuple:
    """What makes two sheets read from different files (the same sheet saved as CSV and as
    .xlsx) one sheet: the same rows in any order, each with the same transcript (to the
    character), the same number and the same draws; the design's fractions are left out
    (a spreadsheet may have rounded them in one copy only)."""
    rows = sheet[list(SAME_SHEET)].astype(str).sort_values(list(UTTERANCE), kind="stable")
    digest = pd.util.hash_pandas_object(rows, index=False).to_numpy().tobytes()
    return ("rows", hashlib.sha256(digest).hexdigest())


def _number_hint(table: pd.DataFrame, dataset: str, utt_id: str) -> str:
    """Where an unknown ``utt_id`` is an input ID a spreadsheet turned into a number (lost
    its leading zeros, or gained ``.0``): the ID it was."""
    if not re.fullmatch(r"\d+(\.0+)?", str(utt_id)):
        return ""
    ids = table.loc[table["dataset"] == dataset, "utt_id"].drop_duplicates().astype(str)
    value = int(float(utt_id))
    numeric = ids[ids.str.fullmatch(r"\d+")]
    same = numeric[numeric.map(int) == value]
    if same.empty:
        return ""
    return (
        f" (the input has {same.iat[0]!r}: did a spreadsheet read the ID as a number? format "
        "the column as text)"
    )


def _check_numbers(sheet: pd.DataFrame, name: str, recorded: bool, numbers: dict) -> None:
    """A sheet number of a dataset that an earlier sheet of the list already has is refused,
    naming both: the same number is the same generator, so the two sheets hold the same
    draws (a sheet drawn without ``labels=`` of the sheets before it draws sheet 0 again),
    and counting both would count those draws twice. ``numbers``: (dataset, number) → the
    earlier sheet's name (and whether it recorded its number), updated."""
    for (dataset, number), _ in sheet.groupby(["dataset", "sheet"], sort=True):
        key = (str(dataset), int(number))
        if key in numbers:
            earlier, earlier_recorded = numbers[key]
            unnumbered = [n for n, r in ((earlier, earlier_recorded), (name, recorded)) if not r]
            how = (
                f" ({' and '.join(unnumbered)} records no sheet number: numbered by its place in "
                "the list)"
                if unnumbered
                else ""
            )
            raise InputError(
                f"dataset {dataset}: this is sheet {number}, and so is {earlier}{how}: two "
                "sheets of one number hold the same draws (a sheet drawn without labels= of "
                "the sheets before it repeats them); draw it again with the earlier sheets in "
                "labels=",
                path=name,
                column="sheet",
            )
        numbers[key] = (name, recorded)


def _read_sheet(source, table: pd.DataFrame, input_path) -> pd.DataFrame:
    """One sheet of :func:`read_labels`."""
    if isinstance(source, pd.DataFrame):  # the Python API: a DataFrame of labels
        labels, source = validate_table(source, required=LABEL_COLUMNS, source="<labels>"), None
    elif str(source) == FROM_INPUT:
        labels = _input_labels(table, input_path)
        return _with_design(labels.assign(sheet_file=str(input_path), sheet_row=np.nan), None)
    else:  # a sheet as a spreadsheet saved it: CSV of any separator, or .xlsx
        labels = read_sheet_file(source, required=LABEL_COLUMNS)
    # where each row came from, for the errors found later (the rows get sorted)
    labels["sheet_file"] = _source_name(source) if source is not None else "<labels>"
    labels["sheet_row"] = np.arange(1, len(labels) + 1)
    labels["skip"] = _skip_marks(labels, source)
    _read_references(labels, source)
    _check_utterances(labels, table, source)
    read_design_numbers(labels, ("draws", "expected_draws", *DESIGN_NUMBERS), source)
    check_draw_numbers(labels, source)
    _read_recorded_order(labels, source)
    return _with_design(labels, source)


def _read_references(labels: pd.DataFrame, source) -> None:
    """Every row has a reference or is marked ``skip`` (not both); a skipped row's reference
    is "" (in place)."""
    blank = labels["reference"].isna() | (labels["reference"].astype(str).str.strip() == "")
    empty = blank & ~labels["skip"]
    if empty.any():
        raise InputError(
            "empty reference: transcribe the utterance, or mark it skip=true if it has no "
            "speech to transcribe (deleting its row would bias the estimate)",
            path=source,
            row=first_row(empty),
            column="reference",
        )
    both = labels["skip"] & ~blank
    if both.any():
        raise InputError(
            "skip=true on a row with a reference: clear the reference or the mark",
            path=source,
            row=first_row(both),
            column="skip",
        )
    labels["reference"] = labels["reference"].where(~labels["skip"], "")


def _check_utterances(labels: pd.DataFrame, table: pd.DataFrame, source) -> None:
    """Every label names an utterance of the input, and agrees with its own reference
    (:func:`_check_against_input`)."""
    known = pd.MultiIndex.from_frame(table[UTTERANCE].drop_duplicates())
    keys = pd.MultiIndex.from_frame(labels[UTTERANCE])
    unknown = ~keys.isin(known)
    if unknown.any():
        first = first_row(unknown) - 1
        dataset, utt_id = labels["dataset"].iat[first], labels["utt_id"].iat[first]
        raise InputError(
            f"utterance {dataset}/{utt_id} is not in the input table: labels must name the "
            f"input's utterances{_number_hint(table, dataset, utt_id)}",
            path=source,
            row=first + 1,
            column="utt_id",
        )
    _check_against_input(labels, table, source)


#: the ``skip`` column's values that mark a row as unlabellable (case and white space aside);
#: :data:`NOT_SKIPPED` (and an empty cell) leave it a label
SKIPPED = ("true", "yes", "y", "1", "x", "skip")
NOT_SKIPPED = ("false", "no", "n", "0", "")


def _skip_marks(labels: pd.DataFrame, source) -> pd.Series:
    """The sheet's ``skip`` column as booleans (all False without one): :data:`SKIPPED` or
    :data:`NOT_SKIPPED`, anything else an InputError naming the row."""
    if "skip" not in labels:
        return pd.Series(False, index=labels.index)
    text = labels["skip"].map(lambda v: "" if pd.isna(v) else str(v)).str.strip().str.lower()
    text = text.str.replace(r"\.0$", "", regex=True)  # 1.0 and 0.0 from a numeric column
    unknown = ~text.isin((*SKIPPED, *NOT_SKIPPED))
    if unknown.any():
        raise InputError(
            f"skip must be one of {', '.join(SKIPPED)} (or empty, {', '.join(NOT_SKIPPED[:-1])})",
            path=source,
            row=first_row(unknown),
            column="skip",
        )
    return text.isin(SKIPPED)


def _with_design(labels: pd.DataFrame, source) -> pd.DataFrame:
    """The sheet's columns :func:`read_labels` returns, the missing design columns empty."""
    if "skip" not in labels:
        labels["skip"] = False
    labels["skip"] = labels["skip"].astype(bool)
    if "sheet" not in labels:
        labels["sheet"] = np.nan
    if "draw_order" not in labels:
        labels["draw_order"] = ""
    for column in ("draws", "expected_draws", *DESIGN_NUMBERS):
        if column not in labels:
            labels[column] = np.nan
    for column in DESIGN_TEXT:
        if column not in labels:
            labels[column] = ""
        labels[column] = labels[column].fillna("").astype(str)
    if "sheet_file" not in labels:
        labels["sheet_file"] = "<labels>"
        labels["sheet_row"] = np.arange(1, len(labels) + 1)
    columns = [
        *UTTERANCE,
        "reference",
        "skip",
        "sheet",
        "draw_order",
        "draws",
        "expected_draws",
        *DESIGN_NUMBERS,
        *DESIGN_TEXT,
        *PROVENANCE,
    ]
    return labels[columns].reset_index(drop=True)


def _check_across_sheets(earlier: pd.DataFrame, sheet: pd.DataFrame, source) -> None:
    """A later sheet's reference of an utterance an earlier sheet labelled must be the same
    (white space aside): one utterance has one transcript."""
    first = earlier.drop_duplicates(UTTERANCE)[[*UTTERANCE, "reference"]]
    both = sheet.reset_index().merge(first, on=UTTERANCE, suffixes=("", "_earlier"))
    differ = both["reference"].map(_squeeze) != both["reference_earlier"].map(_squeeze)
    if differ.any():
        raise InputError(
            "the label differs from an earlier sheet's for this utterance; fix one of them",
            path=source,
            row=int(both.loc[differ.to_numpy(), "index"].iat[0]) + 1,
            column="reference",
        )


def distinct_labels(labels: pd.DataFrame) -> pd.DataFrame:
    """One row per labelled (dataset, utt_id): its reference (the scoring's input) and
    ``skip`` (True: marked unlabellable, :func:`werest.estimation.corpus.labelled_scores`
    counts it as 0 and 0)."""
    rows = labels.drop_duplicates(UTTERANCE)
    skip = rows["skip"] if "skip" in rows else pd.Series(False, index=rows.index)
    return rows[[*UTTERANCE, "reference"]].assign(skip=skip.astype(bool).to_numpy())


def _read_recorded_order(labels: pd.DataFrame, source) -> None:
    """The ``sheet`` and ``draw_order`` a sheet records, checked and put in canonical form
    (in place): ``sheet`` whole numbers (NaN: none recorded), ``draw_order`` places joined by
    ``|`` ("" where none). A sheet with a number must hold all its draws: per dataset and
    sheet, the draws add up to the ``budget`` (``min(budget, n_utterances)`` for a draw
    without replacement or a census; ``winner`` draws ``budget`` with replacement), and the
    recorded places are each draw's once."""
    if "sheet" in labels:
        labels["sheet"] = _whole_numbers(labels["sheet"], source, "sheet")
    if "draw_order" in labels:
        places = []
        for position, cell in enumerate(labels["draw_order"]):
            try:
                places.append(draw_places(cell))
            except ValueError:
                raise InputError(
                    "draw_order must be whole numbers ≥ 0 joined by | (as werest sample writes it)",
                    path=source,
                    row=position + 1,
                    column="draw_order",
                ) from None
        labels["draw_order"] = [ORDER_SEPARATOR.join(map(str, p)) for p in places]
    numbered = "sheet" in labels and labels["sheet"].notna().any()
    if numbered and labels["sheet"].isna().any():
        raise InputError(
            "sheet is filled on some rows only; keep the sheet's columns on every row",
            path=source,
            row=first_row(labels["sheet"].isna()),
            column="sheet",
        )
    if numbered:
        for dataset, rows in labels.groupby("dataset", sort=True):
            _check_one_number(rows, dataset, source)
    sheets = [
        (f"dataset {key[0]}" + (f", sheet {int(key[1])}" if numbered else ""), rows)
        for key, rows in labels.groupby(["dataset", "sheet"] if numbered else ["dataset"])
    ]
    for which, rows in sheets:  # a row whose draws and places differ, named first
        _check_row_draws(rows, which, source, _one_number(rows, "budget") if numbered else None)
    check_sheet_design(labels)  # the design columns as werest sample wrote them
    if numbered or "draw_order" in labels:  # without a number, the order is still checked
        for which, rows in sheets:
            _check_sheet_draws(rows, which, source, budget=numbered)
    check_sheet_probabilities(labels)  # once the draws hold: their sum is the sheet's


def _check_one_number(rows: pd.DataFrame, dataset, source) -> None:
    """A dataset's rows of one file that record several sheet numbers: several whole sheets
    in one file, each holding its draws, or one sheet with a ``sheet`` cell changed, refused
    at the first row of the least common number."""
    counts = rows["sheet"].value_counts(sort=False)
    if len(counts) < 2:
        return
    try:
        for number, sheet in rows.groupby("sheet", sort=True):
            _check_sheet_draws(sheet, f"dataset {dataset}, sheet {int(number)}", source)
    except InputError:
        odd, usual = counts.idxmin(), counts.idxmax()
        raise InputError(
            f"dataset {dataset}: sheet is {odd:.0f} here and {usual:.0f} on the other rows: "
            "werest sample writes one number per sheet; restore it",
            path=source,
            row=_file_row(rows, int(np.flatnonzero((rows["sheet"] == odd).to_numpy())[0])),
            column="sheet",
        ) from None


def _check_sheet_draws(rows: pd.DataFrame, which: str, source, *, budget: bool = True) -> None:
    """One sheet's draws of one dataset: all there, each with one place in the draw order
    (:func:`_read_recorded_order`); ``budget``: against the recorded budget too."""
    draws = rows["draws"].fillna(1).round().astype(int)
    total = int(draws.sum())
    budget = _one_number(rows, "budget") if budget else None
    if budget is not None:
        size = _one_number(rows, "n_utterances")
        with_replacement = "strategy" in rows and (rows["strategy"] == "winner").all()
        expected = budget if with_replacement or size is None else min(budget, size)
        if total != expected:
            raise InputError(
                f"{which}: its draws add up to {total}, and it drew {expected} (budget "
                f"{budget}): a drawn row is missing or added; keep every drawn row (mark one "
                "with no speech skip=true)",
                path=source,
                column="draws",
            )
    if "draw_order" not in rows or (rows["draw_order"] == "").all():
        return
    places = [draw_places(cell) for cell in rows["draw_order"]]
    count = np.array([len(p) for p in places])
    wrong = (count != draws.to_numpy()) | (count == 0)
    flat = sorted(p for mine in places for p in mine)
    if not wrong.any() and flat != list(range(total)):  # the row of a place twice, or too far
        seen: set[int] = set()
        for k, mine in enumerate(places):
            if any(p in seen or p >= total for p in mine):
                wrong[k] = True
                break
            seen.update(mine)
    if wrong.any() or flat != list(range(total)):
        row = _file_row(rows, int(np.flatnonzero(wrong)[0])) if wrong.any() else None
        raise InputError(
            f"{which}: draw_order must give each of its {total} draws one place, 0 to "
            f"{total - 1}, as many on a row as its draws (as werest sample writes it)",
            path=source,
            row=row,
            column="draw_order",
        )


def _check_row_draws(rows: pd.DataFrame, which: str, source, budget: int | None) -> None:
    """A row whose ``draws`` differs from the number of its ``draw_order`` places, named
    with the column that changed: ``draws`` where the places are still each draw's once
    and add up to the budget, ``draw_order`` otherwise."""
    if "draw_order" not in rows or (rows["draw_order"] == "").all():
        return
    draws = rows["draws"].fillna(1).round().astype(int)
    places = [draw_places(cell) for cell in rows["draw_order"]]
    count = np.array([len(p) for p in places])
    wrong = (count != draws.to_numpy()) & (count > 0)
    if not wrong.any():
        return
    k = int(np.flatnonzero(wrong)[0])
    flat = sorted(p for mine in places for p in mine)
    intact = flat == list(range(len(flat))) and (budget is None or len(flat) == budget)
    column = "draws" if intact and int(draws.sum()) != len(flat) else "draw_order"
    raise InputError(
        f"{which}: draws is {draws.iat[k]} and draw_order records {count[k]} "
        f"(places {rows['draw_order'].iat[k]}): one of them was changed; restore it as "
        "werest sample wrote it",
        path=source,
        row=_file_row(rows, k),
        column=column,
    )


def _file_row(rows: pd.DataFrame, position: int) -> int:
    """The file's row number of ``rows``' row at ``position`` (``sheet_row`` where the rows
    carry it, else its place in the file's order)."""
    if "sheet_row" in rows and pd.notna(rows["sheet_row"].iat[position]):
        return int(rows["sheet_row"].iat[position])
    return int(rows.index[position]) + 1


def _one_number(rows: pd.DataFrame, column: str) -> int | None:
    """A column a sheet repeats on every row (``budget``, ``n_utterances``) as one whole
    number; None where it is absent or blank."""
    if column not in rows:
        return None
    values = pd.to_numeric(rows[column].astype(str).str.strip(), errors="coerce").dropna()
    return int(values.iloc[0]) if len(values) and float(values.iloc[0]).is_integer() else None


def _whole_numbers(values: pd.Series, source, column: str) -> pd.Series:
    """A column of whole numbers (blank: NaN); anything else an InputError naming the row."""
    text = values.map(lambda v: "" if pd.isna(v) else str(v).strip())
    numbers = pd.to_numeric(text.where(text != ""), errors="coerce")
    bad = (text != "") & ~(numbers.notna() & (numbers % 1 == 0))
    if bad.any():
        raise InputError(
            "not a whole number (as werest sample writes it)",
            path=source,
            row=first_row(bad),
            column=column,
        )
    return numbers.astype(float)


def _check_against_input(labels: pd.DataFrame, table: pd.DataFrame, source) -> None:
    """A label that differs from the input's own reference (white space aside) is an error."""
    if "reference" not in table.columns:
        return
    own = table.loc[table["reference"].notna(), [*UTTERANCE, "reference"]].drop_duplicates(
        UTTERANCE
    )
    both = labels.reset_index().merge(own, on=UTTERANCE, suffixes=("", "_input"))
    differ = both["reference"].map(_squeeze) != both["reference_input"].map(_squeeze)
    if differ.any():
        row = both.loc[differ.to_numpy(), "index"].iat[0]
        raise InputError(
            "the label differs from the input's own reference for this utterance; fix one of them",
            path=source,
            row=int(row) + 1,
            column="reference",
        )


def _squeeze(text: str) -> str:
    return " ".join(str(text).split())


def _input_labels(table: pd.DataFrame, input_path) -> pd.DataFrame:
    """``labels=input``: the utterances whose input rows carry a reference."""
    if "reference" not in table.columns or table["reference"].isna().all():
        raise InputError(
            "labels=input, but no input row has a reference", path=input_path, column="reference"
        )
    rows = table.loc[table["reference"].notna(), [*UTTERANCE, "reference"]]
    return rows.drop_duplicates(UTTERANCE).assign(draws=np.nan, expected_draws=np.nan, skip=False)
