"""verli STT benchmark (github.com/verliapp/stt-benchmark): LibriSpeech test-clean, 2025–26 engines.

A path is the checkout's root, its ``results`` or ``results/transcripts`` folder, or
``librispeech-<engine>.json.gz`` files. Layout:

* ``results/transcripts/librispeech-<engine>.json.gz``: one gzipped JSON object per engine,
  ``{"1089-134686-0000": "He hoped there would be stew for dinner, ...", ...}``;
  ``<engine>-stream`` files are the engine's streaming API;
* ``results/latency.json``: ``{engine: {median_s, mean_s, p90_s, n, errors, mode...}}``, each
  batch engine's request latency over 40 isolated calls (not per utterance).

Rows: dataset ``librispeech-test-clean`` (``dataset=`` to change it), utt_id = the JSON key
(the LibriSpeech id, as ``dighr/190423`` and AfriSpeech's LibriSpeech files name it, so the
three join into one dataset), system = ``verli/<engine>``, hypothesis = the text as written
(case, punctuation, digits: werest's normaliser handles them when scoring), ``speaker`` = the
LibriSpeech speaker (the id's first field), ``language`` = ``en``, ``corpus``, ``split`` and,
for engines in ``latency.json``, ``request_latency_median_s``, ``request_latency_mean_s`` and
``request_latency_p90_s`` (one value per system, repeated on its rows: a summary of other
calls, so not a per-utterance ``processing_seconds``).

Rules:

* **no references** in the layout: ``reference=PATH`` takes them from a LibriSpeech
  test-clean reference CSV: dighr's ``190423`` folder or its ``actual.csv`` (``path,
  sentence``), or an AfriSpeech LibriSpeech result CSV (``audio_paths, reference`` or
  ``audio_paths, transcript``); the id is the file's base name. Without it ``reference`` is
  null (a label-free table); ids the reference file lacks stay null, with a warning;
* **system names are prefixed** ``verli/``: ``azure``, ``whisper-*`` and ``google-*`` also
  name systems of dighr and AfriSpeech on the same dataset, run years earlier through other
  APIs or implementations (verli runs Whisper through WhisperKit CoreML); the prefix keeps
  them apart when the three sources are joined (``conf/data/all_shared.yaml``);
* an id absent from an engine's file is an utterance the engine did not run on: no row
  (``resemble`` covers 1,289 utterances, ``rev`` 2,582, ``inworld-stt-1`` 2,618); an empty
  string is an empty hypothesis (the engine returned nothing: ``gemini-2.5-flash`` twice);
* from a folder, the 27 batch engines are imported; the 10 streaming variants
  (``verli/<engine>-stream``, mostly 500 of the utterances) only with ``streaming=true``;
  ``*.json.gz`` files named explicitly are imported as given;
* ``whisper-large-v3`` and ``whisper-large-v3-v20240930`` are two WhisperKit runs of one
  model (identical output on half of the utterances): both are imported, as two systems;
* engine output is kept as written, artefacts included: ``parakeet-tdt-0.6b-v3`` returned
  runs of ``<unk>`` tokens on ten utterances (empty once normalised), ``rev`` writes
  ``<silence>``/``<affirmative>`` tags, ``whisper-small`` once ``[BLANK_AUDIO]``;
* a file that is not gzip, not UTF-8 JSON, not an object of id -> text, or holds no
  utterance, is an InputError naming it (and the utterance id where one is at fault).
"""

from __future__ import annotations

import gzip
import json
import logging
import re
import zlib
from pathlib import Path

import pandas as pd

from werest.errors import ConfigError, InputError
from werest.ingest.importers._common import log_imported, require_path
from werest.ingest.importers.dighr import utterance_id
from werest.ingest.reading import decode_utf8, read_raw_csv

log = logging.getLogger("werest.ingest.importers.verli")

DATASET = "librispeech-test-clean"
PREFIX = "verli/"
STREAM = "-stream"
LATENCY = "latency.json"
_FILE = re.compile(r"^librispeech-(?P<engine>.+)\.json\.gz$")
#: reference CSV columns, in the order tried: dighr ``actual.csv``, AfriSpeech LibriSpeech
_ID_COLUMNS = ("path", "files", "paths", "filename", "audio_paths", "id")
_REFERENCE_COLUMNS = ("sentence", "actual", "reference", "transcript", "text")
_LATENCY_KEYS = {"median_s": "median", "mean_s": "mean", "p90_s": "p90"}


def load(
    paths: list[Path],
    reference: str | None = None,
    dataset: str | None = None,
    streaming: bool | str | None = False,
    **_: object,
) -> pd.DataFrame:
    """Import verli transcripts (module docstring); ``reference=`` a LibriSpeech reference
    CSV or dighr's ``190423`` folder, ``streaming=true`` to add the streaming variants."""
    with_streaming = _flag(streaming, "streaming")
    references = read_references(Path(reference)) if reference else None
    files: list[Path] = []
    for path in paths:
        require_path(path)
        files.extend(transcript_files(path, streaming=with_streaming))
    _check_one_file_per_engine(files)
    latencies = {
        f: read_latencies(f) for f in dict.fromkeys(p.parent.parent / LATENCY for p in files)
    }
    frames = [
        _engine_rows(file, dataset or DATASET, latencies[file.parent.parent / LATENCY])
        for file in dict.fromkeys(files)
    ]
    table = pd.concat(frames, ignore_index=True, sort=False)
    table.insert(4, "reference", _references_for(table, references, reference))
    log_imported(log, "verli", table)
    return table


def _check_one_file_per_engine(files: list[Path]) -> None:
    seen: dict[str, Path] = {}
    for file in dict.fromkeys(files):
        engine = _engine(file)
        if engine in seen:
            raise InputError(
                f"{seen[engine]} and {file} both give engine {engine!r}; import one of them",
                path=file,
            )
        seen[engine] = file


def _flag(value: object, name: str) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"true", "1", "yes"}:
        return True
    if text in {"false", "0", "no", ""}:
        return False
    raise ConfigError(f"{name}={value!r}: expected true or false")


def transcript_files(path: Path, *, streaming: bool) -> list[Path]:
    """The engine files a path stands for: batch engines (and streaming ones if asked)."""
    if path.is_file():
        if not _FILE.match(path.name):
            raise InputError(
                "not a verli transcript file (librispeech-<engine>.json.gz)", path=path
            )
        return [path]
    folder = next(
        (f for f in (path / "results" / "transcripts", path / "transcripts") if f.is_dir()), path
    )
    found = sorted(p for p in folder.glob("*.json.gz") if _FILE.match(p.name))
    if not found:
        raise InputError("no librispeech-<engine>.json.gz files found", path=path)
    stream = [p for p in found if _engine(p).endswith(STREAM)]
    if stream and not streaming:
        log.info(
            "%s: %d streaming variant(s) left out (streaming=true adds them)", folder, len(stream)
        )
        found = [p for p in found if p not in stream]
    return found


def _engine(path: Path) -> str:
    match = _FILE.match(path.name)
    assert match is not None
    return match["engine"]


def read_transcripts(path: Path) -> dict[str, str]:
    """One engine's ``{utterance id: text}``, checked."""
    try:
        raw = gzip.decompress(path.read_bytes())
    except (OSError, EOFError, zlib.error) as error:
        raise InputError(f"not a readable gzip file ({error})", path=path) from None
    try:
        data = json.loads(raw.decode("utf-8-sig"), object_pairs_hook=_unique_keys)
    except _RepeatedKey as error:
        raise InputError(f"utterance id {error.args[0]!r} appears twice", path=path) from None
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 (byte offset {error.start})", path=path) from None
    except json.JSONDecodeError as error:
        raise InputError(
            f"not valid JSON ({error.msg} at line {error.lineno} column {error.colno})", path=path
        ) from None
    if not isinstance(data, dict):
        raise InputError(f"expected an object of id -> text, got {type(data).__name__}", path=path)
    if not data:
        raise InputError("no utterances in the file", path=path)
    for key, text in data.items():
        if not key.strip():
            raise InputError("empty utterance id", path=path)
        if not isinstance(text, str):
            raise InputError(
                f"utterance {key!r}: expected text, got {type(text).__name__} {text!r:.40}",
                path=path,
            )
    return data


class _RepeatedKey(ValueError):
    """A key that appears twice in one JSON object (``json`` would keep the last silently)."""


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in pairs:
        if key.strip() in out:
            raise _RepeatedKey(key.strip())
        out[key.strip()] = value
    return out


def _engine_rows(path: Path, dataset: str, latencies: dict[str, dict[str, float]]) -> pd.DataFrame:
    """One engine's rows; its ``latency.json`` summary (batch engines only) as columns."""
    engine = _engine(path)
    transcripts = read_transcripts(path)
    ids = pd.Series(list(transcripts), dtype=object)
    rows = pd.DataFrame(
        {
            "dataset": dataset,
            "utt_id": ids,
            "system": PREFIX + engine,
            "hypothesis": list(transcripts.values()),
            "corpus": DATASET,
            "split": "test-clean",
            "language": "en",
            "speaker": ids.str.split("-").str[0],
        }
    )
    summary = {} if engine.endswith(STREAM) else latencies.get(engine, {})
    for key, name in _LATENCY_KEYS.items():
        rows[f"request_latency_{name}_s"] = summary.get(key, float("nan"))
    empty = int((rows["hypothesis"].str.strip() == "").sum())
    log.info("%s: %d utterances (%d empty)", path.name, len(rows), empty)
    return rows


def read_latencies(file: Path) -> dict[str, dict[str, float]]:
    """``latency.json`` as ``{engine: {median_s, mean_s, p90_s}}`` ({} when it is absent)."""
    if not file.is_file():
        return {}
    try:
        data = json.loads(decode_utf8(file))
    except json.JSONDecodeError as error:
        raise InputError(
            f"not valid JSON ({error.msg} at line {error.lineno})", path=file
        ) from None
    if not isinstance(data, dict):
        raise InputError("expected an object of engine -> latency summary", path=file)
    out = {}
    for engine, summary in data.items():
        if not isinstance(summary, dict):
            raise InputError(f"{engine!r}: expected an object", path=file)
        out[engine] = {}
        for key in _LATENCY_KEYS:
            value = summary.get(key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InputError(
                    f"{engine!r}.{key}: expected a number, got {value!r:.40}", path=file
                )
            out[engine][key] = float(value)
    return out


def read_references(path: Path) -> pd.Series:
    """LibriSpeech references ``{utterance id: text}`` from dighr's ``190423`` folder (its
    ``actual.csv``) or a CSV with a path/id column and a reference column."""
    require_path(path)
    if path.is_dir():
        path = path / "actual.csv"
        require_path(path, folder=False)
    frame = read_raw_csv(path)
    id_column = _pick(frame, _ID_COLUMNS, path)
    text_column = _pick(frame, _REFERENCE_COLUMNS, path)
    frame = frame[frame[id_column].str.strip() != ""]
    ids = frame[id_column].map(utterance_id)
    texts = frame[text_column].str.strip()
    pairs = pd.DataFrame({"id": ids, "text": texts}).drop_duplicates()
    clash = pairs["id"].duplicated()
    if clash.any():
        utt = pairs.loc[clash, "id"].iloc[0]
        raise InputError(f"utterance {utt!r} has two different references", path=path)
    log.info("%s: %d references (%s, %s)", path, ids.nunique(), id_column, text_column)
    return pd.Series(texts.to_numpy(), index=ids.to_numpy()).groupby(level=0).first()


def _pick(frame: pd.DataFrame, names: tuple[str, ...], path: Path) -> str:
    for name in names:
        if name in frame.columns:
            return name
    found = ", ".join(frame.columns)
    raise InputError(f"none of the columns {', '.join(names)} found (found: {found})", path=path)


def _references_for(
    table: pd.DataFrame, references: pd.Series | None, source: str | None
) -> pd.Series:
    if references is None:
        log.info("verli: no reference= given: reference left null (label-free table)")
        return pd.Series(pd.NA, index=table.index, dtype="string")
    mapped = table["utt_id"].map(references)
    unmatched = table.loc[mapped.isna(), "utt_id"].unique()
    if len(unmatched):
        log.warning(
            "verli: %d utterance(s) have no reference in %s (e.g. %s)",
            len(unmatched),
            source,
            unmatched[0],
        )
    return mapped.astype("string")
