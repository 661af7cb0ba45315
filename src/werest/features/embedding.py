"""Embedding audio files and texts for ``werest embed``: each file and each distinct text once,
in batches, through the :class:`~werest.features.cache.EmbeddingCache`.

An audio file is keyed by the SHA-256 of its bytes and the audio policy, decoded with the
long-clip rule of :mod:`werest.ingest.audio` (a split clip's vector is the duration-weighted mean of
its segments'); a text by its normalised form. Misses are embedded and cached a chunk at a
time, so an interrupted run keeps every finished chunk.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from werest import logs
from werest.features.cache import EmbeddingCache, file_key, normalise_text, text_key
from werest.features.embedder import Embedder
from werest.ingest.audio import AudioPolicy, AudioStatus, LoadedAudio, load_audio

log = logging.getLogger(__name__)


def _batches(items: Sequence[Any], size: int, *, desc: str, unit: str) -> Iterator[Sequence[Any]]:
    """``items`` ``size`` at a time, with a progress bar over the items (none when empty) and,
    at INFO, the time it took (:func:`werest.logs.stage`: "embed (<desc>): 3.2 s")."""
    if not items:
        return
    with logs.stage(f"embed ({desc})", total=len(items), unit=unit) as bar:
        for start in range(0, len(items), size):
            chunk = items[start : start + size]
            yield chunk
            bar.update(len(chunk))


def embed_audio_files(
    paths: Sequence[str],
    lang: str,
    embedder: Embedder,
    cache: EmbeddingCache,
    policy: AudioPolicy,
    chunk_size: int = 64,
) -> dict[str, LoadedAudio | np.ndarray]:
    """Embed each audio file once: path -> (d,) vector, or the LoadedAudio that failed.

    Files are keyed by the SHA-256 of their bytes, so a cache hit needs no decoding; misses
    are decoded, embedded and written to the cache ``chunk_size`` files at a time (an
    interrupted run keeps every finished chunk). A split clip's vector is the
    duration-weighted mean of its segments' vectors.
    """
    namespace = f"{embedder.cache_name('speech', lang)}|{policy.signature()}"
    results: dict[str, LoadedAudio | np.ndarray] = {}
    keys: dict[str, str] = {}
    for path in paths:
        try:
            keys[path] = file_key(path)
        except OSError as error:
            status = AudioStatus.MISSING if not Path(path).exists() else AudioStatus.UNREADABLE
            results[path] = LoadedAudio(path, status, message=error.strerror or str(error))
    hits = cache.get_many(namespace, set(keys.values()))
    results.update({path: hits[key] for path, key in keys.items() if key in hits})
    todo = [path for path in keys if path not in results]
    log.info("speech %s: %d files, %d cached, %d to embed", lang, len(paths), len(hits), len(todo))
    for chunk in _batches(todo, chunk_size, desc=f"embed speech ({lang})", unit="clip"):
        results.update(_embed_audio_chunk(chunk, keys, lang, embedder, cache, namespace, policy))
    return results


def _embed_audio_chunk(
    paths: Sequence[str],
    keys: Mapping[str, str],
    lang: str,
    embedder: Embedder,
    cache: EmbeddingCache,
    namespace: str,
    policy: AudioPolicy,
) -> dict[str, LoadedAudio | np.ndarray]:
    loaded = {path: load_audio(path, policy) for path in paths}
    usable = [path for path, audio in loaded.items() if audio.status.usable]
    segments = [segment for path in usable for segment in loaded[path].segments]
    vectors = embedder.embed_speech(segments, lang) if segments else np.zeros((0, 0), np.float32)
    out: dict[str, LoadedAudio | np.ndarray] = {p: a for p, a in loaded.items() if p not in usable}
    start, new_keys, new_vectors = 0, [], []
    for path in usable:
        audio = loaded[path]
        count = len(audio.segments)
        vector = (audio.weights[:, None] * vectors[start : start + count]).sum(axis=0)
        start += count
        out[path] = vector.astype(np.float32)
        new_keys.append(keys[path])
        new_vectors.append(out[path])
    if new_keys:
        cache.put_many(namespace, new_keys, np.stack(new_vectors))
    return out


def embed_texts(
    texts: Sequence[str],
    lang: str,
    embedder: Embedder,
    cache: EmbeddingCache,
    chunk_size: int = 256,
) -> dict[str, np.ndarray]:
    """Embed each distinct normalised text once: normalised text -> (d,) vector."""
    namespace = embedder.cache_name("text", lang)
    unique = {text_key(text): normalise_text(text) for text in texts}
    vectors = cache.get_many(namespace, unique)
    todo = [key for key in unique if key not in vectors]
    log.info(
        "text %s: %d distinct, %d cached, %d to embed",
        lang,
        len(unique),
        len(unique) - len(todo),
        len(todo),
    )
    for chunk in _batches(todo, chunk_size, desc=f"embed text ({lang})", unit="text"):
        embedded = embedder.embed_text([unique[key] for key in chunk], lang)
        cache.put_many(namespace, list(chunk), embedded)
        vectors.update(zip(chunk, embedded, strict=True))
    return {unique[key]: vector for key, vector in vectors.items()}
