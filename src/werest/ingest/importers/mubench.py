"""mu-bench (github.com/sierra-research/mu-bench): customer-service phone calls, five locales.

A path is the mu-bench root (holding ``manifest.json`` and ``submissions/raw``). Layout:

* ``manifest.json``: ``{"locales": [...], "utterances": [{id, locale, conversation_id,
  turn_index, transcript, audio_path, duration_sec}, ...]}``; ``transcript`` is the reference
  as written (punctuation, digits, codes spelt letter by letter);
* ``submissions/raw/<system>/<locale>/<id>.txt``: one system's raw output for one utterance;
* ``submissions/raw/<system>/latency.json``: ``measurements["<locale>/<id>"].roundTripMs``;
* ``submissions/raw/<system>/metadata.yaml``: ``model``, ``version``, ``organization``...

Rows: one dataset per locale (``mubench-en-US``, ``mubench-es-MX``, ``mubench-tr-TR``,
``mubench-vi-VN``, ``mubench-zh-CN``), utt_id = the manifest ``id`` (ids repeat across
locales, never within one), system = the submission folder's name. Columns ``locale``,
``language`` (ISO 639-1: ``en``, ``es``, ``tr``, ``vi``, ``zh``), ``duration`` (seconds),
``speaker`` = ``conversation_id`` (each conversation is one caller's call, so the caller is
the speaker; callers are not linked across conversations), ``turn_index``, ``latency_ms`` (the
system's round trip for that utterance; null when latency.json has no measurement) and
``system_version`` (``model version`` from metadata.yaml, null when absent).

* no submission file = the system was not run on that utterance: no row (``modulate-vfast``
  and ``smallest-pulse-batch`` cover en-US only, ``modulate-vfast-zh-cn`` zh-CN only);
* an existing file that is empty (or blank) = an empty hypothesis: every reference word is a
  deletion;
* an empty or blank ``transcript`` = an unlabelled utterance (reference null: no WER is
  defined there); the rows are kept for label-free use;
* ``audio`` is set only where ``audio_path`` (relative to the root) exists; the audio is gated
  upstream, so in a plain checkout there is none;
* a submission file whose id is not in the manifest is an InputError naming the file;
* zh-CN has no spaces between words (score it by characters), and some systems (Grok)
  sometimes translate Chinese turns into English: both are kept as written.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd
import yaml

from werest.errors import InputError
from werest.ingest.importers._common import read_json, refuse_first, require_path
from werest.ingest.reading import decode_utf8

log = logging.getLogger("werest.ingest.importers.mubench")

MANIFEST = "manifest.json"
SUBMISSIONS = Path("submissions", "raw")
_UTTERANCE_KEYS = ("id", "locale", "transcript")


def load(paths: list[Path], **_: object) -> pd.DataFrame:
    """Import each mu-bench root: every system under ``submissions/raw``."""
    frames = []
    for path in paths:
        require_path(path, folder=True)
        frames.append(load_root(path))
    return pd.concat(frames, ignore_index=True, sort=False)


def read_manifest(path: Path) -> pd.DataFrame:
    """``manifest.json``'s utterances as a frame, checked (keys, types, unique ids)."""
    require_path(path, folder=False)
    data = read_json(path)
    utterances = data.get("utterances") if isinstance(data, dict) else None
    if not isinstance(utterances, list) or not utterances:
        raise InputError("expected an object with a non-empty 'utterances' list", path=path)
    for number, record in enumerate(utterances, start=1):
        if not isinstance(record, dict):
            raise InputError("utterance is not an object", path=path, row=number)
        for key in _UTTERANCE_KEYS:
            if not isinstance(record.get(key), str):
                raise InputError(
                    f"expected text, got {record.get(key)!r:.40}", path=path, row=number, column=key
                )
        if not record["id"].strip() or not record["locale"].strip():
            column = "id" if not record["id"].strip() else "locale"
            raise InputError("empty value", path=path, row=number, column=column)
    frame = pd.DataFrame.from_records(utterances)
    refuse_first(
        frame.duplicated(["locale", "id"]),
        lambda row: f"utterance {frame['locale'].iloc[row]}/{frame['id'].iloc[row]} appears twice",
        path=path,
        column="id",
    )
    return frame


def _read_yaml(path: Path) -> dict:
    if not path.exists():
        return {}
    try:
        data = yaml.safe_load(decode_utf8(path))
    except yaml.YAMLError as error:
        raise InputError(f"not valid YAML: {' '.join(str(error).split())}", path=path) from None
    return data if isinstance(data, dict) else {}


def _latencies(path: Path) -> dict[str, float]:
    """``{"<locale>/<id>": roundTripMs}`` of one system; {} when latency.json is absent."""
    if not path.exists():
        log.warning("%s: absent; latency_ms left null", path)
        return {}
    data = read_json(path)
    measurements = data.get("measurements") if isinstance(data, dict) else None
    if not isinstance(measurements, dict):
        raise InputError("expected an object with a 'measurements' object", path=path)
    out = {}
    for key, value in measurements.items():
        ms = value.get("roundTripMs") if isinstance(value, dict) else None
        if ms is None:
            continue
        if isinstance(ms, bool) or not isinstance(ms, int | float):
            raise InputError(f"roundTripMs of {key!r} is not a number: {ms!r:.40}", path=path)
        out[key] = float(ms)
    return out


def _version(metadata: dict) -> str | None:
    parts = [str(metadata[k]).strip() for k in ("model", "version") if metadata.get(k)]
    return " ".join(parts) or None


def load_root(root: Path) -> pd.DataFrame:
    """All systems of one mu-bench checkout as transcripts-table rows."""
    manifest = read_manifest(root / MANIFEST)
    submissions = root / SUBMISSIONS
    require_path(submissions, folder=True)
    known = set(zip(manifest["locale"], manifest["id"], strict=True))
    frames = []
    for system_dir in sorted(p for p in submissions.iterdir() if p.is_dir()):
        rows = []
        for locale_dir in sorted(p for p in system_dir.iterdir() if p.is_dir()):
            for text_file in sorted(locale_dir.glob("*.txt")):
                key = (locale_dir.name, text_file.stem)
                if key not in known:
                    raise InputError(
                        f"no utterance {key[0]}/{key[1]} in {MANIFEST}", path=text_file
                    )
                rows.append((*key, " ".join(decode_utf8(text_file).split())))
        if not rows:
            log.warning("%s: no <locale>/<id>.txt submissions; skipped", system_dir)
            continue
        frame = pd.DataFrame(rows, columns=["locale", "id", "hypothesis"])
        latency = _latencies(system_dir / "latency.json")
        frame["latency_ms"] = (frame["locale"] + "/" + frame["id"]).map(latency).astype(float)
        frame["system"] = system_dir.name
        frame["system_version"] = _version(_read_yaml(system_dir / "metadata.yaml"))
        frames.append(frame)
        log.info("%s: %d submissions", system_dir.name, len(frame))
    if not frames:
        raise InputError("no system folders with submissions", path=submissions)
    hypotheses = pd.concat(frames, ignore_index=True)
    table = hypotheses.merge(_utterances(manifest, root), on=["locale", "id"], how="left")
    table = table.rename(columns={"id": "utt_id"})
    columns = ["dataset", "utt_id", "system", "hypothesis", "reference"]
    return table[columns + [c for c in table.columns if c not in columns]]


def _utterances(manifest: pd.DataFrame, root: Path) -> pd.DataFrame:
    """Per-utterance columns: dataset, reference, language, duration, speaker, audio..."""
    reference = manifest["transcript"].str.strip()
    unlabelled = int((reference == "").sum())
    if unlabelled:
        log.info("%s: %d empty reference(s): unlabelled", root / MANIFEST, unlabelled)
    frame = pd.DataFrame(
        {
            "locale": manifest["locale"],
            "id": manifest["id"],
            "dataset": "mubench-" + manifest["locale"],
            "reference": reference.where(reference != "", None),
            "language": manifest["locale"].str.split("-").str[0].str.lower(),
        }
    )
    if "duration_sec" in manifest.columns:
        frame["duration"] = _numbers(manifest, "duration_sec", root / MANIFEST)
    if "conversation_id" in manifest.columns:
        frame["speaker"] = manifest["conversation_id"].astype("string")
    if "turn_index" in manifest.columns:
        frame["turn_index"] = _numbers(manifest, "turn_index", root / MANIFEST).astype("Int64")
    if "audio_path" in manifest.columns:
        audio = [
            str((root / p).resolve()) if isinstance(p, str) and p and (root / p).is_file() else None
            for p in manifest["audio_path"]
        ]
        frame["audio"] = audio
        if not any(audio):
            log.info("%s: no audio file present (gated upstream); audio left null", root)
    return frame


def _numbers(manifest: pd.DataFrame, column: str, path: Path) -> pd.Series:
    """A manifest column as float (null stays null); InputError naming the utterance row for
    anything that is not a number."""
    values = manifest[column]
    bad = values.map(lambda v: v is not None and (isinstance(v, bool) or not _is_number(v)))
    refuse_first(
        bad,
        lambda row: f"expected a number, got {values.iloc[row]!r:.40}",
        path=path,
        column=column,
    )
    return pd.to_numeric(values, errors="coerce").astype(float)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and value == value  # NaN is not a number here
