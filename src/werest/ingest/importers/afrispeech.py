"""AfriSpeech-200 benchmark results (github.com/intron-innovation/AfriSpeech-200, ``results/``).

A path is the ``afrispeech`` folder, its ``results`` folder, ``results/normalized`` or single
result CSVs. Three kinds of file, told apart by name:

* ``normalized/intron-open-{test,dev}-<stem>-wer-<score>-<n>.csv`` (columns ``idx, domain,
  gender, duration, age_group, accent, user_ids, audio_paths, origin, country, reference,
  prediction, wer, name, split``): African-accented English, one dataset per split and domain
  (``afrispeech-test-clinical``, ``afrispeech-test-general``, ``afrispeech-dev-clinical``,
  ``afrispeech-dev-general``); utt_id = ``idx``; hypothesis = ``prediction``; metadata columns
  ``domain``, ``split``, ``gender``, ``age`` (from ``age_group``), ``accent``, ``country``,
  ``origin``, ``speaker`` (from ``user_ids``), ``duration`` (seconds);
* ``intron-open-test-libri-speech-<stem>-wer-<score>-<n>.csv`` (``hypothesis, reference,
  audio_paths, ...``): LibriSpeech test-clean, the raw ``hypothesis`` column (not the
  ``*_clean`` ones, which are another normaliser's output);
* ``intron-open-libri-test-clean-<stem>-wer-<score>-<n>.csv`` (``id, transcript,
  predictions_raw, ...``): LibriSpeech test-clean by GCP; ``transcript`` is the reference and
  ``predictions_raw`` the hypothesis.

Both LibriSpeech kinds form the dataset ``librispeech-test-clean``, utt_id = the audio file's
base name without extension (``6930-75918-0000``), exactly as the ``dighr`` importer names
``dighr/190423`` (same function), so the two join once one dataset is renamed; ``speaker`` is
the LibriSpeech speaker (the id's first field).

Rules:

* the ``wer`` column and the score and count in file names are labels (computed with the
  reference) and are never read;
* every cell is read as text with blanks kept as ``""``: an empty prediction is an empty
  hypothesis (the system returned nothing; a 100 % deletion), never a missing row;
* text is kept as written (lower-cased but punctuated in ``normalized``; upper case without
  punctuation in LibriSpeech references): werest's normaliser handles it;
* ``audio_paths`` are paths on the machine that ran the systems: kept as ``source_audio``,
  never as ``audio``;
* references of one (dataset, utt_id) must agree across systems; where they differ, the first
  system's (in file-name order) is used for every system, with a warning (none differ in the
  shared copy);
* system names are canonical across dev, test and LibriSpeech (:data:`SYSTEMS`, from the
  file-name stem): the Hugging Face id for open models, ``aws-transcribe``,
  ``aws-transcribe-medical``, ``gcp-speech``, ``gcp-speech-medical``, ``azure-speech`` for the
  APIs, ``intronhealth/afrispeech-<base>-<all|clinical|general>`` for the six models
  AfriSpeech fine-tuned on its own training split. Those six have ``fine_tuned_on`` =
  ``afrispeech-all`` / ``afrispeech-clinical`` / ``afrispeech-general`` (in-domain: much better
  than their base models here); every other system has it null. An unknown stem is named by
  the file's ``name`` column when that looks like a ``org/model`` id, else by the stem with
  ``_`` as ``-``, with a warning; an unknown stem ending in ``_all``/``_clinical``/``_general``
  is marked fine-tuned likewise.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pandas as pd

from werest.errors import InputError
from werest.ingest.importers._common import agree_references, refuse_first, require_path
from werest.ingest.importers.dighr import utterance_id
from werest.ingest.reading import read_raw_csv

log = logging.getLogger("werest.ingest.importers.afrispeech")

LIBRISPEECH = "librispeech-test-clean"
_FINE_TUNED = "intronhealth/afrispeech-"

#: file-name stem -> canonical system name. Upstream's ``name`` column is not used as is: it
#: writes ``facebook/wav2vec2-large-xlsr-53-english`` for jonatasgrosman's model,
#: ``microsoft/wavlm-...`` for patrickvonplaten's, ``openai/whisper-medium-all`` for Intron's
#: fine-tune, and the LibriSpeech files have no name column at all. The WavLM "base" of the
#: normalized files is taken to be the base-plus checkpoint the LibriSpeech run names.
SYSTEMS: dict[str, str] = {
    # normalized/ (AfriSpeech dev and test)
    "amazon_aws_transcribe_api": "aws-transcribe",
    "amazon_aws_transcribe_medical_api_primary_care": "aws-transcribe-medical",
    "google_gcp_speech_api": "gcp-speech",
    "google_gcp_medical_speech_api": "gcp-speech-medical",
    "microsoft_azure_speech_api": "azure-speech",
    "facebook_hubert_large_ls960_ft": "facebook/hubert-large-ls960-ft",
    "facebook_hubert_xlarge_ls960_ft": "facebook/hubert-xlarge-ls960-ft",
    "facebook_wav2vec2_large_960h": "facebook/wav2vec2-large-960h",
    "facebook_wav2vec2_large_960h_lv60_self": "facebook/wav2vec2-large-960h-lv60-self",
    "facebook_wav2vec2_large_robust_ft_swbd_300h": "facebook/wav2vec2-large-robust-ft-swbd-300h",
    "facebook_wav2vec2_large_xlsr_53_english": "jonatasgrosman/wav2vec2-large-xlsr-53-english",
    "facebook_wav2vec2_xls_r_1b_english": "jonatasgrosman/wav2vec2-xls-r-1b-english",
    "facebook_wav2vec2_large_xlsr_53_english_all": f"{_FINE_TUNED}wav2vec2-large-xlsr-53-all",
    "facebook_wav2vec2_large_xlsr_53_english_clinical": (
        f"{_FINE_TUNED}wav2vec2-large-xlsr-53-clinical"
    ),
    "facebook_wav2vec2_large_xlsr_53_english_general": (
        f"{_FINE_TUNED}wav2vec2-large-xlsr-53-general"
    ),
    "microsoft_wavlm_libri_clean_100h_base": "patrickvonplaten/wavlm-libri-clean-100h-base-plus",
    "microsoft_wavlm_libri_clean_100h_large": "patrickvonplaten/wavlm-libri-clean-100h-large",
    "nvidia_nemo_conformer_ctc_large": "nvidia/stt_en_conformer_ctc_large",
    "nvidia_nemo_conformer_transducer_large": "nvidia/stt_en_conformer_transducer_large",
    "openai_whisper_large": "openai/whisper-large",
    "openai_whisper_medium": "openai/whisper-medium",
    "openai_whisper_medium_en": "openai/whisper-medium.en",
    "openai_whisper_small": "openai/whisper-small",
    "openai_whisper_small_en": "openai/whisper-small.en",
    "openai_whisper_medium_all": f"{_FINE_TUNED}whisper-medium-all",
    "openai_whisper_medium_clinical": f"{_FINE_TUNED}whisper-medium-clinical",
    "openai_whisper_medium_general": f"{_FINE_TUNED}whisper-medium-general",
    "speechbrain_crdnn_rnnlm_librispeech": "speechbrain/asr-crdnn-rnnlm-librispeech",
    # LibriSpeech test-clean
    "gcp-transcribe": "gcp-speech",
    "facebook-hubert-large-ls960-ft": "facebook/hubert-large-ls960-ft",
    "facebook-hubert-xlarge-ls960-ft": "facebook/hubert-xlarge-ls960-ft",
    "facebook-wav2vec2-large-960h": "facebook/wav2vec2-large-960h",
    "facebook-wav2vec2-large-960h-lv60-self": "facebook/wav2vec2-large-960h-lv60-self",
    "facebook-wav2vec2-large-robust-ft-libri-960h": "facebook/wav2vec2-large-robust-ft-libri-960h",
    "facebook-wav2vec2-large-robust-ft-swbd-300h": "facebook/wav2vec2-large-robust-ft-swbd-300h",
    "jonatasgrosman-wav2vec2-large-xlsr-53-english": (
        "jonatasgrosman/wav2vec2-large-xlsr-53-english"
    ),
    "jonatasgrosman-wav2vec2-xls-r-1b-english": "jonatasgrosman/wav2vec2-xls-r-1b-english",
    "patrickvonplaten-wavlm-libri-clean-100h-base-plus": (
        "patrickvonplaten/wavlm-libri-clean-100h-base-plus"
    ),
    "patrickvonplaten-wavlm-libri-clean-100h-large": (
        "patrickvonplaten/wavlm-libri-clean-100h-large"
    ),
    "wav2vec2-large-xlsr-53-all": f"{_FINE_TUNED}wav2vec2-large-xlsr-53-all",
    "wav2vec2-large-xlsr-53-clinical": f"{_FINE_TUNED}wav2vec2-large-xlsr-53-clinical",
    "wav2vec2-large-xlsr-53-general": f"{_FINE_TUNED}wav2vec2-large-xlsr-53-general",
    "whisper_all": f"{_FINE_TUNED}whisper-medium-all",
    "whisper_clinical": f"{_FINE_TUNED}whisper-medium-clinical",
    "whisper_general": f"{_FINE_TUNED}whisper-medium-general",
    "whisper_base": "openai/whisper-base",
    "whisper_small": "openai/whisper-small",
    "whisper_small.en": "openai/whisper-small.en",
    "whisper_medium": "openai/whisper-medium",
    "whisper_medium.en": "openai/whisper-medium.en",
    "whisper_large": "openai/whisper-large",
}

_FINE_TUNE_SUFFIX = re.compile(r"[-_](all|clinical|general)$")
_NAME = r"(?P<stem>.+?)-wer-(?P<score>[^/]*)-(?P<count>\d+)\.csv"
#: (kind, pattern) in the order tried; ``test-libri-speech`` must win over ``{test,dev}``.
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("libri", re.compile(rf"^intron-open-test-libri-speech-{_NAME}$")),
    ("libri-gcp", re.compile(rf"^intron-open-libri-test-clean-{_NAME}$")),
    ("normalized", re.compile(rf"^intron-open-(?P<split>test|dev)-{_NAME}$")),
)
_HF_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def load(paths: list[Path], **_: object) -> pd.DataFrame:
    """Import AfriSpeech result folders or files into transcripts-table rows."""
    files: list[Path] = []
    for path in paths:
        require_path(path)
        files.extend(_result_files(path) if path.is_dir() else [path])
    frames = [_read_file(path) for path in dict.fromkeys(files)]
    table = pd.concat(frames, ignore_index=True, sort=False)
    _check_one_file_per_system(table)
    table = agree_references(table.drop(columns="_file"), source="afrispeech")
    log.info("afrispeech: %d rows, %d systems", len(table), table["system"].nunique())
    return table


def _result_files(folder: Path) -> list[Path]:
    """Result CSVs under an ``afrispeech``, ``results`` or ``results/normalized`` folder."""
    root = folder / "results" if (folder / "results").is_dir() else folder
    candidates = sorted(root.glob("*.csv"))
    if (root / "normalized").is_dir():
        candidates += sorted((root / "normalized").glob("*.csv"))
    found = [p for p in candidates if _kind(p.name) is not None]
    if not found:
        raise InputError("no AfriSpeech result files (intron-open-*-wer-*.csv) found", path=folder)
    return found


def _kind(name: str) -> tuple[str, re.Match[str]] | None:
    for kind, pattern in PATTERNS:
        match = pattern.match(name)
        if match:
            return kind, match
    return None


def system_for(stem: str, name_column: str | None = None) -> str:
    """The canonical system name of a file-name stem (see :data:`SYSTEMS`).

    An unknown stem is named by ``name_column`` when that is an ``org/model`` id, else by the
    stem with ``_`` replaced by ``-``; a warning says so.
    """
    if stem in SYSTEMS:
        return SYSTEMS[stem]
    name = (name_column or "").strip()
    derived = name if _HF_ID.match(name) else stem.replace("_", "-").strip("-") or stem
    log.warning("afrispeech: unknown system stem %r named %r; add it to SYSTEMS", stem, derived)
    return derived


def fine_tuned_on(stem: str, system: str) -> str | None:
    """``afrispeech-<all|clinical|general>`` for systems fine-tuned on AfriSpeech's training
    split, else None."""
    if stem in SYSTEMS and not system.startswith(_FINE_TUNED):
        return None
    match = _FINE_TUNE_SUFFIX.search(system if stem in SYSTEMS else stem)
    return f"afrispeech-{match[1]}" if match else None


def _require_columns(frame: pd.DataFrame, columns: tuple[str, ...], path: Path) -> None:
    for column in columns:
        if column not in frame.columns:
            found = ", ".join(frame.columns)
            raise InputError(f"missing column (found: {found})", path=path, column=column)


def _read_file(path: Path) -> pd.DataFrame:
    found = _kind(path.name)
    if found is None:
        raise InputError(
            "not an AfriSpeech result file name (intron-open-{test,dev}-<system>-wer-<score>-"
            "<n>.csv, intron-open-test-libri-speech-..., intron-open-libri-test-clean-...)",
            path=path,
        )
    kind, match = found
    frame = read_raw_csv(path)
    if kind == "normalized":
        rows = _normalized_rows(frame, path, match["split"], match["stem"])
    else:
        rows = _librispeech_rows(frame, path, kind, match["stem"])
    rows["_file"] = str(path)
    return rows


def _blank_to_na(series: pd.Series) -> pd.Series:
    text = series.str.strip()
    return text.where(text != "", None)


def _normalized_rows(frame: pd.DataFrame, path: Path, split: str, stem: str) -> pd.DataFrame:
    _require_columns(frame, ("idx", "domain", "reference", "prediction"), path)
    domain = frame["domain"].str.strip().str.lower()
    if (domain == "").any():
        row = int((domain == "").to_numpy().argmax()) + 1
        raise InputError("empty domain", path=path, row=row, column="domain")
    names = frame["name"].unique() if "name" in frame.columns else []
    system = system_for(stem, names[0] if len(names) == 1 else None)
    rows = pd.DataFrame(
        {
            "dataset": "afrispeech-" + split + "-" + domain,
            "utt_id": frame["idx"].str.strip(),
            "system": system,
            "hypothesis": frame["prediction"],
            "reference": frame["reference"],
            "corpus": "afrispeech-200",
            "split": split,
            "domain": domain,
            "language": "en",
        }
    )
    metadata = {
        "gender": "gender",
        "age": "age_group",
        "accent": "accent",
        "country": "country",
        "origin": "origin",
        "speaker": "user_ids",
        "source_audio": "audio_paths",
    }
    for column, source in metadata.items():
        if source in frame.columns:
            rows[column] = _blank_to_na(frame[source])
    if "duration" in frame.columns:
        rows["duration"] = frame["duration"]
    rows["fine_tuned_on"] = fine_tuned_on(stem, system)
    _check_unique_ids(rows, path, "idx")
    return rows


def _librispeech_rows(frame: pd.DataFrame, path: Path, kind: str, stem: str) -> pd.DataFrame:
    if kind == "libri":
        _require_columns(frame, ("hypothesis", "reference", "audio_paths"), path)
        id_column, reference, hypothesis = "audio_paths", "reference", "hypothesis"
        ids = frame["audio_paths"].map(utterance_id)
    else:
        _require_columns(frame, ("transcript", "predictions_raw"), path)
        id_column = "id" if "id" in frame.columns else "audio_paths"
        _require_columns(frame, (id_column,), path)
        reference, hypothesis = "transcript", "predictions_raw"
        ids = frame[id_column].map(utterance_id)
    refuse_first(ids == "", "empty utterance id", path=path, column=id_column)
    system = system_for(stem)
    rows = pd.DataFrame(
        {
            "dataset": LIBRISPEECH,
            "utt_id": ids,
            "system": system,
            "hypothesis": frame[hypothesis],
            "reference": frame[reference],
            "corpus": LIBRISPEECH,
            "split": "test-clean",
            "language": "en",
            "speaker": ids.str.split("-").str[0],
        }
    )
    if "audio_paths" in frame.columns:
        rows["source_audio"] = _blank_to_na(frame["audio_paths"])
    rows["fine_tuned_on"] = fine_tuned_on(stem, system)
    _check_unique_ids(rows, path, id_column)
    return rows


def _check_unique_ids(rows: pd.DataFrame, path: Path, column: str) -> None:
    duplicated = rows["utt_id"].duplicated()
    if duplicated.any():
        position = int(duplicated.to_numpy().argmax())
        utt = rows["utt_id"].iloc[position]
        first = int((rows["utt_id"] == utt).to_numpy().argmax())
        raise InputError(
            f"utterance id {utt!r} appears twice (first at row {first + 1})",
            path=path,
            row=position + 1,
            column=column,
        )


def _check_one_file_per_system(table: pd.DataFrame) -> None:
    """Two files giving one system on one dataset (e.g. two scores of one run) is refused,
    naming both files, rather than reported as duplicate rows."""
    files = table.groupby(["dataset", "system"])["_file"].unique()
    for (dataset, system), names in files.items():
        if len(names) > 1:
            raise InputError(
                f"{names[0]} and {names[1]} both give system {system!r} on {dataset}; "
                "import one of them",
                path=names[1],
            )
