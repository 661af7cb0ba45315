"""The transcripts table: schema, validation, read and write.

One row per (dataset, utt_id, system), long format::

    dataset  utt_id  system  hypothesis  [reference  audio  duration  speaker  language  ...]

* ``hypothesis`` is what ``system`` returned for the utterance. An empty string is a real
  answer (the system returned nothing: every reference word is a deletion). A *missing*
  hypothesis (the system was never run on the utterance) is an absent row; a null in JSONL or
  Parquet means the same and such rows are dropped at load, with a log line saying how many.
  A system whose every hypothesis is null is left out with a WARNING naming it, and a table
  whose every hypothesis is null is refused.
* ``reference`` is the human transcript. Null or blank means the utterance is unlabelled: it
  takes no part in scoring (a blank reference cannot give a WER; in the real data it marks a
  broken label, not silence).
* ``audio`` is a path; relative paths are resolved against the table file's folder.
* ``language`` is the utterance's true language; ``detected_language`` and
  ``detected_language_probability`` are what the system detected (``werest transcribe``
  writes them for faster-whisper), read as text and as a number for :mod:`werest.text.lid`.
* any other column (gender, accent, age, ...) is kept as metadata.

CSV (``.csv``; ``.tsv`` is tab-separated), JSON Lines (``.jsonl``, ``.ndjson``) and Parquet
(``.parquet``) are read and written. Text must be UTF-8 (a BOM is accepted); any other encoding
is refused with the offending line, since guessing an encoding silently corrupts transcripts.
Rows are numbered from 1: in CSV the first row after the header is row 1 (line 2 in an
editor); in JSON Lines a row is named by its line number; in Parquet by its position.
"""

from __future__ import annotations

import csv
import logging
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from werest import logs
from werest.columns import KEY, NUMERIC_COLUMNS, REQUIRED, TEXT_COLUMNS, UTTERANCE
from werest.errors import InputError
from werest.ingest.reading import (
    UTF16_BOMS,
    binary_kind,
    check_not_utf16,
    check_readable,
    check_text,
    decode_utf8,
    json_lines,
    parse_csv,
    read_raw_csv,
    refuse_other_delimiter,
)
from werest.io import atomic_path

# the columns (werest.columns) and the readers of text files (werest.ingest.reading) are
# importable from here too, as they were before they moved
__all__ = [
    "EVERY_HYPOTHESIS_NULL",
    "KEY",
    "NO_HYPOTHESES",
    "NUMERIC_COLUMNS",
    "REQUIRED",
    "TEXT_COLUMNS",
    "UTF16_BOMS",
    "UTTERANCE",
    "binary_kind",
    "check_not_utf16",
    "check_text",
    "decode_utf8",
    "json_lines",
    "parse_csv",
    "read_raw_csv",
    "read_table",
    "resolve_audio",
    "systems_without_hypotheses",
    "table_format",
    "validate_table",
    "warn_without_hypotheses",
    "write_table",
]

log = logging.getLogger(__name__)

CSV_SUFFIXES = {".csv": ",", ".tsv": "\t"}
JSONL_SUFFIXES = {".jsonl", ".ndjson", ".json"}
PARQUET_SUFFIXES = {".parquet", ".pq"}


def table_format(path: str | Path, *, writing: bool = False) -> str:
    """``csv``, ``tsv``, ``jsonl`` or ``parquet`` from the file name; InputError otherwise,
    with the importer of a transcript file read where a table is expected (not ``writing``:
    an output's name is the user's choice, not a Kaldi file)."""
    suffix = Path(path).suffix.lower()
    if suffix in CSV_SUFFIXES:
        return suffix[1:]
    if suffix in JSONL_SUFFIXES:
        return "jsonl"
    if suffix in PARQUET_SUFFIXES:
        return "parquet"
    if writing:
        raise InputError(
            f"unknown table format {suffix or '(no suffix)'!r} to write: name the file .csv, "
            ".tsv, .jsonl or .parquet",
            path=path,
        )
    raise InputError(
        f"unknown table format {suffix or '(no suffix)'!r}; use .csv, .tsv, .jsonl or .parquet"
        + _IMPORT_HINTS.get(suffix, ""),
        path=path,
    )


# Transcript files a user may pass where a table is expected: the importer that reads them.
_KALDI_HINT = (
    "; a Kaldi `text` file (utt-id words...)? make a table first: werest import kaldi "
    "exp/<system>/text ... --out table.parquet"
)
_IMPORT_HINTS = {
    "": _KALDI_HINT,
    ".txt": _KALDI_HINT,
    ".trn": (
        "; an sclite .trn file (words (utt-id))? make a table first: werest import sclite "
        "sysA.trn sysB.trn reference=ref.trn --out table.parquet"
    ),
}


# --------------------------------------------------------------------------- reading


def read_table(
    path: str | Path,
    *,
    required: tuple[str, ...] = REQUIRED,
    numeric: tuple[str, ...] = (),
    warn: bool = True,
) -> pd.DataFrame:
    """Read and validate a transcripts table (CSV, TSV, JSONL or Parquet).

    Parameters
    ----------
    path : the table file.
    required : the columns that must be present (the transcripts schema by default).
    numeric : feature columns that, when present, must hold numbers (see
        :func:`validate_table`).
    warn : warn of the systems left out because every hypothesis of theirs is null (False:
        the caller does, once it has checked its settings; they are in ``attrs``).

    Returns
    -------
    The validated table, string columns as ``str``, rows of missing hypotheses dropped.

    Raises
    ------
    InputError : naming the file, row and column of the first problem found.
    """
    path = Path(path)
    fmt = table_format(path)
    check_readable(path)
    with logs.stage(f"read ({path.name})"):
        return _read_checked(path, fmt, required, numeric, warn)


def _read_checked(
    path: Path, fmt: str, required: tuple[str, ...], numeric: tuple[str, ...], warn: bool
) -> pd.DataFrame:
    if fmt == "parquet":
        frame, line_of = _read_parquet(path), None
    else:
        text = decode_utf8(path)
        if not text.strip():
            raise InputError("the file is empty", path=path)
        if fmt == "jsonl":
            frame, line_of = _read_jsonl(path, text)
        else:
            frame, line_of = _read_csv(path, text, CSV_SUFFIXES[f".{fmt}"]), None
    table = validate_table(
        frame, source=path, required=required, line_of=line_of, numeric=numeric, warn=warn
    )
    return resolve_audio(table, path.parent)


def _read_csv(path: Path, text: str, sep: str) -> pd.DataFrame:
    header = text.lstrip("\ufeff").splitlines()[0]
    _check_required_header(path, next(csv.reader([header], delimiter=sep)), header, sep)
    return parse_csv(path, text, sep)


def _check_required_header(path: Path, columns: list[str], header: str, sep: str) -> None:
    """A header that is one column under ``sep`` but several under another delimiter is
    the usual mistake (a ';' or tab file named .csv): say so instead of 'missing column'."""
    present = {c.strip() for c in columns}
    if all(c in present for c in REQUIRED) or len(columns) > 1:
        return  # column-level problems are reported by validate_table with their names
    refuse_other_delimiter(path, header, sep)


def _read_jsonl(path: Path, text: str) -> tuple[pd.DataFrame, list[int]]:
    lines = json_lines(path, text)
    return pd.DataFrame.from_records([r for _, r in lines]), [n for n, _ in lines]


def _read_parquet(path: Path) -> pd.DataFrame:
    try:
        return pq.read_table(path).to_pandas()
    except (pa.ArrowException, OSError) as error:
        message = " ".join(str(error).split())
        raise InputError(f"not a readable Parquet file: {message}", path=path) from None


# --------------------------------------------------------------------------- validation


def validate_table(
    frame: pd.DataFrame,
    *,
    source: str | Path = "<table>",
    required: tuple[str, ...] = REQUIRED,
    line_of: list[int] | None = None,
    numeric: tuple[str, ...] = (),
    whole: bool = True,
    warn: bool = True,
) -> pd.DataFrame:
    """Check a transcripts table and return it in canonical form.

    ``numeric`` names feature columns (``similarity``, ``pwer``...) that, when present, are
    parsed as float: a blank cell, ``nan``, ``inf`` or ``-inf`` is kept as a non-finite value
    (the row's problem, reported per row by the command that uses it), while text that is not
    a number is an InputError naming the row and column.

    Canonical form: text columns as ``str`` (nulls as ``<NA>``), key and hypothesis cells
    stripped of surrounding white space, blank references as null, rows whose hypothesis is
    null (system not run) dropped, a fresh ``RangeIndex``. A system whose every hypothesis
    is null is left out with a WARNING (``warn=False``: the caller says it), and named in
    ``attrs[NO_HYPOTHESES]``; a table whose every hypothesis is null is an InputError.
    ``whole=False`` (one chunk of a larger input) leaves both to the caller, who sees every
    chunk.

    Raises
    ------
    InputError : a missing required column, a null or non-text key, a non-text hypothesis or
        reference, a non-numeric duration, a duplicate (dataset, utt_id, system), or (with
        ``whole``) no hypothesis that is not null.
    """
    frame = _with_required(frame, source, required)

    def where(position: int) -> dict:
        """Error location of the row at ``position`` (JSONL rows are named by their line)."""
        return {"path": source, "row": line_of[position] if line_of else position + 1}

    frame = _canonical_cells(frame.copy(), numeric, where)
    silent: list[str] = []
    if "hypothesis" in frame.columns:
        frame, silent = _drop_null_hypotheses(frame, source, required, whole=whole, warn=warn)
    _check_unique(frame, source, where)
    frame = frame.reset_index(drop=True)
    if silent:
        frame.attrs[NO_HYPOTHESES] = silent
    return frame


def _with_required(frame: pd.DataFrame, source, required: tuple[str, ...]) -> pd.DataFrame:
    """``frame`` with its column names stripped; InputError when it has no rows or lacks a
    ``required`` column."""
    if frame.shape[0] == 0 and frame.shape[1] == 0:
        raise InputError("the table has no rows", path=source)
    frame = frame.rename(columns=lambda c: str(c).strip())
    for column in required:
        if column not in frame.columns:
            raise InputError(
                "missing required column" + _import_hint(source, column, list(frame.columns)),
                path=source,
                column=column,
            )
    if len(frame) == 0:
        raise InputError("the table has a header but no rows", path=source)
    return frame


def _canonical_cells(frame: pd.DataFrame, numeric: tuple[str, ...], where) -> pd.DataFrame:
    """Text columns as ``str``, key cells stripped (none blank), blank references as null,
    the numeric columns and the ``numeric`` feature columns as float (in place)."""
    for column in [c for c in TEXT_COLUMNS if c in frame.columns]:
        frame[column] = _as_text(frame[column], column, where)
    for column in KEY:
        if column not in frame.columns:
            continue
        blank = frame[column].isna() | (frame[column].str.strip() == "")
        if blank.any():
            raise InputError("empty value in a key column", column=column, **where(_first(blank)))
        frame[column] = frame[column].str.strip()
    if "reference" in frame.columns:
        frame.loc[frame["reference"].str.strip() == "", "reference"] = pd.NA
    for column in [c for c in NUMERIC_COLUMNS if c in frame.columns]:
        frame[column] = _as_number(frame[column], column, where)
    for column in [c for c in numeric if c in frame.columns and c not in NUMERIC_COLUMNS]:
        frame[column] = _as_feature(frame[column], column, where)
    return frame


def _drop_null_hypotheses(
    frame: pd.DataFrame, source, required: tuple[str, ...], *, whole: bool, warn: bool
) -> tuple[pd.DataFrame, list[str]]:
    """``frame`` without its rows of a null hypothesis (said at INFO), and the systems whose
    every hypothesis was null (warned of when ``whole`` and ``warn``); InputError when
    ``whole`` and every hypothesis is null."""
    missing = frame["hypothesis"].isna()
    if not missing.any():
        return frame, []
    log.info(
        "%s: %d row(s) with a null hypothesis (system not run) dropped",
        source,
        int(missing.sum()),
    )
    silent = systems_without_hypotheses(frame, missing)
    if whole and missing.all() and "hypothesis" in required:
        raise InputError(EVERY_HYPOTHESIS_NULL, path=source, column="hypothesis")
    if whole and warn and silent:
        warn_without_hypotheses(source, silent)
    return frame.loc[~missing], silent


#: ``DataFrame.attrs`` key of a validated table: the systems whose every hypothesis was null
#: (left out of the table: they were not run), so that naming one says so
NO_HYPOTHESES = "systems_without_hypotheses"
EVERY_HYPOTHESIS_NULL = (
    "every hypothesis is null (a null means the system was not run): no system's output to work on"
)


def systems_without_hypotheses(frame: pd.DataFrame, missing: pd.Series) -> list[str]:
    """The systems of ``frame`` whose every row has a null hypothesis (``missing``)."""
    if "system" not in frame.columns:
        return []
    return sorted(set(frame.loc[missing, "system"]) - set(frame.loc[~missing, "system"]))


def warn_without_hypotheses(source: object, systems: list[str]) -> None:
    """The WARNING that systems of the input are left out: every hypothesis of theirs is
    null (a system that is named, then silently missing, reads as a bug)."""
    if not systems:
        return
    many = len(systems) > 1
    log.warning(
        "%s: system%s %s left out: %s no hypothesis, every one is null (not run?)",
        source,
        "s" if many else "",
        ", ".join(repr(s) for s in systems),
        "they have" if many else "it has",
    )


#: the importer that makes a transcripts table of a one-system file, by the file's format
_IMPORTER_OF = {"csv": "csv", "tsv": "csv", "jsonl": "manifest", "parquet": "hf"}


def _import_hint(source, column: str, columns: list[str]) -> str:
    """Where a table file lacks a key column (``dataset``, ``system``), the file is most likely
    one system's hypotheses (``id, hypothesis``): the importer that makes a table of it."""
    if column not in KEY or not isinstance(source, Path):
        return ""
    importer = _IMPORTER_OF.get(table_format(source), "csv")
    shown = ", ".join(map(str, columns[:6])) + (", …" if len(columns) > 6 else "")
    return (
        f" (columns: {shown}); one system's hypotheses? make a transcripts table first: "
        f"werest import {importer} {source} --out table.parquet"
    )


def _first(mask: pd.Series | np.ndarray) -> int:
    return int(np.flatnonzero(np.asarray(mask))[0])


def _as_text(series: pd.Series, column: str, where) -> pd.Series:
    if isinstance(series.dtype, pd.StringDtype):  # text or null in every cell (Parquet's)
        return series.astype("str")
    values = series.astype(object)
    is_null = values.isna().to_numpy()
    is_text = np.fromiter((isinstance(v, str) for v in values), bool, len(values))
    bad = ~(is_text | is_null)
    if bad.any():
        position = _first(bad)
        value = values.iloc[position]
        raise InputError(
            f"expected text, got {type(value).__name__} {value!r:.40}",
            column=column,
            **where(position),
        )
    return values.astype("str")


def _as_number(series: pd.Series, column: str, where) -> pd.Series:
    text = series.astype(object).where(series.notna(), None)
    blank = np.fromiter(
        (v is None or (isinstance(v, str) and not v.strip()) for v in text), bool, len(text)
    )
    numbers = pd.to_numeric(text.where(~blank, None), errors="coerce")
    bad = numbers.isna().to_numpy() & ~blank
    if bad.any():
        position = _first(bad)
        raise InputError(
            f"expected a number, got {text.iloc[position]!r:.40}", column=column, **where(position)
        )
    if not np.isfinite(numbers.to_numpy(dtype=float)[~blank]).all():
        position = _first(~np.isfinite(numbers.to_numpy(dtype=float)) & ~blank)
        raise InputError("expected a finite number", column=column, **where(position))
    return numbers.astype(float)


_MISSING_NUMBERS = {"", "nan", "na", "n/a", "null", "none"}


def _as_feature(series: pd.Series, column: str, where) -> pd.Series:
    """A feature column as float: missing/non-finite values kept, other text refused."""
    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        return series.astype(float)
    values = series.astype(object)
    numbers = pd.to_numeric(values.where(values.notna(), None), errors="coerce")
    missing = np.fromiter(
        (
            v is None
            or (isinstance(v, float) and np.isnan(v))
            or (isinstance(v, str) and v.strip().lower() in _MISSING_NUMBERS)
            for v in values
        ),
        bool,
        len(values),
    )
    bad = numbers.isna().to_numpy() & ~missing
    bad |= np.fromiter((isinstance(v, bool) for v in values), bool, len(values))
    if bad.any():
        position = _first(bad)
        raise InputError(
            f"expected a number, got {values.iloc[position]!r:.40}",
            column=column,
            **where(position),
        )
    return numbers.astype(float)


def _check_unique(frame: pd.DataFrame, source, where) -> None:
    key_columns = [c for c in KEY if c in frame.columns]
    duplicated = frame.duplicated(key_columns, keep="first").to_numpy()
    if not duplicated.any():
        return
    position = _first(duplicated)
    key = tuple(frame.iloc[position][key_columns])
    first = _first((frame[key_columns] == pd.Series(key, index=key_columns)).all(axis=1).to_numpy())
    raise InputError(
        f"duplicate ({', '.join(key_columns)}) = {key}, first seen at row {first + 1}",
        column="utt_id",
        **where(position),
    )


# --------------------------------------------------------------------------- writing


def write_table(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write a table as CSV, TSV, JSONL or Parquet (by suffix), atomically."""
    path = Path(path)
    fmt = table_format(path, writing=True)
    with atomic_path(path) as tmp:
        if fmt == "parquet":
            frame.to_parquet(tmp, index=False)
        elif fmt == "jsonl":
            frame.to_json(tmp, orient="records", lines=True, force_ascii=False)
        else:
            frame.to_csv(tmp, index=False, sep=CSV_SUFFIXES[f".{fmt}"])
    return path


def resolve_audio(frame: pd.DataFrame, base: str | Path) -> pd.DataFrame:
    """Make relative ``audio`` paths absolute against ``base`` (a table file's folder)."""
    if "audio" not in frame.columns:
        return frame
    base = Path(base)
    paths = frame["audio"]
    relative = paths.notna() & ~paths.fillna("").map(lambda p: os.path.isabs(p) or p == "")
    if relative.any():
        frame = frame.copy()
        frame.loc[relative, "audio"] = [str((base / p).resolve()) for p in paths[relative]]
    return frame
