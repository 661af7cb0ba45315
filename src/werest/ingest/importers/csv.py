"""Generic CSV/TSV: one file per system, with an id, a reference and a hypothesis column.

``werest import csv whisper.csv wav2vec2.csv --out table.parquet`` makes one row per file row:

* ``utt_id`` from ``id_column`` (default ``id``), ``reference`` from ``reference_column``
  (default ``reference``; ``reference_column=null`` for unlabelled files), ``hypothesis`` from
  ``hypothesis_column`` (default ``hypothesis``);
* ``system`` = ``system=`` (one file only) or the file's stem (``whisper``); ``dataset`` =
  ``dataset=`` or the file's folder name (``data/test/whisper.csv`` -> ``test``);
* every other column (``duration``, ``speaker``, ``language``, ``audio``...) is kept;
  relative ``audio`` paths are resolved against the file's folder;
* ``.tsv`` files are tab-separated, ``.csv`` comma-separated; text must be UTF-8 (checked as
  for transcripts tables); every cell is read as text and blank cells stay ``""``: a blank
  hypothesis is an empty hypothesis (the system returned nothing), a blank reference marks an
  unlabelled utterance;
* errors name the file, row (1 = the first row after the header) and column: a missing column
  (listing the columns found), a blank id, an id repeated (naming both rows), two files giving
  the same (dataset, system), a file column named like a column werest sets
  (``dataset``, ``system``, ``utt_id``...).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from werest.errors import ConfigError, InputError
from werest.ingest.importers._common import (
    NamedColumns,
    check_one_system,
    load_each,
    refuse_first,
    require_path,
)
from werest.ingest.reading import read_raw_csv
from werest.ingest.table import resolve_audio, validate_table

log = logging.getLogger("werest.ingest.importers.csv")

SEPARATORS = {".csv": ",", ".tsv": "\t"}
_SET = ("hypothesis", "reference")  # with reference_column=None a 'reference' column clashes


def load(paths: list[Path], **options: object) -> pd.DataFrame:
    """Import one CSV/TSV per system.

    Parameters
    ----------
    paths : the files, one per system.
    options : the :class:`~werest.ingest.importers._common.NamedColumns` (others, and
        ``hypothesis_columns``, are ignored). ``id_column``, ``reference_column``,
        ``hypothesis_column``: the columns holding the utterance id, the reference (None: the
        files have none) and the hypothesis. ``system``: the system name, for one file only
        (default: each file's stem). ``dataset``: the dataset name (default: each file's
        folder name).

    Returns
    -------
    The rows of every file: dataset, utt_id, system, hypothesis, [reference], other columns.

    Raises
    ------
    ConfigError : ``system=`` with several files, or two of the three columns the same.
    InputError : naming file, row and column (see the module docstring).
    """
    columns = NamedColumns.of(options)
    check_one_system(columns.system, paths, "file", "its file's stem")
    roles = (columns.id_column, columns.reference_column, columns.hypothesis_column)
    named = [c for c in roles if c]
    if len(set(named)) < len(named):
        raise ConfigError(
            f"id_column, reference_column and hypothesis_column must differ, got {named}"
        )
    return load_each(paths, load_file, columns=columns)


def load_file(path: Path, *, columns: NamedColumns) -> pd.DataFrame:
    """The rows of one system's file (see :func:`load`)."""
    require_path(path, folder=False)
    separator = SEPARATORS.get(path.suffix.lower())
    if separator is None:
        raise InputError(
            f"expected a .csv or .tsv file, got {path.suffix or 'no suffix'!r}", path=path
        )
    frame = read_raw_csv(path, sep=separator)
    frame = frame.rename(columns=lambda c: str(c).strip())
    if len(frame) == 0:
        raise InputError("the file has a header but no rows", path=path)
    id_column = columns.id_column
    renamed = _renamed_columns(
        frame, path, id_column, columns.reference_column, columns.hypothesis_column
    )
    ids = _utterance_ids(frame, path, id_column)
    frame = frame.rename(columns=renamed)
    frame["utt_id"] = ids
    frame.insert(0, "dataset", columns.dataset or path.resolve().parent.name or "csv")
    frame.insert(2, "system", columns.system or path.stem)
    if "reference" in frame.columns:
        unlabelled = int((frame["reference"].str.strip() == "").sum())
        if unlabelled:
            log.info("%s: %d blank reference(s): unlabelled", path, unlabelled)
    first = ["dataset", "utt_id", "system", "hypothesis", "reference"]
    order = [c for c in first if c in frame.columns]
    frame = frame[order + [c for c in frame.columns if c not in order]]
    frame = validate_table(frame, source=path)  # numeric columns checked with this file's rows
    return resolve_audio(frame, path.resolve().parent)


def _renamed_columns(
    frame: pd.DataFrame,
    path: Path,
    id_column: str,
    reference_column: str | None,
    hypothesis_column: str,
) -> dict[str, str]:
    """The file's columns werest renames (to ``utt_id``, ``hypothesis``, ``reference``);
    InputError for one missing, or for another column named like a column werest sets."""
    wanted = [c for c in (id_column, hypothesis_column, reference_column) if c]
    for column in wanted:
        if column not in frame.columns:
            found = ", ".join(map(repr, frame.columns))
            hint = {
                id_column: "id_column=NAME",
                hypothesis_column: "hypothesis_column=NAME",
                reference_column: "reference_column=NAME, or reference_column=null for a file "
                "without references",
            }[column]
            raise InputError(
                f"missing column (columns found: {found}); name it with {hint}",
                path=path,
                column=column,
            )
    renamed = {id_column: "utt_id", hypothesis_column: "hypothesis"}
    if reference_column:
        renamed[reference_column] = "reference"
    for column in frame.columns:
        if column not in renamed and column in ("dataset", "system", "utt_id", *_SET):
            hint = (
                "reference_column=null says the file has none: drop that setting or rename it"
                if column == "reference"
                else "rename it"
            )
            raise InputError(
                f"a column named {column!r} clashes with the one werest sets; {hint}",
                path=path,
                column=column,
            )
    return renamed


def _utterance_ids(frame: pd.DataFrame, path: Path, id_column: str) -> pd.Series:
    """The file's utterance ids, stripped; InputError for a blank or a repeated one."""
    ids = frame[id_column].str.strip()
    refuse_first(ids == "", "empty utterance id", path=path, column=id_column)
    repeated = ids.duplicated()
    if repeated.any():
        row = _first(repeated)
        first = _first(ids == ids.iloc[row])
        raise InputError(
            f"utterance id {ids.iloc[row]!r} appears twice: rows {first + 1} and {row + 1}",
            path=path,
            row=row + 1,
            column=id_column,
        )
    return ids


def _first(mask: pd.Series) -> int:
    return int(mask.to_numpy().argmax())
