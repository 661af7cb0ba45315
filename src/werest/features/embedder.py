"""The :class:`Embedder` protocol between ``werest embed`` and its encoders, and building one.

An embedder maps audio and text into one space (SONAR: :mod:`werest.features.sonar`; a test
double or another encoder fits as well). ``conf/embedder/*.yaml`` names it by ``_target_``:
:func:`build_embedder` instantiates an :class:`Embedder`; :func:`likelihood_scorer` recognises
a :class:`werest.features.scorer.Scorer` instead (``embedder=whisper_likelihood``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """A speech and text encoder into one space (SONAR or anything that fits).

    ``embed_speech`` takes 16 kHz mono float32 waveforms; both methods return an ``(N, d)``
    float32 array, row ``i`` for input ``i``, not normalised. ``lang`` is an ISO 639-1 code
    (``en``) as in the transcripts table; the embedder maps it to its own codes and raises
    :class:`werest.errors.ConfigError` for a language it has no encoder for.
    ``cache_name`` names the encoder that would serve ``modality`` ("speech" or "text") and
    ``lang``: equal names must mean equal embeddings (it keys the cache).
    """

    def embed_speech(self, audio: Sequence[np.ndarray], lang: str) -> np.ndarray: ...

    def embed_text(self, texts: Sequence[str], lang: str) -> np.ndarray: ...

    def cache_name(self, modality: str, lang: str) -> str: ...


def cosine(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Row-wise cosine of two ``(N, d)`` arrays after L2 normalisation; NaN for a zero row."""
    left = np.asarray(left, dtype=np.float64)
    right = np.asarray(right, dtype=np.float64)
    norms = np.linalg.norm(left, axis=1) * np.linalg.norm(right, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.einsum("ij,ij->i", left, right) / norms
    return np.clip(np.where(norms > 0, values, np.nan), -1.0, 1.0)


def build_embedder(cfg: Mapping) -> Embedder:
    """Instantiate ``cfg`` (a node with ``_target_``) and check it is an :class:`Embedder`."""
    from werest.build import instantiate_checked

    return instantiate_checked(cfg, Embedder, "embedder")


def likelihood_scorer(cfg: Mapping) -> Any:
    """The :class:`werest.features.scorer.Scorer` that ``cfg`` builds, or None when its
    ``_target_`` is not a Scorer class (an :class:`Embedder`, built by :func:`build_embedder`)."""
    from hydra.utils import get_class

    from werest.build import instantiate_checked
    from werest.features.scorer import Scorer

    try:
        target = get_class(str(cfg.get("_target_")))
    except Exception:
        return None  # build_embedder reports it
    if not isinstance(target, type) or not issubclass(target, Scorer):
        return None
    return instantiate_checked(cfg, Scorer, "embedder")
