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

from collections.abc import Sequence

from werest.text.counting import (
    COUNT_COLUMNS,
    ErrorCounts,
    coded_distances,
    corpus_rate,
    count_errors,
    edit_distances,
    encoded_distances,
    encoded_texts,
    error_rate,
    measure,
    word_strings,
)
from werest.text.normalise import (
    AUTO,
    CHARACTER_LANGUAGES,
    NO_NORMALISATION,
    NORMALISERS,
    NormalisationCache,
    Normaliser,
    TextRule,
    as_normaliser,
    cached_normalisation,
    get_normaliser,
    language_code,
    normalise_many,
    normalised_columns,
    requested_normaliser,
    reusing_normalisation,
    scoring_unit,
)

# the normalisers (werest.text.normalise) and the error counts (werest.text.counting) are
# the package's names; wer and cer, which use both, are its own
__all__ = [
    "AUTO",
    "CHARACTER_LANGUAGES",
    "COUNT_COLUMNS",
    "NORMALISERS",
    "NO_NORMALISATION",
    "ErrorCounts",
    "NormalisationCache",
    "Normaliser",
    "TextRule",
    "as_normaliser",
    "cached_normalisation",
    "cer",
    "coded_distances",
    "corpus_rate",
    "count_errors",
    "edit_distances",
    "encoded_distances",
    "encoded_texts",
    "error_rate",
    "get_normaliser",
    "language_code",
    "measure",
    "normalise_many",
    "normalised_columns",
    "requested_normaliser",
    "reusing_normalisation",
    "scoring_unit",
    "wer",
    "word_strings",
]


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
