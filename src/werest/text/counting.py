"""Error counts and edit distances, as jiwer 4 counts them: a Levenshtein alignment of words
(or characters, spaces included) gives substitutions, deletions, insertions and hits per
utterance, each distinct pair aligned once (rapidfuzz); WER = (S + D + I) / N, and a corpus
WER is Σ errors / Σ N over utterances (:func:`corpus_rate`). Normalise the strings first
(:mod:`werest.text.normalise`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from werest.codes import row_codes
from werest.errors import ConfigError
from werest.logs import chunked, parallel_map

COUNT_COLUMNS: tuple[str, ...] = ("substitutions", "deletions", "insertions", "hits")


@dataclass(frozen=True)
class ErrorCounts:
    """Edit operations between a reference and a hypothesis (or sums over a corpus)."""

    substitutions: int
    deletions: int
    insertions: int
    hits: int

    @property
    def errors(self) -> int:
        """S + D + I."""
        return self.substitutions + self.deletions + self.insertions

    @property
    def reference_length(self) -> int:
        """Units (words or characters) in the reference: H + S + D."""
        return self.hits + self.substitutions + self.deletions

    @property
    def hypothesis_length(self) -> int:
        """Units in the hypothesis: H + S + I."""
        return self.hits + self.substitutions + self.insertions

    @property
    def rate(self) -> float:
        """(S + D + I) / N; NaN for an empty reference (the rate is undefined)."""
        n = self.reference_length
        return self.errors / n if n else float("nan")


def count_errors(
    references: Sequence[str] | pd.Series,
    hypotheses: Sequence[str] | pd.Series,
    unit: str = "word",
    *,
    n_jobs: int = 1,
    chunk_size: int = 50_000,
) -> pd.DataFrame:
    """Per-pair substitutions, deletions, insertions and hits, counted as jiwer 4 counts them.

    jiwer 4 splits on white space (words) or keeps every character, inner white space too,
    stripping only the ends (characters), maps units to integers and aligns them with
    rapidfuzz's Levenshtein ``opcodes``. This function does the same alignment (rapidfuzz
    ``editops``, whose counts equal the opcodes') without building jiwer's per-chunk
    alignment objects, which makes it several times faster on large tables (words are aligned
    as one code point each, :func:`_word_string`: the alignment reads only which units are
    equal, as with jiwer's integers); ``tests/unit/test_text.py`` checks it against
    ``jiwer.process_words`` and ``jiwer.process_characters`` on the shared datasets. Each
    distinct (reference, hypothesis) pair is aligned once. Normalise the strings first.

    Parameters
    ----------
    references, hypotheses : equal-length sequences of strings (no nulls).
    unit : ``word`` (WER) or ``char`` (CER; spaces count as characters, as in jiwer).
    n_jobs : worker processes (joblib) for the alignments; 1 aligns in this process.

    Returns
    -------
    A DataFrame with int64 columns ``substitutions, deletions, insertions, hits,
    reference_length, hypothesis_length``, one row per pair, in input order.
    """
    if unit not in ("word", "char"):
        raise ConfigError(f"unknown error unit {unit!r}; use 'word' or 'char'")
    refs = pd.Series(np.asarray(references, dtype=object))
    hyps = pd.Series(np.asarray(hypotheses, dtype=object))
    if len(refs) != len(hyps):
        raise ValueError(f"{len(refs)} references but {len(hyps)} hypotheses")
    if refs.isna().any() or hyps.isna().any():
        raise ValueError("count_errors takes strings, not nulls: drop unlabelled rows first")
    codes, first = row_codes(refs, hyps)
    unique_refs = refs.to_numpy()[first].tolist()
    unique_hyps = hyps.to_numpy()[first].tolist()
    chunks = list(chunked(unique_refs, unique_hyps, size=chunk_size))
    parts = parallel_map(_chunk_counts, chunks, n_jobs, desc=f"aligning {unit}s", unit=unit)
    counts = np.concatenate(parts) if parts else np.zeros((0, 4), dtype=np.int64)
    counts = counts[codes] if len(codes) else counts[:0]
    frame = pd.DataFrame(counts, columns=list(COUNT_COLUMNS))
    frame["reference_length"] = frame["hits"] + frame["substitutions"] + frame["deletions"]
    frame["hypothesis_length"] = frame["hits"] + frame["substitutions"] + frame["insertions"]
    return frame


def edit_distances(
    references: Sequence[str] | pd.Series,
    hypotheses: Sequence[str] | pd.Series,
    unit: str = "word",
    *,
    n_jobs: int = 1,
) -> np.ndarray:
    """Per-pair Levenshtein distance in words or characters: S + D + I of :func:`count_errors`
    (an optimal alignment's edits), without splitting it into S, D and I.

    The distance is all that agreement between two systems needs (consensus, triangulation,
    the proxy order, the guards); S/D/I are needed only for a target and its proxy. Words are
    mapped to one code point each, so rapidfuzz's ``process.cpdist`` compares whole word
    sequences as strings, in C, each distinct pair once; ``n_jobs`` threads (−1: all cores).

    Returns
    -------
    int64 distances, one per pair, in input order.
    """
    if unit not in ("word", "char"):
        raise ConfigError(f"unknown error unit {unit!r}; use 'word' or 'char'")
    refs = np.asarray(references, dtype=object)
    hyps = np.asarray(hypotheses, dtype=object)
    if len(refs) != len(hyps):
        raise ValueError(f"{len(refs)} references but {len(hyps)} hypotheses")
    if not len(refs):
        return np.zeros(0, dtype=np.int64)
    texts, distinct = pd.factorize(np.concatenate([refs, hyps]))
    return coded_distances(texts[: len(refs)], texts[len(refs) :], distinct, unit, n_jobs=n_jobs)


def coded_distances(
    references: np.ndarray, hypotheses: np.ndarray, texts, unit: str, *, n_jobs: int = 1
) -> np.ndarray:
    """:func:`edit_distances` of pairs given as integer codes into ``texts`` (the distinct
    texts), for a caller that has factorised them already: each text is encoded once, and
    the distance being symmetric, (a, b) and (b, a) are one pair, aligned once."""
    from rapidfuzz import process
    from rapidfuzz.distance import Levenshtein

    a, b = np.asarray(references, dtype=np.int64), np.asarray(hypotheses, dtype=np.int64)
    pair = np.minimum(a, b) * len(texts) + np.maximum(a, b)
    pairs, codes = np.unique(pair, return_inverse=True)
    used = np.unique(np.concatenate([pairs // len(texts), pairs % len(texts)])).tolist()
    chosen = [texts[i] for i in used]
    units = word_strings(chosen) if unit == "word" else [_units(t, unit) for t in chosen]
    encoded = dict(zip(used, units, strict=True))
    distances = process.cpdist(
        [encoded[i] for i in (pairs // len(texts)).tolist()],
        [encoded[i] for i in (pairs % len(texts)).tolist()],
        scorer=Levenshtein.distance,
        workers=n_jobs,
        dtype=np.int64,
    )
    return np.asarray(distances, dtype=np.int64).reshape(-1)[codes.reshape(-1)]


#: code points that stand for words in :func:`edit_distances` skip the surrogate block
_SURROGATES, _SURROGATE_SPAN = 0xD800, 0x800


def encoded_texts(texts: Sequence[str], unit: str) -> list:
    """Each text as :func:`coded_distances` aligns it: words as one code point each (one
    vocabulary for all of ``texts``), or its characters; for a caller that aligns many pairs
    of the same texts (:func:`encoded_distances`)."""
    if unit == "word":
        return word_strings(list(texts))
    return [_units(text, unit) for text in texts]


def encoded_distances(encoded: list, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The Levenshtein distance between ``encoded[a[i]]`` and ``encoded[b[i]]`` for every i
    (:func:`encoded_texts`), int64."""
    from rapidfuzz import process
    from rapidfuzz.distance import Levenshtein

    left = [encoded[i] for i in np.asarray(a).tolist()]
    right = [encoded[i] for i in np.asarray(b).tolist()]
    distances = process.cpdist(left, right, scorer=Levenshtein.distance, dtype=np.int64)
    return np.asarray(distances, dtype=np.int64).reshape(-1)


class _WordPoints(dict):
    """word -> the one-character string that stands for it in :func:`_word_string`: the n-th
    distinct word is code point n (past the surrogate block, :data:`_SURROGATES`), given the
    first time the word is looked up, so a text is encoded by C-level lookups alone."""

    __slots__ = ()

    def __missing__(self, word: str) -> str:
        index = len(self)
        if index >= 0x10FFFF - _SURROGATE_SPAN:
            raise ValueError("more distinct words than code points: align in smaller chunks")
        point = self[word] = chr(index + _SURROGATE_SPAN if index >= _SURROGATES else index)
        return point


def _word_string(text: str, vocabulary: _WordPoints) -> str:
    """``text``'s words (as jiwer splits them) as one code point each, the same word always
    the same code point (one ``vocabulary`` for all the texts aligned together)."""
    return "".join(map(vocabulary.__getitem__, text.split()))


class _WordEncoder:
    """Texts as :func:`_word_string` encodes them under one vocabulary, each distinct text
    encoded once however many alignments read it."""

    def __init__(self) -> None:
        self.points, self.texts = _WordPoints(), {}

    def encode(self, texts: list[str]) -> list[str]:
        known, points, out = self.texts, self.points, []
        for text in texts:
            encoded = known.get(text)
            if encoded is None:
                encoded = known[text] = _word_string(text, points)
            out.append(encoded)
        return out


#: the process's encoder starts anew, at the start of a call, beyond this many texts or
#: words (~100 bytes a text): memory stays bounded, and a call has room for 600,000 new words
ENCODER_LIMIT = 500_000
_ENCODER: list[_WordEncoder] = []


def word_strings(texts: list[str]) -> list[str]:
    """``texts`` as :func:`_word_string` encodes them, all under one vocabulary: the
    process's, so a text the features, the guards' sample and the winner's contests all
    align is split and encoded once. The code points differ from call to call (and from a
    fresh vocabulary's), which no distance or alignment reads: they compare words for
    equality only."""
    encoder = _ENCODER[0] if _ENCODER else None
    if encoder is None or max(len(encoder.texts), len(encoder.points)) > ENCODER_LIMIT:
        encoder = _WordEncoder()
        _ENCODER[:] = [encoder]
    try:
        return encoder.encode(texts)
    except ValueError:  # the process's vocabulary filled up: these texts under their own
        _ENCODER.clear()
        return _WordEncoder().encode(texts)


def _units(text: str, unit: str) -> list[str] | str:
    """jiwer's default transforms: words split on white space; or every character of the text
    with only its ends stripped (jiwer 4 keeps inner runs of white space as they are)."""
    return text.split() if unit == "word" else text.strip()


def _chunk_counts(refs: list[str], hyps: list[str], *, unit: str) -> np.ndarray:
    from rapidfuzz.distance import Levenshtein

    if unit == "word":  # each text's words as code points, one vocabulary (word_strings)
        both = word_strings([*refs, *hyps])
        refs, hyps = both[: len(refs)], both[len(refs) :]
    else:
        refs, hyps = [_units(t, unit) for t in refs], [_units(t, unit) for t in hyps]
    rows = []
    editops = Levenshtein.editops
    for ref, hyp in zip(refs, hyps, strict=True):
        operations = editops(ref, hyp)
        if operations:
            tags = [tag for tag, _, _ in operations.as_list()]
            subs, dels = tags.count("replace"), tags.count("delete")
        else:
            subs = dels = 0
        rows.append((subs, dels, len(operations) - subs - dels, len(ref) - subs - dels))
    return np.array(rows, dtype=np.int64).reshape(-1, 4)


def measure(reference: str, hypothesis: str, unit: str = "word") -> ErrorCounts:
    """Error counts of one (reference, hypothesis) pair."""
    row = count_errors([reference], [hypothesis], unit).iloc[0]
    return ErrorCounts(*(int(row[c]) for c in COUNT_COLUMNS))


def error_rate(
    errors: np.ndarray | pd.Series, reference_length: np.ndarray | pd.Series
) -> np.ndarray:
    """Per-utterance rate errors / length; NaN where the reference is empty."""
    errors = np.asarray(errors, dtype=float)
    length = np.asarray(reference_length, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(length > 0, errors / length, np.nan)


def corpus_rate(errors: np.ndarray | pd.Series, reference_length: np.ndarray | pd.Series) -> float:
    """Corpus WER/CER: Σ errors / Σ reference units (NaN when there are no reference units)."""
    total = float(np.sum(reference_length))
    return float(np.sum(errors)) / total if total > 0 else float("nan")
