"""Speech–text similarity in SONAR's joint space: the ``similarity`` feature, ``werest embed``.

For each (utterance, target system) row of a feature table, ``similarity`` is the cosine, after
L2 normalisation, between the embedding of the utterance's audio and that of the target's
hypothesis (Waheed et al., 2025). A row that cannot get one (missing or bad audio, no language
encoder) gets NaN and says why in ``similarity_status``; the batch goes on.

The pieces, one module each: the encoder is an :class:`~werest.features.embedder.Embedder`
built from ``conf/embedder/*.yaml`` (:mod:`werest.features.embedder`), by default SONAR
(:mod:`werest.features.sonar`); :mod:`werest.features.embedding` embeds each audio file and
text once through :class:`werest.features.cache.EmbeddingCache`; this module joins them into
the feature table.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import numpy as np
import pandas as pd

from werest.audio import AudioPolicy, LoadedAudio
from werest.errors import ConfigError, InputError
from werest.features.cache import EmbeddingCache, normalise_text
from werest.features.embedder import Embedder, cosine
from werest.features.embedding import embed_audio_files, embed_texts
from werest.features.sonar import SonarEmbedder
from werest.table import KEY

__all__ = ["SIMILARITY_COLUMNS", "SonarEmbedder", "add_similarity", "no_similarity"]
# SonarEmbedder stays importable here: run configs saved before the split name it as
# werest.features.similarity.SonarEmbedder in their embedder._target_.

log = logging.getLogger(__name__)

SIMILARITY_COLUMNS = ["similarity", "similarity_status", "audio_duration"]


def _utterances(transcripts: pd.DataFrame, default_language: str | None) -> pd.DataFrame:
    """One row per (dataset, utt_id): its audio path and language."""
    if "audio" not in transcripts.columns:
        raise InputError("the transcripts table has no 'audio' column", column="audio")
    columns = ["dataset", "utt_id", "audio"] + (["language"] if "language" in transcripts else [])
    utterances = transcripts[columns].dropna(subset=["audio"])
    utterances = utterances.drop_duplicates(["dataset", "utt_id"]).copy()
    if "language" not in utterances:
        utterances["language"] = default_language
    elif default_language is not None:
        utterances["language"] = utterances["language"].fillna(default_language)
    if utterances["language"].isna().any():
        raise InputError("rows without a language and no default_language set", column="language")
    utterances["audio"] = utterances["audio"].astype(str)
    return utterances


def add_similarity(
    features: pd.DataFrame,
    transcripts: pd.DataFrame,
    embedder: Embedder,
    cache: EmbeddingCache | None = None,
    policy: AudioPolicy | None = None,
    text_column: str = "hypothesis",
    default_language: str | None = None,
) -> pd.DataFrame:
    """Add ``similarity``, ``similarity_status`` and ``audio_duration`` to a feature table.

    Parameters
    ----------
    features : one row per (dataset, utt_id, system); the target's hypothesis is looked up
        in ``transcripts`` by that key.
    transcripts : the transcripts table with ``audio`` (absolute paths) and, optionally,
        ``language`` (ISO 639-1; ``default_language`` fills gaps).
    embedder : an :class:`Embedder`.
    cache : where embeddings are kept (memory only when None).
    policy : the audio policy (the long-clip rule of :mod:`werest.audio`).

    Returns
    -------
    A copy of ``features`` with the three columns (replaced if present). ``similarity_status``
    is ``ok``, ``split`` (long clip, averaged segments), an audio status (``missing``,
    ``unreadable``, ``empty``, ``too_short``, ``silent``, ``too_long``), ``no_audio`` (no
    audio path for the utterance), ``no_hypothesis`` or ``unsupported_language``.
    """
    cache = cache or EmbeddingCache(None)
    policy = policy or AudioPolicy()
    missing = [c for c in KEY if c not in features.columns]
    if missing:
        raise InputError(f"the feature table lacks {missing}", column=missing[0])
    utterances = _utterances(transcripts, default_language)
    hypotheses = transcripts[[*KEY, text_column]].drop_duplicates(KEY)
    rows = features[KEY].merge(hypotheses, on=KEY, how="left", validate="many_to_one")
    rows = rows.merge(utterances, on=["dataset", "utt_id"], how="left", validate="many_to_one")
    similarity = np.full(len(rows), np.nan)
    duration = np.full(len(rows), np.nan)
    status = np.where(rows["audio"].isna(), "no_audio", "pending").astype(object)
    status[(status == "pending") & rows[text_column].isna().to_numpy()] = "no_hypothesis"
    for lang, group in rows[status == "pending"].groupby("language", sort=True):
        _fill_language(
            group, str(lang), embedder, cache, policy, text_column, similarity, duration, status
        )
    _log_statuses(status)
    out = features.drop(columns=SIMILARITY_COLUMNS, errors="ignore").reset_index(drop=True)
    out["similarity"], out["similarity_status"] = similarity, status.astype(str)
    out["audio_duration"] = duration
    return out


def _fill_language(
    group: pd.DataFrame,
    lang: str,
    embedder: Embedder,
    cache: EmbeddingCache,
    policy: AudioPolicy,
    text_column: str,
    similarity: np.ndarray,
    duration: np.ndarray,
    status: np.ndarray,
) -> None:
    index = group.index.to_numpy()
    try:
        embedder.cache_name("speech", lang)
        embedder.cache_name("text", lang)
    except ConfigError as error:
        log.warning("%d rows in language %r get no similarity: %s", len(index), lang, error)
        status[index] = "unsupported_language"
        return
    audio = embed_audio_files(sorted(set(group["audio"])), lang, embedder, cache, policy)
    texts = embed_texts(group[text_column].astype(str).tolist(), lang, embedder, cache)
    for row, path, text in zip(index, group["audio"], group[text_column].astype(str), strict=True):
        result = audio[path]
        if isinstance(result, LoadedAudio):
            status[row], duration[row] = str(result.status), result.duration
            continue
        similarity[row] = cosine(result[None], texts[normalise_text(text)][None])[0]
        status[row] = "ok"
    _fill_durations(group, audio, policy, duration, status)


def _fill_durations(
    group: pd.DataFrame,
    audio: Mapping[str, LoadedAudio | np.ndarray],
    policy: AudioPolicy,
    duration: np.ndarray,
    status: np.ndarray,
) -> None:
    """Duration and split status of embedded clips (read from headers: cheap on cache hits)."""
    import soundfile as sf

    info: dict[str, float] = {}
    for path in set(group["audio"]):
        if isinstance(audio[path], np.ndarray):
            try:
                info[path] = float(sf.info(path).duration)
            except Exception:
                info[path] = float("nan")
    for row, path in zip(group.index, group["audio"], strict=True):
        if path in info:
            duration[row] = info[path]
            if info[path] > policy.max_seconds:
                status[row] = "split"


def _log_statuses(status: np.ndarray) -> None:
    values, counts = np.unique(status.astype(str), return_counts=True)
    summary = ", ".join(f"{v}: {c}" for v, c in zip(values, counts, strict=True))
    log.info("similarity status: %s", summary)
    usable = any(v in ("ok", "split") for v in values)
    if usable and any(v not in ("ok", "split") for v in values):
        log.warning("rows without similarity (see similarity_status): %s", summary)


def no_similarity(table: pd.DataFrame) -> str:
    """The one-line error when no row got a similarity: the statuses' counts."""
    counts = table["similarity_status"].value_counts()
    summary = ", ".join(f"{status}: {count}" for status, count in counts.items())
    return f"no row got a similarity: all {len(table)} failed ({summary}); see docs/similarity.md"
