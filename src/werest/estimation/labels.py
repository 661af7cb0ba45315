"""``werest estimate … labels=L``: a few transcribed utterances turn every estimate into a
prediction-powered one (:mod:`werest.estimation.ppi`).

``L`` is a table with ``dataset, utt_id, reference`` (the sheet ``werest sample`` writes, once
filled in), or ``input``: the input's own references where only some rows have one. The
sheet's design columns (``draws``, ``expected_draws``) say how the utterances were drawn;
a table without them is taken as a simple random sample. One reference serves every system
of its utterance. Several sheets are read in the order of the numbers they record
(``sheet``), each with every one of its draws (``draw_order``): :func:`read_labels`.

Per (dataset, system) with at least ``min_labels`` labelled utterances, ``estimated_wer`` and
``interval_low``/``interval_high`` become the prediction-powered estimate and its interval
(``method: ppi``); the labels-only estimate is beside it (``classical_wer``,
``classical_low``, ``classical_high``), with the zero-label estimate (``zero_label_wer``), λ
and the effective number of labels. With fewer labels the zero-label estimate stays
(``method: zero_label``) and a warning says so. Every pair of systems of a labelled dataset
gets the paired difference (``pairs.csv``).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import re
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import numpy as np
import pandas as pd

from werest.errors import ConfigError, InputError
from werest.estimation.corpus import estimated_sample
from werest.estimation.ppi import (
    DatasetDraws,
    Estimates,
    bootstrap_bytes,
    estimate_draws,
    more_labels,
    paired_differences,
)
from werest.estimation.ppi_frames import dataset_frames
from werest.estimation.settings import LabelSettings
from werest.estimation.sheets import (
    FRACTIONS,
    as_numbers,
    check_sheet_design,
    check_sheet_probabilities,
    draw_places,
    read_sheet_file,
)
from werest.features.agreement import STATUS_OK
from werest.formatting import plural, size
from werest.ingest.table import KEY, UTTERANCE, validate_table
from werest.text import Normaliser
from werest.text.scoring import score_against

log = logging.getLogger(__name__)

#: ``labels=input``: the input's own references.
FROM_INPUT = "input"
#: The columns a labels table must have.
LABEL_COLUMNS = (*UTTERANCE, "reference")


#: the share of the available memory a bootstrap may take (the run holds its table too)
MEMORY_SHARE = 0.8


def check_bootstrap_memory(
    labels: pd.DataFrame,
    table: pd.DataFrame,
    settings: LabelSettings,
    available: int | None = None,
) -> None:
    """ConfigError, before any work starts, when ``few_labels.interval=bootstrap`` would
    allocate more than :data:`MEMORY_SHARE` of the available memory
    (:func:`werest.resources.available_memory`; ``available`` overrides it) for its largest
    dataset: :func:`werest.estimation.ppi.bootstrap_bytes` of the dataset's labelled draws and
    systems. The datasets are estimated one after another, so the largest one is the peak."""
    if settings.interval != "bootstrap" or labels.empty:
        return
    from werest.resources import available_memory

    draws = labels["draws"].fillna(1).round().groupby(labels["dataset"]).sum()
    systems = table.groupby("dataset")["system"].nunique()
    needs = {
        dataset: bootstrap_bytes(int(m), int(systems.get(dataset, 0)), settings.n_resamples)
        for dataset, m in draws.items()
    }
    dataset = max(needs, key=needs.get)
    need = needs[dataset]
    available = available_memory() if available is None else available
    if available is None or need <= MEMORY_SHARE * available:
        return
    per_resample = need / settings.n_resamples
    fits = int(MEMORY_SHARE * available // per_resample)
    raise ConfigError(
        f"few_labels.n_resamples={settings.n_resamples}: the bootstrap of dataset {dataset} "
        f"({plural(int(draws[dataset]), 'labelled draw')}, "
        f"{plural(int(systems.get(dataset, 0)), 'system')}) needs "
        f"{size(need)} of memory and {size(available)} is available: lower "
        f"few_labels.n_resamples to at most {fits}, or use few_labels.interval=t"
    )


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
        name = _source_name(one)
        keys = _source_keys(one)
        earlier = next((seen[key] for key in keys if key in seen), None)
        if earlier is not None:
            same = "given again" if earlier == name else f"the same sheet as {earlier}"
            _note(notes, f"labels: {name} is {same}; its labels count once")
            continue
        seen.update(dict.fromkeys(keys, name))
        sheet = _read_sheet(one, table, input_path)
        content = _content_key(sheet)  # the same rows in another file (CSV and .xlsx)
        if content in seen:
            _note(
                notes,
                f"labels: {name} is the same sheet as {seen[content]} (the same rows); "
                "its labels count once",
            )
            continue
        seen[content] = name
        recorded = bool(sheet["sheet"].notna().any())
        if not recorded:  # its place in the list, as werest sample numbered the next one
            sheet["sheet"] = len(sheets)
        sheet["sheet"] = sheet["sheet"].astype(int)
        _check_numbers(sheet, name, recorded, numbers)
        if sheets:
            _check_across_sheets(pd.concat(sheets, ignore_index=True), sheet, one)
        if recorded:  # its rows' order says nothing: the draw_order does
            sheet = sheet.sort_values(["sheet", *UTTERANCE], kind="stable")
        sheets.append(sheet)
    labels = pd.concat(sheets, ignore_index=True)
    return labels.sort_values("sheet", kind="stable").reset_index(drop=True)


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
    blank = labels["reference"].isna() | (labels["reference"].astype(str).str.strip() == "")
    empty = blank & ~labels["skip"]
    if empty.any():
        raise InputError(
            "empty reference: transcribe the utterance, or mark it skip=true if it has no "
            "speech to transcribe (deleting its row would bias the estimate)",
            path=source,
            row=_row(empty),
            column="reference",
        )
    both = labels["skip"] & ~blank
    if both.any():
        raise InputError(
            "skip=true on a row with a reference: clear the reference or the mark",
            path=source,
            row=_row(both),
            column="skip",
        )
    labels["reference"] = labels["reference"].where(~labels["skip"], "")
    known = pd.MultiIndex.from_frame(table[UTTERANCE].drop_duplicates())
    keys = pd.MultiIndex.from_frame(labels[UTTERANCE])
    unknown = ~keys.isin(known)
    if unknown.any():
        first = _row(unknown) - 1
        dataset, utt_id = labels["dataset"].iat[first], labels["utt_id"].iat[first]
        raise InputError(
            f"utterance {dataset}/{utt_id} is not in the input table: labels must name the "
            f"input's utterances{_number_hint(table, dataset, utt_id)}",
            path=source,
            row=first + 1,
            column="utt_id",
        )
    _check_against_input(labels, table, source)
    for column in ("draws", "expected_draws", *DESIGN_NUMBERS):
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
            raise InputError("not a number", path=source, row=_row(text), column=column)
        if column == "draws" and (labels[column].dropna() % 1 != 0).any():
            raise InputError(
                "not a whole number (as werest sample writes it)",
                path=source,
                row=_row(labels[column] % 1 > 0),
                column=column,
            )
    _check_design(labels, source)
    _read_recorded_order(labels, source)
    return _with_design(labels, source)


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
            row=_row(unknown),
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
    ``skip`` (True: marked unlabellable, :func:`labelled_scores` counts it as 0 and 0)."""
    rows = labels.drop_duplicates(UTTERANCE)
    skip = rows["skip"] if "skip" in rows else pd.Series(False, index=rows.index)
    return rows[[*UTTERANCE, "reference"]].assign(skip=skip.astype(bool).to_numpy())


def _row(mask) -> int:
    """The row number (1 = the first row after the header) of the first True of ``mask``."""
    return int(np.flatnonzero(np.asarray(mask))[0]) + 1


def _read_recorded_order(labels: pd.DataFrame, source) -> None:
    """The ``sheet`` and ``draw_order`` a sheet records, checked and put in canonical form
    (in place): ``sheet`` whole numbers (NaN: none recorded), ``draw_order`` places joined by
    ``|`` ("" where none). A sheet with a number must hold all its draws: per dataset and
    sheet, the draws add up to the ``budget`` (``min(budget, n_utterances)`` for a draw
    without replacement or a census; ``winner`` draws ``budget`` with replacement), and the
    recorded places are each draw's once."""
    from werest.estimation.sampling import ORDER_SEPARATOR

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
            row=_row(labels["sheet"].isna()),
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
            row=_row(bad),
            column=column,
        )
    return numbers.astype(float)


def _check_design(labels: pd.DataFrame, source) -> None:
    """draws ≥ 1 and 0 < expected_draws, where recorded."""
    for column, bad in (
        ("draws", labels["draws"].notna() & ~(labels["draws"] >= 1)),
        ("expected_draws", labels["expected_draws"].notna() & ~(labels["expected_draws"] > 0)),
    ):
        if bad.any():
            raise InputError(
                f"{column} must be a positive number (as werest sample writes it)",
                path=source,
                row=_row(bad),
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


def labelled_scores(
    table: pd.DataFrame, labels: pd.DataFrame, normaliser: Normaliser
) -> pd.DataFrame:
    """True word errors and reference words of every system's hypothesis on each labelled
    utterance, counted as ``werest score`` counts them (:func:`werest.text.scoring.score_against`:
    the label, under the row's language).

    An utterance marked ``skip`` (no speech, unintelligible: it has no WER) counts 0 word
    errors and 0 reference words for every system: the estimand is the corpus WER of the
    labellable utterances, Σ e·1[labellable] / Σ r·1[labellable], and a skipped draw stays in
    the design as a draw whose true terms are 0 (docs/few_labels.md, "Unlabellable rows")."""
    columns = [*KEY, "word_errors", "ref_words"]
    skip = labels["skip"].astype(bool) if "skip" in labels else pd.Series(False, labels.index)
    scored = score_against(table, labels[~skip.to_numpy()], normaliser)[columns]
    if not skip.any():
        return scored
    skipped = table[KEY].merge(labels.loc[skip.to_numpy(), UTTERANCE], on=UTTERANCE)
    skipped = skipped.drop_duplicates(KEY).assign(word_errors=0, ref_words=0)
    return pd.concat([scored, skipped[columns]], ignore_index=True)


def prediction_rows(utterances: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """:data:`werest.estimation.ppi_frames.FRAME_COLUMNS` rows: each estimated row's
    predicted errors and words, the corpus estimate's own terms
    (:func:`werest.estimation.corpus.estimated_sample`), with its labelled truth
    (``word_errors``, ``ref_words`` of ``scores``) where there is one."""
    done = utterances[utterances["status"] == STATUS_OK]
    sample = estimated_sample(done)
    rows = done[KEY].assign(pred_errors=sample.numerator, pred_words=sample.denominator)
    rows = rows.merge(scores, on=KEY, how="left")
    return rows.rename(columns={"word_errors": "errors", "ref_words": "words"})


def design_rows(labels: pd.DataFrame, frame_utterances: pd.Index) -> tuple[np.ndarray, np.ndarray]:
    """The draws of one dataset: positions in the frame (an utterance drawn k times is k
    draws) and their weights 1 / (N p), p = expected_draws / Σ draws within its sheet (1
    without a design, and for every ``random`` sheet: the sheets ``werest sample
    strategy=random`` draws one after another, each from the utterances not labelled yet,
    are together one simple random sample). Each sheet's draws keep their own weights, so
    sheets of several designs (a random test split, then ``strategy=winner`` batches) give
    one unbiased estimate."""
    rows, weights = [], []
    sheets = labels["sheet"] if "sheet" in labels else pd.Series(0, index=labels.index)
    for _, sheet in labels.groupby(sheets.to_numpy(), sort=True):
        position = frame_utterances.get_indexer(sheet["utt_id"])
        kept = sheet[position >= 0]
        position = position[position >= 0]
        draws = kept["draws"].fillna(1).round().astype(int).to_numpy()
        rows.append(np.repeat(position, draws))
        random = "strategy" in kept and (kept["strategy"] == "random").all()
        if kept["expected_draws"].isna().all() or random:
            weights.append(np.ones(int(draws.sum())))
            continue
        p = kept["expected_draws"].to_numpy(dtype=float) / draws.sum()
        weights.append(np.repeat(1.0 / (len(frame_utterances) * p), draws))
    if not rows:
        return np.zeros(0, dtype=int), np.zeros(0)
    return np.concatenate(rows), np.concatenate(weights)


@dataclass
class LabelledResult:
    """What the labels changed: the records (updated in place), the pairs, the warnings."""

    pairs: pd.DataFrame
    warnings: list[dict]


def dataset_estimates(
    rows: pd.DataFrame, labels: pd.DataFrame, settings: LabelSettings, *, seed: int = 0, method=None
) -> dict[str, tuple[DatasetDraws, Estimates]]:
    """Per labelled dataset: its draws and every system's estimates (:mod:`werest.estimation.ppi`).
    ``rows``: :func:`prediction_rows`; ``method`` overrides ``settings.interval``."""
    out = {}
    for dataset, frame in dataset_frames(rows).items():
        draw_rows, weight = design_rows(labels[labels["dataset"] == dataset], frame.utterances)
        if not len(draw_rows):
            continue
        census = len(np.unique(draw_rows)) == frame.n  # every utterance labelled: the truth
        draws = (
            frame.recalibrated_draws(draw_rows, weight, seed=seed)
            if settings.recalibrate and not census
            else frame.draws(draw_rows, weight)
        )
        skip = labels["skip"] if "skip" in labels else pd.Series(False, index=labels.index)
        mine = labels[(labels["dataset"] == dataset) & skip.astype(bool)]
        if len(mine):
            skipped = frame.utterances.get_indexer(mine["utt_id"].unique())
            draws.skipped = np.isin(draw_rows, skipped[skipped >= 0])
        estimates = estimate_draws(
            draws,
            method=method or settings.interval,
            level=settings.level,
            n_resamples=settings.n_resamples,
            seed=seed,
            shrink_to_prior=settings.shrink and not census,  # a census is the truth
            shared_lambda=settings.shared_lambda,
        )
        tail = frame.tail().any(axis=1)
        estimates.tail_counts = (int(tail.sum()), int(tail[np.unique(draw_rows)].sum()))
        out[dataset] = (draws, estimates)
    return out


def labelled_estimates(
    utterances: pd.DataFrame,
    table: pd.DataFrame,
    labels: pd.DataFrame,
    normaliser: Normaliser,
    settings: LabelSettings,
    *,
    seed: int = 0,
    scores: pd.DataFrame | None = None,
) -> dict[str, tuple[DatasetDraws, Estimates]]:
    """:func:`dataset_estimates` of the labels (:func:`read_labels`) against the estimated
    rows ``utterances`` of the transcripts ``table``, each system scored on each label
    (``scores``: :func:`labelled_scores` of the distinct labels, computed here when None)."""
    if scores is None:
        scores = labelled_scores(table, distinct_labels(labels), normaliser)
    return dataset_estimates(prediction_rows(utterances, scores), labels, settings, seed=seed)


def enough_labels(
    dataset: str, est: Estimates, settings: LabelSettings, warnings: list[dict]
) -> np.ndarray:
    """Which systems of ``dataset`` have ``min_labels`` labelled utterances; the others keep
    their zero-label estimate, and a warning saying so is added to ``warnings``."""
    enough = est.n_labelled >= settings.min_labels
    short = [system for system, ok in zip(est.systems, enough, strict=True) if not ok]
    if short:
        warnings.append(
            {
                "dataset": dataset,
                "systems": short,
                "message": f"{', '.join(short)}: fewer than {settings.min_labels} labelled "
                "utterances: the zero-label estimate is kept (few_labels.min_labels)",
            }
        )
    return enough


def apply_labels(
    records: list[dict],
    utterances: pd.DataFrame,
    table: pd.DataFrame,
    labels: pd.DataFrame,
    normaliser: Normaliser,
    settings: LabelSettings,
    *,
    seed: int = 0,
    scores: pd.DataFrame | None = None,
) -> LabelledResult:
    """Turn the summary ``records`` of labelled datasets into prediction-powered ones (see
    the module docstring); returns the paired differences and the warnings. ``scores``: see
    :func:`labelled_estimates`."""
    estimates = labelled_estimates(
        utterances, table, labels, normaliser, settings, seed=seed, scores=scores
    )
    by_cell = {(r["dataset"], r["system"]): r for r in records}
    for record in records:
        if "wer" in record and record.get("n_labelled") != record["n_estimated"]:
            del record["wer"]  # the truth of a labelled subset is not the corpus WER
        record.update(method="zero_label", n_labelled=0)
    pairs, warnings = [], []
    for dataset, (draws, est) in estimates.items():
        skipped = skipped_fields(draws, labels[labels["dataset"] == dataset])
        if skipped["n_skipped"]:
            warnings.append(skipped_warning(dataset, skipped))
        transcripts = transcribed(labels[labels["dataset"] == dataset])
        enough = enough_labels(dataset, est, settings, warnings)
        missed = missed_tail_warning(dataset, draws, est, enough)
        if missed:
            warnings.append(missed)
        for k, system in enumerate(est.systems):
            record = by_cell.get((dataset, system))
            if record is None:
                continue
            record["n_labelled"] = int(est.n_labelled[k])
            record["n_transcripts"] = transcripts
            record.update(skipped)
            if enough[k]:
                record.update(ppi_fields(est, k, settings), zero_label_wer=record["estimated_wer"])
                record["ci_low"], record["ci_high"] = (
                    record["interval_low"],
                    record["interval_high"],
                )
        if enough.sum() >= 2:  # each pair's interval depends on its two systems only
            kept = set(np.asarray(est.systems)[enough])
            pair = paired_differences(draws, est, level=settings.level, method=settings.interval)
            pair = pair[pair["system_a"].isin(kept) & pair["system_b"].isin(kept)]
            pairs.append(pair.assign(dataset=dataset, n_labelled=draws.m))
    columns = ["dataset", "system_a", "system_b", "difference", "low", "high", "verdict"]
    frame = pd.concat(pairs, ignore_index=True) if pairs else pd.DataFrame(columns=columns)
    extra = ["n_labelled", "more_labels_to_separate"]
    return LabelledResult(frame[[*columns, *extra]] if pairs else frame, warnings)


def transcribed(labels: pd.DataFrame) -> int:
    """The transcripts a dataset's labels hold: its distinct labelled utterances, those
    marked ``skip`` left out (a redrawn utterance is one transcript, several draws)."""
    skip = labels["skip"].astype(bool) if "skip" in labels else pd.Series(False, labels.index)
    return int(labels.loc[~skip.to_numpy(), "utt_id"].nunique())


def skipped_fields(draws: DatasetDraws, labels: pd.DataFrame) -> dict:
    """A labelled dataset's unlabellable rows: ``n_skipped`` (distinct utterances marked
    ``skip``) and ``unlabellable_share``, the design-weighted estimate of the share of its N
    utterances that have no WER (mean over the draws of w·1[skip]: Horvitz–Thompson, as the
    estimate itself)."""
    skip = labels["skip"].astype(bool) if "skip" in labels else pd.Series(False, labels.index)
    n_skipped = int(labels.loc[skip.to_numpy(), "utt_id"].nunique())
    share = 0.0
    if draws.skipped is not None and draws.m:
        share = float(np.mean(draws.weight * draws.skipped))
    return {"n_skipped": n_skipped, "unlabellable_share": share}


#: a missed tail is worth a warning when it widens an interval by this much (half-width)
TAIL_WARNING = 0.005


def missed_tail_warning(
    dataset: str, draws: DatasetDraws, est: Estimates, enough: np.ndarray
) -> dict | None:
    """The console's line when the draws missed the heavy tail the predictions show
    (:func:`werest.estimation.ppi.unobserved_tail_variance` widened an interval by
    :data:`TAIL_WARNING` or more): how many tail utterances were drawn, how much wider the
    intervals are, and what labelling them would cost."""
    if est.tail_widening is None or est.tail_counts is None:
        return None
    widening = np.where(enough, est.tail_widening, 0.0)
    if not (widening >= TAIL_WARNING).any():
        return None
    systems = [s for s, w in zip(est.systems, widening, strict=True) if w >= TAIL_WARNING]
    total, drawn = est.tail_counts
    n = draws.n_frame
    random_need = int(np.ceil(3 * n / max(total, 1)))
    return {
        "dataset": dataset,
        "systems": systems,
        "message": f"the labels hold {drawn} of the {plural(total, 'utterance')} whose "
        "predicted errors form a heavy tail (a random draw of "
        f"{draws.m} holds {draws.m * total / n:.1f} on average): what the others' errors may "
        f"be widens the intervals of {', '.join(systems)} by up to "
        f"{100 * widening.max():.1f} points. Labels among them remove it: `werest sample "
        "strategy=active` draws them in proportion to their predicted errors (a random draw "
        f"would need about {random_need} labels to hold 3 of them)",
    }


def skipped_warning(dataset: str, skipped: dict) -> dict:
    """The console's line about a dataset's rows marked ``skip``."""
    n = skipped["n_skipped"]
    return {
        "dataset": dataset,
        "systems": [],
        "message": f"{plural(n, 'utterance')} marked skip (no WER defined): the estimate is "
        "the WER of the utterances that can be transcribed (an estimated "
        f"{100 * (1 - skipped['unlabellable_share']):.0f} % of the dataset)",
    }


#: ``werest estimate`` says how many more labels would bring each interval to ± this
TARGET_HALF_WIDTH = 0.02


def format_more_labels(records: list[dict], pairs: pd.DataFrame) -> str:
    """The console's advice on more labels: per labelled dataset, the labels that would bring
    every system's interval to ±2 points, and, for each pair of neighbours (in the estimated
    order) not yet separated, the labels that would separate them if their difference held
    (an interval shrinks as 1/√labels)."""
    lines = []
    for dataset in sorted({r["dataset"] for r in records if r.get("method") == "ppi"}):
        mine = sorted(
            (r for r in records if r["dataset"] == dataset and r.get("method") == "ppi"),
            key=lambda r: (r["estimated_wer"], r["system"]),
        )
        need = max(r["more_labels_for_2_points"] for r in mine)
        labelled = max(r["n_labelled"] for r in mine)
        left = max(r.get("n_utterances", np.inf) for r in mine) - labelled  # a census is exact
        census = f"only labelling all {labelled + left:.0f} utterances would"
        reach = (
            "every interval is within ±2 points already"
            if need == 0
            else f"{census} bring every interval to ±2 points"
            if need > left
            else f"about {need:.0f} more labels (beyond {labelled}) would bring every "
            "interval to ±2 points"
        )
        lines.append(f"  {dataset}: {reach}")
        here = pairs[pairs["dataset"] == dataset] if len(pairs) else pairs
        for a, b in pairwise(mine):
            row = here[
                ((here["system_a"] == a["system"]) & (here["system_b"] == b["system"]))
                | ((here["system_a"] == b["system"]) & (here["system_b"] == a["system"]))
            ]
            if row.empty or row["verdict"].iat[0] != "not separable":
                continue
            more = row["more_labels_to_separate"].iat[0]
            lines.append(
                f"    {a['system']} vs {b['system']}: "
                + (
                    "equal estimates: no number of labels is sure to separate them"
                    if not np.isfinite(more)
                    else f"{census} tell them apart"
                    if more > left
                    else f"about {more:.0f} more labels would separate them"
                    " if their difference held"
                )
            )
    return "More labels:\n" + "\n".join(lines) if lines else ""


def ppi_fields(est: Estimates, k: int, settings: LabelSettings) -> dict:
    """System ``k``'s prediction-powered fields of a summary record."""
    return {
        "method": "ppi",
        "estimated_wer": float(est.ppi[k]),
        "interval_low": float(est.ppi_low[k]),
        "interval_high": float(est.ppi_high[k]),
        "interval_level": settings.level,
        "classical_wer": float(est.classical[k]),
        "classical_low": float(est.classical_low[k]),
        "classical_high": float(est.classical_high[k]),
        "unshrunk_wer": float(est.unshrunk[k]),
        "prior_weight": float(est.prior_weight[k]),
        "ppi_lambda": float(est.lam[k]),
        "effective_labels": float(est.effective_labels[k]),
        "more_labels_for_2_points": more_labels(
            int(est.n_labelled[k]), (est.ppi_high[k] - est.ppi_low[k]) / 2, TARGET_HALF_WIDTH
        ),
    }
