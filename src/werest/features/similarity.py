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
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from werest.build import instantiate_once, kept
from werest.columns import KEY
from werest.errors import ConfigError, InputError
from werest.features.cache import EmbeddingCache, normalise_text
from werest.features.embedder import Embedder, cosine
from werest.features.embedding import embed_audio_files, embed_texts
from werest.features.sonar import SonarEmbedder
from werest.ingest.audio import AudioPolicy, LoadedAudio, utterance_audio

__all__ = ["SIMILARITY_COLUMNS", "SonarEmbedder", "add_similarity", "no_similarity"]
# SonarEmbedder stays importable here: run configs saved before the split name it as
# werest.features.similarity.SonarEmbedder in their embedder._target_.

log = logging.getLogger(__name__)

SIMILARITY_COLUMNS = ["similarity", "similarity_status", "audio_duration"]


def add_similarity(
    features: pd.DataFrame,
    transcripts: pd.DataFrame,
    embedder: Embedder | None,
    cache: EmbeddingCache | None = None,
    policy: AudioPolicy | None = None,
    text_column: str = "hypothesis",
    default_language: str | None = None,
    run_chunks: ChunkRunner | None = None,
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
    policy : the audio policy (the long-clip rule of :mod:`werest.ingest.audio`).
    run_chunks : embeds :data:`UTTERANCES_PER_TASK` utterances' rows per task elsewhere (a
        Dask cluster, :func:`similarity_on_worker`) and gives them back in any order; the
        workers build the embedder, so ``embedder`` is then unused (None).

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
    if run_chunks is not None and len(features):
        return _in_chunks(features, transcripts, run_chunks)
    utterances = utterance_audio(transcripts, default_language)
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


#: utterances whose rows one task embeds when the embedder runs on a cluster
UTTERANCES_PER_TASK = 64

#: ``run_chunks(chunks)`` -> ``(position, rows with similarity)`` per chunk, in any order,
#: where each chunk is ``(feature rows, transcript rows)`` of a few utterances
ChunkRunner = Callable[
    [list[tuple[pd.DataFrame, pd.DataFrame]]], Iterable[tuple[int, pd.DataFrame]]
]


@dataclass(frozen=True)
class SimilarityJob:
    """What every similarity task on a cluster needs, sent to each worker once: the
    embedder's description (a plain mapping with ``_target_``), the cache folder (None:
    memory), the audio policy and the columns' settings. ``run`` tells one run from the
    next: a worker's cache is read from disk again per run."""

    embedder: dict[str, Any]
    cache_dir: str | None
    policy: AudioPolicy
    text_column: str = "hypothesis"
    default_language: str | None = None
    run: str = field(default_factory=lambda: uuid.uuid4().hex)


def similarity_on_worker(
    chunk: tuple[pd.DataFrame, pd.DataFrame], job: SimilarityJob
) -> pd.DataFrame:
    """:func:`add_similarity` of one chunk in a worker process, which builds the embedder and
    opens the cache once (:func:`werest.build.kept`) for all the tasks it runs. Embeddings
    go to the shared cache folder, whose shards have unique names, so workers never clash."""
    embedder = instantiate_once(job.embedder, Embedder, "embedder")
    cache = kept("embedding-cache", job.run, lambda: EmbeddingCache(job.cache_dir))
    features, transcripts = chunk
    return add_similarity(
        features, transcripts, embedder, cache, job.policy, job.text_column, job.default_language
    )


def _in_chunks(
    features: pd.DataFrame, transcripts: pd.DataFrame, run_chunks: ChunkRunner
) -> pd.DataFrame:
    """:func:`add_similarity` by :data:`UTTERANCES_PER_TASK` utterances per chunk (each
    utterance's audio is embedded once, in one chunk), the rows back in ``features``' order."""
    rows = features.reset_index(drop=True)
    utterance = rows.groupby(["dataset", "utt_id"], sort=True).ngroup().to_numpy()
    chunk_of = utterance // UTTERANCES_PER_TASK
    keys = rows[["dataset", "utt_id"]].assign(_chunk=chunk_of).drop_duplicates()
    wanted = transcripts.merge(keys, on=["dataset", "utt_id"])
    feature_chunks = dict(tuple(rows.groupby(chunk_of, sort=True)))
    transcript_chunks = dict(tuple(wanted.groupby("_chunk", sort=True)))
    chunks = [
        (rows_n, transcript_chunks.get(n, wanted.iloc[:0]).drop(columns="_chunk"))
        for n, rows_n in feature_chunks.items()
    ]
    done: list[pd.DataFrame | None] = [None] * len(chunks)
    for position, result in run_chunks(chunks):
        done[position] = result.set_axis(chunks[position][0].index)
    out = pd.concat(done).sort_index()
    _log_statuses(out["similarity_status"].to_numpy())
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
