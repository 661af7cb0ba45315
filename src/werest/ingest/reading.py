"""Reading text files with one-line errors naming the file and line: UTF-8 only (a binary file
is named by its format, UTF-16 and other encodings get the ``iconv`` line that converts them),
CSV whose records all have the header's fields, and JSON Lines. The transcripts table
(:mod:`werest.ingest.table`) and the importers of real layouts read their files through it.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pandas as pd

from werest.errors import InputError


def check_readable(path: Path) -> None:
    """InputError when ``path`` is missing, a folder, empty or not readable."""
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
    check_readable(path)
    text = decode_utf8(path)
    if not text.strip():
        raise InputError("the file is empty", path=path)
    header = text.lstrip("\ufeff").splitlines()[0]
    if len(next(csv.reader([header], delimiter=sep))) == 1:
        refuse_other_delimiter(path, header, sep)
    return parse_csv(path, text, sep)


def refuse_other_delimiter(path: Path, header: str, sep: str) -> None:
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
