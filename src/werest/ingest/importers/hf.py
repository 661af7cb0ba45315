"""Hugging Face ``datasets`` on disk: ``save_to_disk`` folders, their Arrow shards, Parquet files.

``werest import hf preds/whisper-small preds/wav2vec2 --out table.parquet``. A path is

* a folder written by ``Dataset.save_to_disk``: ``state.json`` (its ``_data_files`` list the
  shards, in order), ``dataset_info.json`` and ``data-NNNNN-of-NNNNN.arrow`` shards in Arrow's
  IPC streaming format; read with pyarrow (the ``datasets`` library is not needed);
* a folder written by ``DatasetDict.save_to_disk``: ``dataset_dict.json`` (``{"splits":
  [...]}``) and one such folder per split, each split its own dataset ``<dataset>-<split>``;
* a ``.parquet`` file (``Dataset.to_parquet``, a Hub ``data/<split>-NNNNN-of-NNNNN.parquet``
  shard) or one ``.arrow`` shard.

Rows, one per (row, hypothesis column):

* the columns are named with ``id_column=``, ``reference_column=`` (``null``: none) and
  ``hypothesis_column=`` (or ``hypothesis_columns=[a,b]``: several systems, each named like
  its column, ``pred_text_<x>`` -> ``x``). Left at their defaults (``id``, ``reference``,
  ``hypothesis``) and absent, they are guessed from common names, the first present in
  :data:`GUESSES` (``text``, ``transcription``, ``sentence``... for the reference;
  ``prediction``, ``pred_text``... for the hypothesis); a column named otherwise must exist;
* ``system`` = ``system=`` (one path) or the folder's (file's) name; ``dataset`` =
  ``dataset=`` or the name of the folder holding it (as the csv importer names them);
* ids: text or whole numbers (FLEURS' ``id``), never blank or repeated; a null hypothesis =
  not run (no row), ``""`` = an empty hypothesis; a blank or null reference = unlabelled;
* kept: every other column of text, numbers or booleans; a ``ClassLabel`` column as its
  label names (``gender``: ``female``, not ``1``), a numeric ``speaker`` as text; columns of
  lists, structs or bytes (the ``Audio`` feature's samples) are dropped: a column of audio
  paths named ``audio`` is kept as ``audio``, resolved against the folder; a column named
  like one werest sets
  (``dataset``, an ESB dataset's, ``system``...) is kept as ``source_<name>``;
* refused, naming the file, row (1 = the first row) and column: a folder without
  ``state.json`` or ``dataset_dict.json``, an unreadable ``state.json`` or shard, a missing
  column (listing those found), a column of the wrong type, an empty or repeated id, two
  paths giving the same (dataset, system).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from werest.errors import ConfigError, InputError
from werest.ingest.importers._common import (
    NamedColumns,
    check_one_system,
    claim_origin,
    column_systems,
    metadata_values,
    read_json,
    require_path,
    source_name,
)
from werest.ingest.table import resolve_audio, validate_table

log = logging.getLogger("werest.ingest.importers.hf")

STATE = "state.json"
DATASET_DICT = "dataset_dict.json"
#: the column names tried, in order, for a setting left at its default and absent
GUESSES: dict[str, tuple[str, ...]] = {
    "id": ("id", "utt_id", "utterance_id", "segment_id", "audio_id", "key", "file", "path"),
    "reference": (
        "reference", "text", "transcription", "transcript", "sentence", "normalized_text",
        "references", "ref",
    ),
    "hypothesis": (
        "hypothesis", "prediction", "predictions", "pred_text", "pred", "hyp", "hypotheses",
    ),
}  # fmt: skip
_HINTS = {
    "id": "name it with id_column=NAME",
    "reference": "name it with reference_column=NAME, or reference_column=null for a dataset "
    "without references",
    "hypothesis": "name it with hypothesis_column=NAME (hypothesis_columns=[a,b] for several "
    "systems)",
}


def load(paths: list[Path], **options: object) -> pd.DataFrame:
    """Import datasets saved by Hugging Face ``datasets`` (see the module docstring);
    ``options``: the :class:`~werest.ingest.importers._common.NamedColumns` (others are
    ignored).

    Raises
    ------
    ConfigError : ``system=`` with several paths, or one column named for two roles.
    InputError : naming the file, row and column (see the module docstring).
    """
    columns = NamedColumns.of(options)
    check_one_system(columns.system, paths, "path", "its folder or file")
    named = columns.hypotheses()
    frames = []
    origin: dict[tuple[str, str], Path] = {}
    for path in paths:
        require_path(path)
        base = columns.dataset or path.resolve().parent.name or "hf"
        name = path.name if path.is_dir() else path.stem
        for split, source, table in read_dataset(path):
            frame = dataset_rows(
                table,
                source=source,
                dataset=f"{base}-{split}" if split else base,
                file_system=name,
                columns=columns,
                named=named,
            )
            claim_origin(origin, frame, source, noun="path")
            frames.append(frame)
    return pd.concat(frames, ignore_index=True, sort=False)


# --------------------------------------------------------------------------- reading


def read_dataset(path: Path) -> list[tuple[str | None, Path, pa.Table]]:
    """(split or None, the path errors name, the table) of each dataset at ``path``."""
    if path.is_dir():
        if (path / DATASET_DICT).is_file():
            return [(split, path / split, read_saved(path / split)) for split in _splits(path)]
        if (path / STATE).is_file():
            return [(None, path, read_saved(path))]
        raise InputError(
            f"not a Hugging Face datasets folder: no {STATE} (Dataset.save_to_disk) or "
            f"{DATASET_DICT} (DatasetDict.save_to_disk) in it",
            path=path,
        )
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return [(None, path, read_parquet(path))]
    if suffix == ".arrow":
        return [(None, path, read_arrow(path))]
    raise InputError(
        "expected a datasets folder (save_to_disk), a .parquet or an .arrow file", path=path
    )


def _splits(folder: Path) -> list[str]:
    path = folder / DATASET_DICT
    data = read_json(path)
    splits = data.get("splits") if isinstance(data, dict) else None
    _check_list(splits, _split_name, "split names", path, "splits")
    for split in splits:
        if not (folder / split / STATE).is_file():
            raise InputError(f"split {split!r} has no folder with a {STATE} beside it", path=path)
    return splits


def _check_list(value: object, valid, items: str, path: Path, column: str) -> None:
    """InputError unless ``value`` is a non-empty list of ``valid`` items."""
    if not isinstance(value, list) or not value or not all(valid(item) for item in value):
        raise InputError(
            f"expected a non-empty list of {items}, got {value!r:.60}", path=path, column=column
        )


def _split_name(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip()) and "/" not in value


def _data_file(value: object) -> bool:
    return isinstance(value, dict) and isinstance(value.get("filename"), str)


def read_saved(folder: Path) -> pa.Table:
    """The rows of a ``Dataset.save_to_disk`` folder: the shards ``state.json`` lists."""
    path = folder / STATE
    state = read_json(path)
    files = state.get("_data_files") if isinstance(state, dict) else None
    _check_list(files, _data_file, "{'filename': ...}", path, "_data_files")
    tables = [read_arrow(folder / f["filename"]) for f in files]
    try:
        return pa.concat_tables(tables)
    except pa.ArrowInvalid as error:
        message = " ".join(str(error).split())
        raise InputError(f"the shards' columns differ: {message}", path=folder) from None


def read_arrow(path: Path) -> pa.Table:
    """An Arrow IPC stream (what ``datasets`` writes), or an Arrow IPC file."""
    require_path(path, folder=False)
    try:
        source = pa.memory_map(str(path))
        try:
            return pa.ipc.open_stream(source).read_all()
        except pa.ArrowInvalid:
            return pa.ipc.open_file(source).read_all()
    except (pa.ArrowException, OSError) as error:
        message = " ".join(str(error).split())
        raise InputError(
            f"not an Arrow stream file (what save_to_disk writes): {message}", path=path
        ) from None


def read_parquet(path: Path) -> pa.Table:
    require_path(path, folder=False)
    try:
        return pq.read_table(path)
    except (pa.ArrowException, OSError) as error:
        message = " ".join(str(error).split())
        raise InputError(f"not a readable Parquet file: {message}", path=path) from None


# --------------------------------------------------------------------------- rows


def dataset_rows(
    table: pa.Table,
    *,
    source: Path,
    dataset: str,
    file_system: str,
    columns: NamedColumns,
    named: list[str] | None,
) -> pd.DataFrame:
    """The transcripts rows of one dataset's table (see :func:`load`; ``named``: the
    hypothesis columns named)."""
    if table.num_rows == 0:
        raise InputError("the dataset has no rows", path=source)
    id_name, reference, hypotheses = _roles(
        table.column_names, columns.id_column, columns.reference_column, named, source
    )
    systems = column_systems(hypotheses, file_system, columns.system)
    ids = _texts(table, id_name, source, ids=True)
    _check_ids(ids, id_name, source)
    references = _texts(table, reference, source) if reference else None
    extras = _metadata(table, [c for c in (id_name, reference, *hypotheses) if c], source)
    frames, rows = [], []
    for column in hypotheses:
        frame = pd.DataFrame(
            {
                "dataset": dataset,
                "utt_id": ids,
                "system": systems[column],
                "hypothesis": _texts(table, column, source),
            }
        )
        if references is not None:
            frame["reference"] = references
        for name, values in extras.items():
            frame[name] = values
        frames.append(frame)
        rows.extend(range(1, table.num_rows + 1))
    frame = pd.concat(frames, ignore_index=True)
    frame = validate_table(frame, source=source, line_of=rows)
    return resolve_audio(frame, source if source.is_dir() else source.parent)


def _roles(
    columns: list[str],
    id_column: str | None,
    reference_column: str | None,
    named: list[str] | None,
    source: Path,
) -> tuple[str | None, str | None, list[str]]:
    """The id, reference (None: unlabelled) and hypothesis columns (:func:`_column`);
    ConfigError when one column is named for two roles."""
    id_name = _column(columns, "id", id_column, source)
    reference = _column(columns, "reference", reference_column, source)
    if named:
        for column in named:
            if column not in columns:
                raise _missing(
                    columns, column, "check hypothesis_column= / hypothesis_columns=", source
                )
        hypotheses = named
    else:
        hypotheses = [_column(columns, "hypothesis", "hypothesis", source)]
    roles = [c for c in (id_name, reference, *hypotheses) if c]
    if len(set(roles)) < len(roles):
        raise ConfigError(
            f"{source}: one column named for two roles (id {id_name!r}, reference "
            f"{reference!r}, hypotheses {hypotheses})"
        )
    log.info("%s: id %r, reference %r, hypotheses %s", source, id_name, reference, hypotheses)
    return id_name, reference, hypotheses


def _metadata(table: pa.Table, roles: list[str], source: Path) -> dict[str, list]:
    """The table's other columns kept as metadata, by their table names: text, numbers,
    booleans and ``ClassLabel`` names (lists, structs and bytes dropped, said at INFO)."""
    labels = _class_labels(table)
    extras, dropped = {}, []
    for column in table.column_names:
        if column in roles:
            continue
        values = _scalars(table, column, labels.get(column))
        if values is None:
            dropped.append(column)
        else:
            extras[source_name(column)] = metadata_values(source_name(column), values)
    if dropped:
        log.info("%s: columns %s hold lists, structs or bytes: not kept", source, dropped)
    return extras


def _missing(columns: list[str], column: str, hint: str, source: Path) -> InputError:
    found = ", ".join(map(repr, columns))
    return InputError(
        f"missing column (columns found: {found}); {hint}", path=source, column=column
    )


def _column(columns: list[str], role: str, given: str | None, source: Path) -> str | None:
    """The column playing ``role``: the one given, else (given at its default, or None for
    the id and hypothesis) the first of :data:`GUESSES` present."""
    if given is None and role == "reference":
        return None
    if given is not None and given in columns:
        return given
    if given not in (None, role):
        raise _missing(columns, given, _HINTS[role], source)
    for candidate in GUESSES[role]:
        if candidate in columns:
            return candidate
    tried = ", ".join(GUESSES[role])
    raise _missing(columns, role, f"none of {tried}: {_HINTS[role]}", source)


def _texts(table: pa.Table, column: str, source: Path, *, ids: bool = False) -> list:
    """A column's values as str or None; InputError unless it holds text (or, for ids, whole
    numbers)."""
    array = table.column(column)
    kind = array.type
    if pa.types.is_dictionary(kind):
        array, kind = array.cast(kind.value_type), kind.value_type
    text = pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_null(kind)
    text = text or (hasattr(pa.types, "is_string_view") and pa.types.is_string_view(kind))
    if not (text or (ids and pa.types.is_integer(kind))):
        expected = "text or whole numbers" if ids else "text"
        raise InputError(f"holds {kind}, expected {expected}", path=source, column=column)
    if not pa.types.is_string(kind):
        array = pc.cast(array, pa.string())
    return array.to_pylist()


def _check_ids(ids: list, column: str, source: Path) -> None:
    first: dict[str, int] = {}
    for row, value in enumerate(ids, start=1):
        if value is None or not value.strip():
            raise InputError("empty utterance id", path=source, row=row, column=column)
        value = value.strip()
        if value in first:
            raise InputError(
                f"utterance id {value!r} appears twice: rows {first[value]} and {row}; name a "
                "unique column with id_column=",
                path=source,
                row=row,
                column=column,
            )
        first[value] = row


def _class_labels(table: pa.Table) -> dict[str, list[str]]:
    """``{column: label names}`` of the ``ClassLabel`` features the schema's ``huggingface``
    metadata declares (the labels are stored as integers)."""
    raw = (table.schema.metadata or {}).get(b"huggingface")
    try:
        features = json.loads(raw)["info"]["features"] if raw else {}
    except (ValueError, KeyError, TypeError):
        return {}
    if not isinstance(features, dict):
        return {}
    return {
        column: feature["names"]
        for column, feature in features.items()
        if isinstance(feature, dict)
        and feature.get("_type") == "ClassLabel"
        and isinstance(feature.get("names"), list)
    }


def _scalars(table: pa.Table, column: str, labels: list[str] | None) -> list | None:
    """A metadata column's values, or None for a column that is not text, numbers or
    booleans; ``ClassLabel`` integers as their names (-1, no label, as null)."""
    array = table.column(column)
    kind = array.type
    if pa.types.is_dictionary(kind):
        array, kind = array.cast(kind.value_type), kind.value_type
    if labels is not None and pa.types.is_integer(kind):
        return [
            labels[v] if v is not None and 0 <= v < len(labels) else None for v in array.to_pylist()
        ]
    text = pa.types.is_string(kind) or pa.types.is_large_string(kind)
    if text or pa.types.is_integer(kind) or pa.types.is_floating(kind):
        return array.to_pandas().tolist()
    if pa.types.is_boolean(kind):
        return array.to_pylist()
    return None
