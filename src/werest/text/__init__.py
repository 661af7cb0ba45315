"""Text normalisation and error counting (WER/CER) on top of whisper-normalizer and jiwer 4.

Normalisers are a named, configurable choice, resolved once into a :class:`Normaliser`
(the name stays what configs and model cards hold; :func:`get_normaliser` gives the function
for one language):

``whisper_english``
    Whisper's English normaliser, the Open ASR Leaderboard convention (default): lower case,
    punctuation removed, numbers and spellings standardised ("twenty five" -> "25").
``whisper_basic``
    Whisper's basic normaliser for other languages: lower case, bracketed and parenthesised
    words dropped, symbols and punctuation replaced by spaces. Whisper's version also replaces
    every combining mark by a space, which cuts words of Indic scripts and vowelled Arabic into
    fragments ("ടിന്നിൽ" -> "ട ന ന ൽ"); werest keeps the marks (whisper-normalizer's own
    ``preserve_marks`` option). With a ``language`` it adds the orthographic rules ASR scoring
    needs there (Arabic: diacritics, tatweel and alef/ya/ta-marbuta variants; Malayalam: chillu
    letters and zero-width joiners), applied to reference and hypothesis alike.
``auto``
    Per row, by the table's ``language`` column: ``whisper_english`` for English (or no
    language), ``whisper_basic`` with the row's language otherwise. The default of every
    command: on a table without a ``language`` column it is ``whisper_english``.
``none``
    The text as it is (white space still separates words).

Languages written without spaces between words (:data:`CHARACTER_LANGUAGES`: Chinese,
Japanese, Thai, Lao, Khmer, Burmese, Tibetan, Cantonese) are scored on characters, as the
field does (mu-bench, FLEURS and the Open ASR Leaderboard report CER there): with ``auto`` or
``whisper_basic`` and such a language, the normalised text has a space between every character,
so the "word" error rate of these rows is their character error rate.
:func:`scoring_unit` names the unit a language is scored in, and reports say so.

Normalisation costs ~0.2 ms a string for ``whisper_english``: :func:`normalise_many`
normalises each distinct string once.

Error counts follow jiwer: a Levenshtein alignment of words (or characters, spaces included)
gives substitutions, deletions, insertions and hits per utterance. WER = (S + D + I) / N with N
the reference words; a corpus WER is Σ errors / Σ N over utterances, never the mean of
per-utterance WERs (which over-weights short utterances).
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache, partial

import numpy as np
import pandas as pd

from werest.codes import row_codes
from werest.errors import ConfigError

log = logging.getLogger(__name__)

TextRule = Callable[[str], str]

NORMALISERS: tuple[str, ...] = ("whisper_english", "whisper_basic", "auto", "none")
COUNT_COLUMNS: tuple[str, ...] = ("substitutions", "deletions", "insertions", "hits")

# --------------------------------------------------------------------------- normalisers

_ARABIC_DIACRITICS = re.compile("[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640]")
_ARABIC_LETTERS = str.maketrans({"أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا", "ى": "ي", "ة": "ه"})
# Malayalam chillu letters: the atomic code points and the old <consonant, virama, ZWJ> forms.
_MALAYALAM_CHILLU = {
    "\u0d23\u0d4d\u200d": "\u0d7a",
    "\u0d28\u0d4d\u200d": "\u0d7b",
    "\u0d30\u0d4d\u200d": "\u0d7c",
    "\u0d32\u0d4d\u200d": "\u0d7d",
    "\u0d33\u0d4d\u200d": "\u0d7e",
    "\u0d15\u0d4d\u200d": "\u0d7f",
}
_ZERO_WIDTH = re.compile("[\u200b-\u200d\u2060\ufeff]")


def _arabic(text: str) -> str:
    return _ARABIC_DIACRITICS.sub("", text).translate(_ARABIC_LETTERS)


def _malayalam(text: str) -> str:
    for old, new in _MALAYALAM_CHILLU.items():
        text = text.replace(old, new)
    return _ZERO_WIDTH.sub("", text)


_LANGUAGE_RULES: dict[str, Callable[[str], str]] = {"ar": _arabic, "ml": _malayalam}

CHARACTER_LANGUAGES: frozenset[str] = frozenset({"zh", "ja", "th", "lo", "km", "my", "bo", "yue"})


def _characters(text: str) -> str:
    """Every non-space character as its own token, combining marks kept with the character
    they modify (Thai vowel and tone marks): ``"你好 吗"`` -> ``"你 好 吗"``."""
    tokens: list[str] = []
    for character in text:
        if character.isspace():
            continue
        if tokens and unicodedata.category(character) in ("Mn", "Mc"):
            tokens[-1] += character
        else:
            tokens.append(character)
    return " ".join(tokens)


_LANGUAGE_ALIASES = {
    "eng": "en",
    "ara": "ar",
    "arb": "ar",
    "mal": "ml",
    "zho": "zh",
    "cmn": "zh",
    "jpn": "ja",
    "tha": "th",
}


def language_code(language: str | None) -> str | None:
    """``en``, ``eng``, ``en-US``, ``eng_Latn`` -> ``en``; unknown codes stay as given."""
    if not language or (isinstance(language, float) and np.isnan(language)):
        return None
    code = re.split(r"[-_]", str(language).strip().lower())[0]
    return _LANGUAGE_ALIASES.get(code, code)


@cache
def get_normaliser(name: str = "whisper_english", language: str | None = None) -> TextRule:
    """The normaliser called ``name`` (see the module docstring), for ``language``.

    Raises
    ------
    ConfigError : an unknown name.
    """
    language = language_code(language)
    name = name or "auto"
    if name == "none":
        return _identity
    if name == "auto":
        name = "whisper_english" if language in (None, "en") else "whisper_basic"
    if name == "whisper_english":
        from werest.text.english import FastEnglishTextNormalizer

        return FastEnglishTextNormalizer()
    if name == "whisper_basic":
        rule = _LANGUAGE_RULES.get(language or "")
        basic = _basic if rule is None else _with_rule(rule)
        if language in CHARACTER_LANGUAGES:
            return lambda text: _characters(basic(text))
        return basic
    raise _unknown_normaliser(name)


def _unknown_normaliser(name: str) -> ConfigError:
    return ConfigError(f"unknown normaliser {name!r}; choose one of {', '.join(NORMALISERS)}")


def _with_rule(rule: TextRule) -> TextRule:
    return lambda text: _basic(rule(unicodedata.normalize("NFC", text)))


def _identity(text: str) -> str:
    return text


_BRACKETED = re.compile(r"[<\[][^>\]]*[>\]]")
_PARENTHESISED = re.compile(r"\(([^)]+?)\)")
_SPACES = re.compile(r"\s+")


def _basic(text: str) -> str:
    """whisper-normalizer's ``BasicTextNormalizer`` with Unicode marks preserved."""
    from whisper_normalizer.basic import remove_symbols

    text = _PARENTHESISED.sub("", _BRACKETED.sub("", text.lower()))
    return _SPACES.sub(" ", remove_symbols(text, preserve_marks=True).lower())


@dataclass(frozen=True)
class Normaliser:
    """A normaliser chosen once, by its name (see the module docstring), and passed down.

    It is what a run's text goes through; its ``name`` is what configs and model cards hold,
    and it prints as that name. Unknown names fail here, at the boundary, not deep inside the
    first function that normalises. It pickles to worker processes as its name.
    """

    name: str = "auto"

    def __post_init__(self) -> None:
        if self.name not in NORMALISERS:
            raise _unknown_normaliser(self.name)

    def __call__(self, text: str, language: str | None = None) -> str:
        """One string, for ``language`` (used by ``auto`` and ``whisper_basic``)."""
        return get_normaliser(self.name, language)(text)

    def many(self, texts, languages=None, *, n_jobs: int = 1) -> pd.Series:
        """Many strings, each distinct one once (:func:`normalise_many`)."""
        return normalise_many(texts, self, languages, n_jobs=n_jobs)

    def __str__(self) -> str:
        return self.name


AUTO = Normaliser("auto")
"""The default normaliser: per row, by its language."""
NO_NORMALISATION = Normaliser("none")
"""The text as it is."""


def as_normaliser(value: Normaliser | str | None) -> Normaliser:
    """The :class:`Normaliser` a config value or a public API argument names (unset:
    ``auto``). Only boundaries call this (the commands, :mod:`werest.api`, :func:`wer` and
    :func:`cer`); library functions take a :class:`Normaliser`."""
    return value if isinstance(value, Normaliser) else Normaliser(value or "auto")


def requested_normaliser(value: Normaliser | str | None) -> Normaliser | None:
    """The :class:`Normaliser` a user asked a trained model's run to use, or None when unset
    (``werest estimate``/``leaderboard``, :func:`werest.api.estimate`): there, unset means the
    model's own normaliser, not ``auto``, and a name may only restate it
    (:func:`werest.estimation.estimate.check_normaliser`). A boundary function, like
    :func:`as_normaliser`."""
    return None if value is None or value == "" else as_normaliser(value)


def scoring_unit(language: str | None, normaliser: Normaliser = AUTO) -> str:
    """The unit a row's "word" error rate counts under ``normaliser``: ``"character"`` for a
    language written without spaces between words (with ``auto`` or ``whisper_basic``), else
    ``"word"``."""
    if normaliser.name not in ("auto", "whisper_basic"):
        return "word"
    return "character" if language_code(language) in CHARACTER_LANGUAGES else "word"


def normalise_many(
    texts: Iterable[str] | pd.Series,
    normaliser: Normaliser = AUTO,
    languages: Iterable[str | None] | pd.Series | None = None,
    *,
    n_jobs: int = 1,
    chunk_size: int = 1_000,
    helpers: int = 0,
) -> pd.Series:
    """Normalise many strings, each distinct (text, language) pair once.

    Parameters
    ----------
    texts : the strings; nulls stay null.
    normaliser : the :class:`Normaliser` (a name is refused: build the Normaliser once, at
        the boundary).
    languages : per-string language codes, used by ``auto`` and ``whisper_basic``.
    n_jobs : worker processes (joblib) for large inputs; 1 normalises in this process.
    chunk_size : distinct strings per chunk: one step of the "normalising" progress bar
        (about 0.1-0.3 s each) and one worker's task.
    helpers : with ``n_jobs=1``, forked processes that share the chunks
        (:func:`werest.forked.shared_map`; :func:`werest.forked.helper_count` says when).

    Returns
    -------
    A ``str`` Series aligned with ``texts`` (same index when ``texts`` is a Series).
    """
    if not isinstance(normaliser, Normaliser):
        raise TypeError(f"normalise_many takes a Normaliser, not {normaliser!r}")
    normaliser = normaliser.name
    series = texts if isinstance(texts, pd.Series) else pd.Series(list(texts), dtype="str")
    if normaliser == "none":
        return series.astype("str")
    if languages is None or normaliser in ("whisper_english", "none"):
        language_codes = pd.Series("", index=series.index, dtype="str")
    else:
        language_codes = pd.Series(np.asarray(languages, dtype=object), index=series.index)
        language_codes = language_codes.fillna("").astype("str")
    null = series.isna().to_numpy()
    filled = series.fillna("")
    codes, first = row_codes(filled, language_codes)
    texts = filled.to_numpy(dtype=object)[first].tolist()
    langs = language_codes.to_numpy(dtype=object)[first].tolist()
    memo = _CACHES[-1] if _CACHES else None
    known = memo.lookup(normaliser, texts, langs) if memo is not None else [None] * len(texts)
    todo = [i for i, value in enumerate(known) if value is None]
    chunks = list(_chunked([texts[i] for i in todo], [langs[i] for i in todo], size=chunk_size))
    parts = parallel_map(
        _normalise_chunk,
        chunks,
        n_jobs,
        desc="normalising",
        helpers=helpers,
        normaliser=normaliser,
    )
    for i, text in zip(todo, (text for part in parts for text in part), strict=True):
        known[i] = text
    if memo is not None:
        memo.store(normaliser, [texts[i] for i in todo], [langs[i] for i in todo], parts)
    values = np.asarray(known, dtype=object)[codes]
    values[null] = None
    return pd.Series(values, index=series.index, dtype="str")


class NormalisationCache:
    """Normalised strings kept across :func:`normalise_many` calls (inside
    :func:`cached_normalisation`): a partitioned run normalises each distinct string once per
    worker process, not once per partition. At most ``max_entries`` strings: when full, it
    starts again empty, so memory stays bounded (~200 B an entry)."""

    def __init__(self, max_entries: int = 500_000) -> None:
        self.max_entries = max_entries
        self.entries: dict[tuple[str, str, str], str] = {}

    def lookup(self, normaliser: str, texts: list[str], langs: list[str]) -> list[str | None]:
        get = self.entries.get
        return [get((normaliser, lang, text)) for text, lang in zip(texts, langs, strict=True)]

    def store(self, normaliser: str, texts: list[str], langs: list[str], parts) -> None:
        if len(self.entries) + len(texts) > self.max_entries:
            self.entries.clear()
        if len(texts) > self.max_entries:
            return
        done = (text for part in parts for text in part)
        for text, lang, value in zip(texts, langs, done, strict=True):
            self.entries[(normaliser, lang, text)] = value


_CACHES: list[NormalisationCache] = []


@contextmanager
def cached_normalisation(cache: NormalisationCache) -> Iterator[NormalisationCache]:
    """Let :func:`normalise_many` reuse and fill ``cache`` while the block runs."""
    _CACHES.append(cache)
    try:
        yield cache
    finally:
        _CACHES.remove(cache)


@contextmanager
def reusing_normalisation(default: NormalisationCache) -> Iterator[NormalisationCache]:
    """The cache an enclosing :func:`cached_normalisation` opened (an in-memory run's own),
    else ``default`` (a partition process's, kept across the partitions it runs)."""
    if _CACHES:
        yield _CACHES[-1]
        return
    with cached_normalisation(default) as cache:
        yield cache


def _normalise_chunk(texts: list[str], languages: list[str], *, normaliser: str) -> list[str]:
    return [
        get_normaliser(normaliser, lang or None)(text)
        for text, lang in zip(texts, languages, strict=True)
    ]


# --------------------------------------------------------------------------- error counting


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
    chunks = list(_chunked(unique_refs, unique_hyps, size=chunk_size))
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


def _chunked(*lists: list, size: int) -> Iterable[tuple[list, ...]]:
    for start in range(0, len(lists[0]), size):
        yield tuple(values[start : start + size] for values in lists)


def parallel_map(
    function: Callable,
    chunks: list[tuple],
    n_jobs: int,
    *,
    desc: str | None = None,
    helpers: int = 0,
    **kwargs,
) -> list:
    """``[function(*chunk, **kwargs) for chunk in chunks]``, in joblib workers when
    ``n_jobs != 1`` and there is more than one chunk, else shared with ``helpers`` forked
    processes (:func:`werest.forked.shared_map`); with ``desc``, a progress bar over the
    chunks on a terminal (tqdm leaves it out when stderr is not one)."""
    from werest import logs

    if n_jobs == 1 and helpers and len(chunks) >= 2:
        from werest.forked import shared_map

        results = shared_map(partial(_star, function, kwargs), chunks, helpers=helpers)
    elif n_jobs == 1 or len(chunks) < 2:
        results = (function(*chunk, **kwargs) for chunk in chunks)
    else:
        from joblib import Parallel, delayed

        results = Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(function)(*chunk, **kwargs) for chunk in chunks
        )
    bar = logs.bar(results, total=len(chunks), desc=desc or "", unit="chunk", disable=not desc)
    return list(bar)


def _star(function: Callable, kwargs: dict, chunk: tuple):
    return function(*chunk, **kwargs)


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


def wer(
    reference: str | Sequence[str],
    hypothesis: str | Sequence[str],
    *,
    normaliser: Normaliser | str = "none",
    language: str | None = None,
) -> float:
    """Corpus word error rate of one pair or of two equal-length lists of strings:
    Σ (S + D + I) / Σ reference words, as ``jiwer.wer`` computes it.

    ``normaliser`` (a :class:`Normaliser` or its name) is ``none`` by default, as in jiwer;
    the werest commands' convention is ``whisper_english`` (or ``auto``, which is
    ``whisper_english`` without a ``language``).

    >>> wer("the cat sat", "the cat sat down")
    0.3333333333333333
    """
    return _rate(reference, hypothesis, "word", as_normaliser(normaliser), language)


def cer(
    reference: str | Sequence[str],
    hypothesis: str | Sequence[str],
    *,
    normaliser: Normaliser | str = "none",
    language: str | None = None,
) -> float:
    """Corpus character error rate (spaces count, as in ``jiwer.cer``); see :func:`wer`."""
    return _rate(reference, hypothesis, "char", as_normaliser(normaliser), language)


def _rate(reference, hypothesis, unit: str, normaliser: Normaliser, language: str | None) -> float:
    references = [reference] if isinstance(reference, str) else list(reference)
    hypotheses = [hypothesis] if isinstance(hypothesis, str) else list(hypothesis)
    if len(references) != len(hypotheses):
        raise ValueError(f"{len(references)} references but {len(hypotheses)} hypotheses")
    counts = count_errors(
        [normaliser(text, language) for text in references],
        [normaliser(text, language) for text in hypotheses],
        unit,
    )
    if counts["reference_length"].sum() == 0:
        raise ValueError("the references are empty: the error rate is undefined")
    errors = counts["substitutions"] + counts["deletions"] + counts["insertions"]
    return corpus_rate(errors, counts["reference_length"])


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


def normalised_columns(
    table: pd.DataFrame,
    normaliser: Normaliser,
    columns: tuple[str, ...] = ("hypothesis", "reference"),
    *,
    n_jobs: int = 1,
    helpers: int = 0,
) -> pd.DataFrame:
    """The table's text columns normalised (each distinct string once), per row language
    (``n_jobs``, ``helpers``: :func:`normalise_many`'s)."""
    languages = table["language"] if "language" in table.columns else None
    if normaliser.name == "whisper_english" and languages is not None:
        other = set(languages.dropna().unique()) - {"en", "eng", "en-US", "en-GB", "eng_Latn"}
        if other:
            log.warning(
                "normaliser whisper_english on languages %s: use normaliser=auto", sorted(other)
            )
    present = [c for c in columns if c in table.columns]
    if not present:
        return pd.DataFrame(index=table.index)
    stacked = pd.concat([table[c] for c in present], ignore_index=True)
    stacked_languages = (
        pd.concat([languages] * len(present), ignore_index=True) if languages is not None else None
    )
    normalised = normalise_many(
        stacked, normaliser, stacked_languages, n_jobs=n_jobs, helpers=helpers
    ).to_numpy()
    n = len(table)
    return pd.DataFrame(
        {c: normalised[i * n : (i + 1) * n] for i, c in enumerate(present)}, index=table.index
    ).astype("str")
