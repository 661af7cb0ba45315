"""Text normalisers: a named choice (``whisper_english``, ``whisper_basic``, ``auto``,
``none``: :mod:`werest.text` describes each) resolved once into a :class:`Normaliser`, the
language rules ``whisper_basic`` adds, and :func:`normalise_many`, which normalises each
distinct string once (in a :class:`NormalisationCache` across calls, when one is open).
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache, partial

import numpy as np
import pandas as pd

from werest import forked
from werest.codes import row_codes
from werest.errors import ConfigError
from werest.logs import chunked, parallel_map

log = logging.getLogger("werest.text")  # its warnings name the package, as they always have

TextRule = Callable[[str], str]

NORMALISERS: tuple[str, ...] = ("whisper_english", "whisper_basic", "auto", "none")

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


def normalise_text(text: str) -> str:
    """The plain form of a text: Unicode NFC, whitespace collapsed. What an embedding is
    computed and keyed for (:mod:`werest.features.cache`), and the form ``raw`` of the texts a
    likelihood scorer scores (:func:`werest.features.scorer.format_text`); no normaliser."""
    return " ".join(unicodedata.normalize("NFC", text).split())


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
    chunks = list(chunked([texts[i] for i in todo], [langs[i] for i in todo], size=chunk_size))
    shared = partial(forked.shared_map, helpers=helpers) if helpers else None
    parts = parallel_map(
        _normalise_chunk, chunks, n_jobs, desc="normalising", shared=shared, normaliser=normaliser
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
