"""NeMo and Open ASR Leaderboard manifests: JSON Lines, one utterance per line, with predictions.

``werest import manifest whisper.json canary.json --out table.parquet``. The format (NeMo's ASR
manifest, which the Open ASR Leaderboard's ``write_manifest`` also writes):

* one JSON object per line: ``audio_filepath`` (required on every line: how the format is
  recognised), ``duration`` (seconds), ``text`` (the reference) and, in a manifest of system
  outputs (NeMo's ``transcribe_speech.py``, the leaderboard's ``results/*.jsonl``),
  ``pred_text`` (the hypothesis); NeMo also allows ``offset`` (a segment of a longer file);
  the leaderboard adds ``time`` (the seconds the model took) and any ``extra_fields``;
* several systems in one file: ``pred_text`` and ``pred_text_<system>`` fields (system
  ``<system>``), or the fields named by ``hypothesis_columns=[a,b]`` (each a system named like
  the field, ``pred_text_<x>`` -> ``x``); ``hypothesis_column=F`` names one field; any other
  ``pred_text*`` field is not read;
* the file's system (its ``pred_text``, or its only prediction field): ``system=`` (one file),
  else the leaderboard's model id when the name is ``MODEL_<model>_DATASET_<dataset>.jsonl``
  (``openai-whisper-tiny.en`` -> ``openai/whisper-tiny.en``, the leaderboard scorer's own
  reading), else the file's stem;
* the dataset: ``dataset=``, else the leaderboard name's ``<dataset>`` part, else the file's
  folder name;
* the utterance id: the ``utt_id`` field, else ``id``, when the manifest has one (every line
  must then), else the audio file's stem (``<stem>@<offset>`` for a segment at a non-zero
  ``offset``); ``id_column=F`` names another field;
* the reference: the ``text`` field (``reference_column=F`` for another, ``null`` for none); a
  manifest without ``text`` is unlabelled, as are blank or null ``text`` values;
* a null or absent prediction = the system was not run on that line (no row); ``""`` = an
  empty hypothesis;
* kept: ``audio`` (``audio_filepath``, relative paths resolved against the manifest's folder
  as NeMo does; the leaderboard's ``sample_<n>`` placeholders are not paths and give no
  audio), ``duration``, ``time`` as ``processing_seconds`` (one prediction field only), and
  every other field whose values are scalars (text, numbers, booleans); lists and objects
  (word timestamps, reference lattices) are dropped; a numeric ``speaker`` or ``language``
  is read as text; a field named like a column werest sets (``dataset``, ``system``,
  ``hypothesis``, ``audio``...) is kept as ``source_<name>``;
* refused, naming the file, line and field: a line that is not a JSON object, a missing or
  empty ``audio_filepath``, no prediction field in the file, a prediction, reference or id of
  the wrong type, an id repeated (both lines named), a non-numeric ``duration``, two files
  giving the same (dataset, system).
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pandas as pd

from werest.errors import ConfigError, InputError
from werest.ingest.importers._common import (
    PRED_TEXT,
    SET_COLUMNS,
    NamedColumns,
    check_one_system,
    column_systems,
    load_each,
    metadata_values,
    require_path,
    source_name,
)
from werest.ingest.reading import decode_utf8, json_lines
from werest.ingest.table import resolve_audio, validate_table

log = logging.getLogger("werest.ingest.importers.manifest")

AUDIO = "audio_filepath"
REFERENCE = "text"
#: the id fields tried, in order, before the audio file's stem
ID_FIELDS = ("utt_id", "id")
#: the Open ASR Leaderboard's result file name (normalizer/eval_utils.py ``write_manifest``)
LEADERBOARD_FILE = re.compile(r"^MODEL_(?P<model>.+?)_DATASET_(?P<dataset>.+)$")
#: what the leaderboard writes for a sample without an audio path
_PLACEHOLDER = re.compile(r"^sample_\d+$")
_SCALAR = (str, int, float, bool)


def load(paths: list[Path], **options: object) -> pd.DataFrame:
    """Import NeMo / Open ASR Leaderboard manifests (see the module docstring).

    Parameters
    ----------
    paths : the manifest files.
    options : the :class:`~werest.ingest.importers._common.NamedColumns` (others are
        ignored). ``id_column``: the id field; the default ``"id"`` means ``utt_id``, else
        ``id``, else the audio file's stem. ``reference_column``: the reference field; the
        default ``"reference"`` means ``text``; None: the manifests have none.
        ``hypothesis_column``, ``hypothesis_columns``: the prediction field(s); by default
        ``pred_text`` and every ``pred_text_<system>``. ``system``: the system of
        ``pred_text`` (or of the only prediction field), one file only. ``dataset``: the
        dataset name.

    Raises
    ------
    ConfigError : ``system=`` with several files, or clashing column settings.
    InputError : naming the file, line and field (see the module docstring).
    """
    columns = NamedColumns.of(options)
    check_one_system(columns.system, paths, "file", "its file")
    return load_each(paths, load_file, columns=columns, named=columns.hypotheses())


def read_lines(path: Path) -> list[tuple[int, dict]]:
    """(line number, object) of each non-blank line; every object has an ``audio_filepath``."""
    require_path(path, folder=False)
    text = decode_utf8(path)
    if not text.strip():
        raise InputError("the file is empty", path=path)
    records = json_lines(path, text, layout="a NeMo manifest")
    for number, record in records:
        audio = record.get(AUDIO)
        if not isinstance(audio, str) or not audio.strip():
            problem = "missing" if AUDIO not in record else f"expected a path, got {audio!r:.40}"
            raise InputError(
                f"{problem}: every line of a NeMo manifest names its audio file",
                path=path,
                row=number,
                column=AUDIO,
            )
    return records


def leaderboard_model(name: str) -> str:
    """The model id in a leaderboard file name, read as its scorer reads it: the first ``-``
    stands for the ``/`` that ``write_manifest`` replaced (``openai-whisper-tiny.en``)."""
    return name.replace("-", "/", 1)


def load_file(path: Path, *, columns: NamedColumns, named: list[str] | None) -> pd.DataFrame:
    """The rows of one manifest (see :func:`load`; ``named``: the hypothesis fields named)."""
    records = read_lines(path)
    fields = list(dict.fromkeys(key for _, record in records for key in record))
    leaderboard = LEADERBOARD_FILE.match(path.stem)
    file_system = leaderboard_model(leaderboard["model"]) if leaderboard else path.stem
    dataset = columns.dataset or (leaderboard["dataset"] if leaderboard else None)
    dataset = dataset or path.resolve().parent.name or "manifest"
    predictions = _predictions(path, fields, named)
    systems = column_systems(predictions, file_system, columns.system)
    reference, id_field = _reference_and_id(
        path, fields, predictions, columns.reference_column, columns.id_column
    )
    ids = _ids(path, records, id_field)
    consumed = {AUDIO, *(f for f in (id_field, reference) if f), *predictions}
    columns = _metadata(path, records, fields, consumed, predictions)
    audio = [None if _PLACEHOLDER.match(r[AUDIO].strip()) else r[AUDIO].strip() for _, r in records]
    references = [_text(path, n, r, reference) for n, r in records] if reference else None
    rows, take = _prediction_rows(path, records, predictions, systems, ids, dataset)
    frame = pd.DataFrame(rows)
    if references is not None:
        frame["reference"] = [references[i] for i in take]
    frame["audio"] = [audio[i] for i in take]
    for name, values in columns.items():
        frame[name] = [values[i] for i in take]
    frame = validate_table(frame, source=path, line_of=[records[i][0] for i in take])
    return resolve_audio(frame, path.resolve().parent)


def _missing(path: Path, fields: list[str], field: str, hint: str) -> InputError:
    found = ", ".join(map(repr, fields))
    return InputError(f"missing field (fields found: {found}); {hint}", path=path, column=field)


def _predictions(path: Path, fields: list[str], named: list[str] | None) -> list[str]:
    """The prediction fields: those ``named``, else ``pred_text`` and ``pred_text_<system>``;
    InputError when there is none, or a named one is missing."""
    predictions = named or [f for f in fields if f == PRED_TEXT or f.startswith(f"{PRED_TEXT}_")]
    if not predictions:
        raise _missing(
            path,
            fields,
            PRED_TEXT,
            "a manifest of system outputs holds the hypothesis in 'pred_text' (or "
            "'pred_text_<system>'): name other fields with hypothesis_columns=[...]",
        )
    for field in named or ():
        if field not in fields:
            raise _missing(path, fields, field, "check hypothesis_column= / hypothesis_columns=")
    return predictions


def _reference_and_id(
    path: Path,
    fields: list[str],
    predictions: list[str],
    reference_column: str | None,
    id_column: str | None,
) -> tuple[str | None, str | None]:
    """The reference field (None: unlabelled) and the id field (None: the audio file's stem);
    InputError for a named one that is missing, ConfigError when two roles share a field."""
    reference = REFERENCE if reference_column == "reference" else reference_column
    if reference is not None and reference not in fields:
        if reference_column != "reference":
            raise _missing(
                path, fields, reference, "name it with reference_column=, or null for none"
            )
        log.info("%s: no %r field: unlabelled", path, REFERENCE)
        reference = None
    if id_column in (None, "id"):
        id_field = next((f for f in ID_FIELDS if f in fields), None)
    elif id_column in fields:
        id_field = id_column
    else:
        raise _missing(path, fields, id_column, "name the id field with id_column=")
    special = [f for f in (id_field, reference) if f]
    clash = set(special) & set(predictions)
    if clash or len(set(special)) < len(special):
        raise ConfigError(
            f"{path}: the id, reference and hypothesis fields must differ "
            f"(id {id_field!r}, reference {reference!r}, hypotheses {predictions})"
        )
    return reference, id_field


def _metadata(
    path: Path,
    records: list[tuple[int, dict]],
    fields: list[str],
    consumed: set[str],
    predictions: list[str],
) -> dict[str, list]:
    """The other fields' values, kept as metadata columns by their table names (lists and
    objects dropped, said at INFO; a single system's ``time`` as ``processing_seconds``)."""
    extras = [f for f in fields if f not in consumed and not f.startswith(PRED_TEXT)]
    nested = [f for f in extras if not all(_scalar(r.get(f)) for _, r in records)]
    if nested:
        log.info("%s: fields %s hold lists or objects: not kept", path, nested)
    extras = [f for f in extras if f not in nested]
    names = {f: source_name(f, (*SET_COLUMNS, "audio")) for f in extras}
    if len(predictions) == 1 and "time" in names and "processing_seconds" not in fields:
        names["time"] = "processing_seconds"
    return {
        names[f]: metadata_values(names[f], _uniform([r.get(f) for _, r in records]))
        for f in extras
    }


def _prediction_rows(
    path: Path,
    records: list[tuple[int, dict]],
    predictions: list[str],
    systems: dict[str, str],
    ids: list[str],
    dataset: str,
) -> tuple[dict[str, list], list[int]]:
    """The table's rows, one per (line, prediction field) that is not null, and the line of
    each row (its position in ``records``); InputError when there is none."""
    rows: dict[str, list] = {"dataset": [], "utt_id": [], "system": [], "hypothesis": []}
    take: list[int] = []  # the record of each row
    for position, (number, record) in enumerate(records):
        for field in predictions:
            hypothesis = _text(path, number, record, field)
            if hypothesis is None:
                continue  # null or absent: this system was not run on this line
            rows["dataset"].append(dataset)
            rows["utt_id"].append(ids[position])
            rows["system"].append(systems[field])
            rows["hypothesis"].append(hypothesis)
            take.append(position)
    if not take:
        raise InputError(
            f"no line holds a prediction ({', '.join(map(repr, predictions))} null or absent "
            "on every line)",
            path=path,
        )
    return rows, take


def _ids(path: Path, records: list[tuple[int, dict]], id_field: str | None) -> list[str]:
    """Each line's utterance id, checked unique (the id field's, else the audio stem's)."""
    ids = []
    for number, record in records:
        if id_field is None:
            ids.append(audio_id(record))
            continue
        value = record.get(id_field)
        if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
            problem = "missing" if id_field not in record else f"got {value!r:.40}"
            raise InputError(
                f"expected an utterance id (text or a whole number), {problem}: every line "
                "needs one when the manifest has an id field",
                path=path,
                row=number,
                column=id_field,
            )
        ids.append(str(value).strip())
    first: dict[str, int] = {}
    for (number, _), uid in zip(records, ids, strict=True):
        if uid in first:
            hint = (
                "; ids here are the audio files' stems: give each line an 'utt_id' field, or "
                "name a unique field with id_column="
                if id_field is None
                else ""
            )
            raise InputError(
                f"utterance id {uid!r} appears twice: lines {first[uid]} and {number}{hint}",
                path=path,
                row=number,
                column=id_field or AUDIO,
            )
        first[uid] = number
    return ids


def audio_id(record: dict) -> str:
    """The utterance id of a line without an id field: its audio file's stem, and
    ``@<offset>`` for a segment that starts past the file's beginning."""
    name = re.split(r"[\\/]", record[AUDIO].strip())[-1]
    stem = name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name
    offset = record.get("offset")
    if isinstance(offset, (int, float)) and not isinstance(offset, bool) and offset:
        return f"{stem}@{offset:g}"
    return stem


def _scalar(value: object) -> bool:
    return value is None or isinstance(value, _SCALAR)


def _text(path: Path, number: int, record: dict, field: str) -> str | None:
    value = record.get(field)
    if value is None or isinstance(value, str):
        return value
    raise InputError(
        f"expected text, got {type(value).__name__} {value!r:.40}",
        path=path,
        row=number,
        column=field,
    )


def _uniform(values: list) -> list:
    """A metadata field's values as one type: text when they mix text, numbers and booleans
    (a column of mixed types could not be written to Parquet)."""
    kinds = {
        "bool" if isinstance(v, bool) else "number" if isinstance(v, (int, float)) else "text"
        for v in values
        if v is not None
    }
    if len(kinds) <= 1:
        return values
    return [None if v is None else json.dumps(v) if not isinstance(v, str) else v for v in values]
