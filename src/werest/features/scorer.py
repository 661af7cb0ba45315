"""What scores a text against a clip of speech: the :class:`Scorer` protocol, the
:class:`TokenScores` it returns and their statistics (:data:`STATS`), and the form texts are
scored in (:func:`format_text`). The Whisper scorer is :mod:`werest.features.whisper_likelihood`;
the features made of its scores, :mod:`werest.features.likelihood`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import pandas as pd

from werest.features.settings import STATS
from werest.text.normalise import normalise_text

TEXT_FORMS = ("sentence", "lower", "raw")
LOW_PROBABILITY = 0.5
SAMPLE_RATE = 16_000

_PUNCTUATION = re.compile(r"[^\w\s']|_", flags=re.UNICODE)


def format_text(text: str, form: str = "sentence") -> str:
    """``text`` in the scoring form (:mod:`werest.features.likelihood`, "Formatting"):
    ``sentence``, ``lower`` or ``raw``."""
    text = normalise_text(text)
    if form == "raw":
        return text
    text = " ".join(_PUNCTUATION.sub(" ", unicodedata.normalize("NFKC", text).casefold()).split())
    text = " ".join(word.strip("'") for word in text.split() if word.strip("'"))
    if form == "sentence" and text:
        text = text[0].upper() + text[1:]
    return text


@dataclass
class TokenScores:
    """One text scored on one clip: each token's probability and the word it belongs to."""

    probs: np.ndarray
    word_ids: np.ndarray

    def stats(self) -> np.ndarray:
        """The :data:`STATS` vector (NaN when there are no tokens)."""
        if not len(self.probs):
            return np.array([np.nan] * (len(STATS) - 1) + [0.0])
        probs = np.clip(np.asarray(self.probs, dtype=np.float64), 1e-12, 1.0)
        logp = np.log(probs)
        word_logp = pd.Series(logp).groupby(self.word_ids).sum().to_numpy()
        return np.array(
            [
                logp.mean(),
                logp.min(),
                float(np.mean(probs < LOW_PROBABILITY)),
                float(np.mean(1.0 - np.exp(word_logp))),
                float(len(probs)),
            ]
        )


@runtime_checkable
class Scorer(Protocol):
    """Scores texts against one clip of speech (teacher forcing), for ``werest embed``.

    ``score_clip`` takes a 16 kHz mono float32 waveform, the texts (already in the scorer's
    text form) and an ISO 639-1 language; it returns one :class:`TokenScores` per text and
    raises :class:`~werest.errors.ConfigError` for a language it cannot score. ``cache_name``
    names what would serve ``lang``: equal names must mean equal scores (it keys the cache).
    ``prepare`` puts a hypothesis into the form the scorer wants (:func:`format_text`).
    A scorer that can also transcribe has ``decode_clip(samples, lang) -> list[int]``: its
    own transcript's token ids, ended by an end token (:data:`DECODE` features), and
    ``decode_text(ids, lang) -> str``. A scorer that identifies languages has
    ``language_scores(samples, lang) -> [p(lang), mismatch]`` (:data:`LANGUAGE` features).
    """

    def prepare(self, text: str) -> str: ...

    def score_clip(
        self, samples: np.ndarray, texts: Sequence[str], lang: str
    ) -> list[TokenScores]: ...

    def cache_name(self, lang: str) -> str: ...
