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
import io
import json
import logging
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from werest import logs
from werest.errors import InputError
from werest.io import atomic_path

log = logging.getLogger(__name__)

#: the transcripts table's key (a list, so ``frame[KEY]`` selects the columns), and an utterance's
KEY: list[str] = ["dataset", "utt_id", "system"]
UTTERANCE: list[str] = ["dataset", "utt_id"]
REQUIRED: tuple[str, ...] = (*KEY, "hypothesis")
TEXT_COLUMNS: tuple[str, ...] = (
    *REQUIRED, "reference", "audio", "speaker", "language", "detected_language",
)  # fmt: skip
NUMERIC_COLUMNS: tuple[str, ...] = (
    "duration", "processing_seconds", "detected_language_probability",
)  # fmt: skip


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
    _check_readable(path)
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


def _check_readable(path: Path) -> None:
    if not path.exists():
        raise InputError("no such file", path=path)
    if path.is_dir():
        raise InputError("is a folder, expected a table file", path=path)
    if path.stat().st_size == 0:
        raise InputError("the file is empty", path=path)
    if not os.access(path, os.R_OK):
        raise InputError("the file is not readable (permission denied)", path=path)


#: Byte-order marks of the encodings a spreadsheet's "Unicode text" export uses.
UTF16_BOMS = {b"\xff\xfe": "utf-16", b"\xfe\xff": "utf-16"}


def check_not_utf16(head: bytes, path: Path) -> None:
    """InputError with the right ``iconv`` line when the file starts with a UTF-16 byte-order
    mark (its first bytes are not UTF-8, and a latin1 hint would garble it)."""
    for bom, encoding in UTF16_BOMS.items():
        if head.startswith(bom):
            raise InputError(
                f"a {encoding.upper()} file (byte-order mark 0x{bom.hex()}); werest reads "
                f"UTF-8 only: re-encode it, e.g. iconv -f {encoding} -t utf-8",
                path=path,
            )


_AUDIO = "audio goes in a table's `audio` column (werest transcribe reads it)"
#: the first bytes of files handed over by mistake: (signature, what the file is, what to do)
_SIGNATURES: tuple[tuple[bytes, str, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image", ""),
    (b"\xff\xd8\xff", "a JPEG image", ""),
    (b"GIF87a", "a GIF image", ""),
    (b"GIF89a", "a GIF image", ""),
    (b"%PDF-", "a PDF document", ""),
    (b"PAR1", "a Parquet file", "name it .parquet (or werest import hf FILE for a dataset's)"),
    (b"PK\x03\x04", "a ZIP archive (an .xlsx workbook?)", "export the sheet as CSV"),
    (b"\x1f\x8b", "gzip-compressed", "decompress it first: gunzip FILE"),
    (b"\xfd7zXZ\x00", "xz-compressed", "decompress it first: unxz FILE"),
    (b"RIFF", "a RIFF (WAV) audio file", _AUDIO),
    (b"fLaC", "a FLAC audio file", _AUDIO),
    (b"OggS", "an Ogg audio file", _AUDIO),
    (b"ID3\x03", "an MP3 audio file", _AUDIO),
    (b"ID3\x04", "an MP3 audio file", _AUDIO),
    (b"SQLite format 3\x00", "an SQLite database", "export the table as CSV"),
    (b"\x7fELF", "an executable", ""),
)


def binary_kind(head: bytes) -> tuple[str, str] | None:
    """(what the file is, what to do) when its first bytes are a known binary format's
    signature (an image, an archive, audio, Parquet ...), else None."""
    for signature, what, hint in _SIGNATURES:
        if head.startswith(signature):
            return what, hint
    return None


def check_text(head: bytes, path: Path) -> None:
    """InputError naming the format when ``head`` (a file's first bytes) is not text at all:
    a PNG named .csv is "not a text file: a PNG image", not a re-encoding hint."""
    check_not_utf16(head, path)
    kind = binary_kind(head)
    if kind is not None:
        what, hint = kind
        raise InputError(
            f"not a text file: {what}{'; ' + hint if hint else ''}; werest reads UTF-8 text "
            "(and .parquet tables)",
            path=path,
        )


def decode_utf8(path: Path) -> str:
    """The file as text; InputError naming the line for non-UTF-8 bytes or a NUL byte (a
    binary file, or UTF-16 text, which is valid UTF-8 byte by byte when it is ASCII)."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror}", path=path) from None
    check_text(data[:16], path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        bad = data[error.start : error.start + 1].hex()
        raise InputError(
            f"line {line}: not valid UTF-8 (byte 0x{bad} at offset {error.start}); "
            "werest reads UTF-8 only: re-encode the file, e.g. iconv -f latin1 -t utf-8",
            path=path,
        ) from None
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise InputError(
            f"line {line}: NUL byte at offset {nul}: a binary file or UTF-16 text; werest "
            "reads UTF-8 only: re-encode the file, e.g. iconv -f utf-16 -t utf-8",
            path=path,
        )
    return text


def _read_csv(path: Path, text: str, sep: str) -> pd.DataFrame:
    header = text.lstrip("\ufeff").splitlines()[0]
    _check_required_header(path, next(csv.reader([header], delimiter=sep)), header, sep)
    return parse_csv(path, text, sep)


def parse_csv(path: Path, text: str, sep: str = ",") -> pd.DataFrame:
    """Parse CSV text as strings (blank cells as ''), failing with the file's name."""
    _check_field_counts(path, text, sep)
    try:
        return pd.read_csv(
            io.StringIO(text),
            sep=sep,
            dtype=str,
            keep_default_na=False,
            na_filter=False,
            index_col=False,
        )
    except (pd.errors.ParserError, csv.Error, ValueError) as error:
        message = " ".join(str(error).split())
        raise InputError(
            f"not a well-formed {sep!r}-separated table: {message}", path=path
        ) from None


def _check_field_counts(path: Path, text: str, sep: str) -> None:
    """Refuse records whose field count differs from the header's (row numbers from 1)."""
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")), delimiter=sep)
    row = -1  # still reading the header
    try:
        header = next(reader, None)
        if header is None:
            return
        row = 0
        for row, fields in enumerate(reader, start=1):
            if fields and len(fields) != len(header):
                raise InputError(
                    f"{len(fields)} fields, the header has {len(header)}", path=path, row=row
                )
    except csv.Error as error:  # e.g. a bare carriage return inside an unquoted field
        if row < 0:
            raise InputError(
                f"the header is not a well-formed CSV record: {error}", path=path
            ) from None
        raise InputError(f"not a well-formed CSV record: {error}", path=path, row=row + 1) from None


def read_raw_csv(path: str | Path, sep: str = ",") -> pd.DataFrame:
    """Any UTF-8 CSV file (not only a transcripts table) as strings, checked for readability;
    a one-column header that another delimiter would split is refused as such."""
    path = Path(path)
    _check_readable(path)
    text = decode_utf8(path)
    if not text.strip():
        raise InputError("the file is empty", path=path)
    header = text.lstrip("\ufeff").splitlines()[0]
    if len(next(csv.reader([header], delimiter=sep))) == 1:
        _refuse_other_delimiter(path, header, sep)
    return parse_csv(path, text, sep)


def _check_required_header(path: Path, columns: list[str], header: str, sep: str) -> None:
    """A header that is one column under ``sep`` but several under another delimiter is
    the usual mistake (a ';' or tab file named .csv): say so instead of 'missing column'."""
    present = {c.strip() for c in columns}
    if all(c in present for c in REQUIRED) or len(columns) > 1:
        return  # column-level problems are reported by validate_table with their names
    _refuse_other_delimiter(path, header, sep)


def _refuse_other_delimiter(path: Path, header: str, sep: str) -> None:
    """InputError when a one-column ``header`` is really separated by another delimiter."""
    try:
        sniffed = csv.Sniffer().sniff(header, delimiters=",;\t|").delimiter
    except csv.Error:
        return
    if sniffed != sep:
        raise InputError(
            f"the header looks {sniffed!r}-separated, but {path.suffix} files are {sep!r}-"
            f"separated: convert it, or name it .tsv if it is tab-separated",
            path=path,
            row=None,
        )


def _read_jsonl(path: Path, text: str) -> tuple[pd.DataFrame, list[int]]:
    lines = json_lines(path, text)
    return pd.DataFrame.from_records([r for _, r in lines]), [n for n, _ in lines]


def json_lines(path: Path, text: str, layout: str | None = None) -> list[tuple[int, dict]]:
    """(line number, object) of each non-blank line of JSON Lines ``text``, read from ``path``:
    the one JSONL reader (tables, and the manifest importer's ``layout="a NeMo manifest"``,
    which its errors name).

    Lines end at ``\n`` only (and a ``\r`` before it is whitespace to JSON): ``str.splitlines``
    would also cut at U+2028, U+0085 and other characters a JSON string may hold unescaped.
    """
    records = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            hint = f": {layout} holds one JSON object per line" if layout else ""
            raise InputError(
                f"not valid JSON ({error.msg} at character {error.colno}){hint}",
                path=path,
                row=number,
            ) from None
        if not isinstance(record, dict):
            raise InputError(
                f"expected one JSON object per line{f' ({layout})' if layout else ''}, got "
                f"{type(record).__name__}",
                path=path,
                row=number,
            )
        records.append((number, record))
    return records


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

    def where(position: int) -> dict:
        """Error location of the row at ``position`` (JSONL rows are named by their line)."""
        return {"path": source, "row": line_of[position] if line_of else position + 1}

    frame = frame.copy()
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
    silent: list[str] = []
    if "hypothesis" in frame.columns:
        missing = frame["hypothesis"].isna()
        if missing.any():
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
            frame = frame.loc[~missing]
    _check_unique(frame, source, where)
    frame = frame.reset_index(drop=True)
    if silent:
        frame.attrs[NO_HYPOTHESES] = silent
    return frame


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
