"""Whisper teacher forcing through CTranslate2 (the ``[audio]`` extra): the
:class:`WhisperLikelihood` scorer of ``werest embed embedder=whisper_likelihood`` (what its
scores become: :mod:`werest.features.likelihood`). Each ≤30 s piece of a clip is encoded
once and every text of the clip is scored against it; a longer clip is cut into the fewest
equal chunks (:func:`chunk_bounds`), each text's words shared out over them
(:func:`share_words`).
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from werest.errors import ConfigError
from werest.features.scorer import SAMPLE_RATE, TEXT_FORMS, TokenScores, format_text


def chunk_bounds(length: int, max_samples: int) -> list[tuple[int, int]]:
    """The fewest equal (start, end) pieces of at most ``max_samples`` covering ``length``."""
    count = max(1, math.ceil(length / max_samples))
    edges = np.linspace(0, length, count + 1).round().astype(int)
    return list(itertools.pairwise(edges.tolist()))


def share_words(words: Sequence[str], weights: Sequence[float]) -> list[list[str]]:
    """``words`` cut into ``len(weights)`` consecutive parts in proportion to ``weights``."""
    cumulative = np.concatenate([[0.0], np.cumsum(weights)]) / float(np.sum(weights))
    edges = (cumulative * len(words)).round().astype(int)
    return [list(words[a:b]) for a, b in itertools.pairwise(edges)]


class WhisperLikelihood:
    """Whisper teacher forcing through CTranslate2 (``faster-whisper``'s model and tokenizer).

    Parameters
    ----------
    model : str or None
        A CTranslate2 Whisper folder; None: the bundled tiny.en (``[audio]`` extra).
    device, compute_type, cpu_threads : str, str, int
        As for ``asr=faster_whisper``.
    text_form : str
        ``sentence``, ``lower`` or ``raw``: how texts are formatted before scoring.
    batch_size : int
        Texts per ``align`` call (each call repeats the clip's encoder output this many times).
    chunk_seconds : float
        Longest audio piece scored at once (Whisper's window is 30 s).
    """

    def __init__(
        self,
        model: str | None = None,
        device: str = "cpu",
        compute_type: str = "int8",
        cpu_threads: int = 2,
        text_form: str = "sentence",
        batch_size: int = 16,
        chunk_seconds: float = 30.0,
    ) -> None:
        from werest.ingest.asr.faster_whisper_asr import (
            load_whisper,
            model_languages,
            whisper_model_path,
        )

        if text_form not in TEXT_FORMS:
            raise ConfigError(f"embedder.text_form={text_form!r}: one of {', '.join(TEXT_FORMS)}")
        if int(batch_size) < 1 or not 0 < float(chunk_seconds) <= 30:
            raise ConfigError("embedder.batch_size must be >= 1 and 0 < chunk_seconds <= 30")
        self.path = whisper_model_path(model, "embedder.model")
        self.compute_type = str(compute_type)
        self.text_form = text_form
        self.batch_size = int(batch_size)
        self.chunk_samples = int(float(chunk_seconds) * SAMPLE_RATE)
        self._whisper = load_whisper(self.path, device, self.compute_type, cpu_threads, "embedder")
        #: the languages this model can score: English only for tiny.en, 99 for base
        self.languages = model_languages(self._whisper)
        self._tokenizers: dict[str, Any] = {}
        self._last_encoded: tuple[bytes, np.ndarray, int] | None = None
        weights = self.path / "model.bin"
        digest = hashlib.sha256(f"{weights.stat().st_size}:{weights.stat().st_mtime_ns}".encode())
        self._identity = f"{self.path.name}:{digest.hexdigest()[:12]}:{self.compute_type}"

    def prepare(self, text: str) -> str:
        """``text`` in this scorer's ``text_form``."""
        return format_text(text, self.text_form)

    def cache_name(self, lang: str) -> str:
        self._tokenizer(lang)  # an unsupported language raises here, before any work
        return f"whisper-likelihood:{self._identity}:{lang}:{self.text_form}"

    def _tokenizer(self, lang: str) -> Any:
        if lang not in self._tokenizers:
            from faster_whisper.tokenizer import Tokenizer

            multilingual = self._whisper.model.is_multilingual
            if lang not in self.languages:
                kind = "an English-only" if not multilingual else "a"
                raise ConfigError(f"{self.path.name} is {kind} Whisper model: no language {lang!r}")
            self._tokenizers[lang] = Tokenizer(
                self._whisper.hf_tokenizer, multilingual, task="transcribe", language=lang
            )
        return self._tokenizers[lang]

    def score_clip(self, samples: np.ndarray, texts: Sequence[str], lang: str) -> list[TokenScores]:
        """Score every text on the clip: one encoder pass per ≤30 s chunk, batched decoding."""
        tokenizer = self._tokenizer(lang)
        samples = np.asarray(samples, dtype=np.float32)
        bounds = chunk_bounds(len(samples), self.chunk_samples)
        parts = [share_words(t.split(), [b - a for a, b in bounds]) for t in texts]
        probs: list[list[float]] = [[] for _ in texts]
        word_ids: list[list[int]] = [[] for _ in texts]
        for index, (start, end) in enumerate(bounds):
            encoded, frames = self._encode(samples[start:end])
            todo = [i for i in range(len(texts)) if parts[i][index]]
            for batch in _batches(todo, self.batch_size):
                tokens, owners = [], []
                for i in batch:
                    offset = sum(len(p) for p in parts[i][:index])
                    ids = [tokenizer.encode(" " + word) for word in parts[i][index]]
                    tokens.append([t for word in ids for t in word])
                    owners.append([offset + w for w, word in enumerate(ids) for _ in word])
                for i, scored, owner in zip(
                    batch, self._align(encoded, frames, tokenizer, tokens), owners, strict=True
                ):
                    probs[i].extend(scored)
                    word_ids[i].extend(owner)
        return [
            TokenScores(np.asarray(p, dtype=np.float64), np.asarray(w, dtype=np.int64))
            for p, w in zip(probs, word_ids, strict=True)
        ]

    def decode_clip(self, samples: np.ndarray, lang: str) -> list[int]:
        """The model's own greedy transcript of the clip, chunk by chunk: token ids ending
        with the end-of-text token (so an empty transcript is still one token)."""
        import ctranslate2

        tokenizer = self._tokenizer(lang)
        samples = np.asarray(samples, dtype=np.float32)
        prompt = [*tokenizer.sot_sequence, tokenizer.no_timestamps]
        ids: list[int] = []
        for start, end in chunk_bounds(len(samples), self.chunk_samples):
            encoded, _ = self._encode(samples[start:end])
            result = self._whisper.model.generate(
                ctranslate2.StorageView.from_array(np.ascontiguousarray(encoded)),
                [prompt],
                beam_size=1,
                max_length=448,
                suppress_blank=True,
                suppress_tokens=list(tokenizer.non_speech_tokens),
            )[0]
            ids.extend(t for t in result.sequences_ids[0] if t < tokenizer.eot)
        return [*ids, tokenizer.eot]

    def decode_text(self, ids: Sequence[int], lang: str) -> str:
        """The text of :meth:`decode_clip`'s token ids."""
        return self._tokenizer(lang).decode([int(t) for t in ids]).strip()

    def language_scores(self, samples: np.ndarray, lang: str) -> np.ndarray:
        """Whisper's language identification of the clip (its first ≤30 s) against ``lang``:
        ``[p(lang), 1 if the most likely language is not lang else 0]``; NaN for an
        English-only model, which identifies nothing."""
        import ctranslate2

        if not self._whisper.model.is_multilingual:
            return np.array([np.nan, np.nan])
        samples = np.asarray(samples, dtype=np.float32)
        start, end = chunk_bounds(len(samples), self.chunk_samples)[0]
        encoded, _ = self._encode(samples[start:end])
        view = ctranslate2.StorageView.from_array(np.ascontiguousarray(encoded))
        ranked = self._whisper.model.detect_language(view)[0]
        probs = {token.strip("<|>"): float(p) for token, p in ranked}
        top = max(probs, key=probs.__getitem__)
        return np.array([probs.get(lang, 0.0), float(top != lang)])

    def _encode(self, samples: np.ndarray) -> tuple[np.ndarray, int]:
        """The encoder output of one ≤30 s piece; the last one is kept, because scoring and
        decoding the same clip ask for it twice."""
        from faster_whisper.audio import pad_or_trim

        digest = hashlib.sha1(samples.tobytes()).digest()
        if self._last_encoded is not None and self._last_encoded[0] == digest:
            return self._last_encoded[1], self._last_encoded[2]
        features = self._whisper.feature_extractor(samples)
        frames = int(features.shape[-1])
        encoded = np.asarray(self._whisper.encode(pad_or_trim(features)))
        self._last_encoded = (digest, encoded, frames)
        return encoded, frames

    def _align(
        self, encoded: np.ndarray, frames: int, tokenizer: Any, tokens: list[list[int]]
    ) -> list[list[float]]:
        import ctranslate2

        batch = ctranslate2.StorageView.from_array(
            np.ascontiguousarray(np.repeat(encoded, len(tokens), axis=0))
        )
        start = [*tokenizer.sot_sequence, tokenizer.no_timestamps]
        results = self._whisper.model.align(batch, start, tokens, [frames] * len(tokens))
        return [list(result.text_token_probs) for result in results]

    def __repr__(self) -> str:
        return f"WhisperLikelihood(model={str(self.path)!r}, text_form={self.text_form!r})"


def _batches(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[start : start + size] for start in range(0, len(items), size)]
