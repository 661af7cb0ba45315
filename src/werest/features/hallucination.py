"""Reference-free hallucination signals of one hypothesis, compared with its proxy's.

Agreement with a proxy already sees a hypothesis that loops or answers in another language:
its insertions and substitutions count. What it cannot say is *which side* is wrong when the
two disagree wildly. Three signals of the text alone say it, with no reference and no model:

* ``rep_ngram_rate``: the share of the hypothesis's word 3-grams that repeat an earlier
  3-gram of the same hypothesis (a decoding loop: "thank you thank you thank you ..."); 0 for
  fewer than four words. ``rep_ngram_excess`` is the target's rate minus its proxy's, so a
  phrase that really repeats in the audio (both say it) does not count.
* ``script_mismatch``: the share of the target's letters written in a script other than the
  proxy's main script (Unicode script of each letter, from its character name): 1 for a
  hypothesis in Latin letters where the proxy writes Arabic, 0 when both write the same
  script. A system answering in another language or script is then told apart from one that
  merely disagrees.

Each distinct hypothesis is measured once. Text is taken as given: callers pass the same
normalised text that the agreement features align.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from functools import lru_cache

import numpy as np
import pandas as pd

HALLUCINATION_FEATURES: tuple[str, ...] = ("rep_ngram_rate", "rep_ngram_excess", "script_mismatch")
NGRAM = 3


def repeated_ngram_rate(text: str, n: int = NGRAM) -> float:
    """The share of the word ``n``-grams of ``text`` that repeat an earlier one (0 when the
    text has at most ``n`` words)."""
    words = text.split()
    if len(words) <= n:
        return 0.0
    grams = list(zip(*(words[i:] for i in range(n)), strict=False))  # the runs of n words
    return 1.0 - len(set(grams)) / len(grams)


@lru_cache(maxsize=4096)
def letter_script(character: str) -> str | None:
    """The Unicode script of a letter (the first word of its name: LATIN, ARABIC, CJK,
    MALAYALAM, HIRAGANA, ...); None for anything that is not a letter."""
    if not unicodedata.category(character).startswith("L"):
        return None
    name = unicodedata.name(character, "")
    return name.split(" ", 1)[0] if name else None


#: ``str.translate`` table that drops every ASCII character but the letters (all LATIN)
_ASCII_LETTERS_ONLY = dict.fromkeys(code for code in range(128) if not chr(code).isalpha())


def script_counts(text: str) -> Counter:
    """Letters of ``text`` per script."""
    if text.isascii():  # its letters are a-z and A-Z: LATIN (one C pass instead of a lookup each)
        letters = len(text.translate(_ASCII_LETTERS_ONLY))
        return Counter({"LATIN": letters}) if letters else Counter()
    return Counter(script for script in map(letter_script, text) if script is not None)


def main_script(counts: Counter) -> str | None:
    """The script most of the letters are in (None for a text without letters)."""
    return counts.most_common(1)[0][0] if counts else None


def script_mismatch(target: Counter, proxy: Counter) -> float:
    """The share of ``target``'s letters outside ``proxy``'s main script (0 when either has no
    letters: nothing to compare)."""
    return share_outside(target, main_script(proxy))


def share_outside(counts: Counter, script: str | None) -> float:
    """The share of the letters of ``counts`` outside ``script`` (0 for no script or no
    letters)."""
    total = sum(counts.values())
    if script is None or total == 0:
        return 0.0
    return 1.0 - counts.get(script, 0) / total


def pair_signals(text: pd.Series, text_other: pd.Series) -> pd.DataFrame:
    """The signals of aligned pairs of hypotheses (one row per pair, both normalised):
    ``hyp_rep`` and ``other_rep`` (:func:`repeated_ngram_rate` of each side),
    ``script_mismatch`` (the first side's letters outside the second's main script) and
    ``other_script_mismatch`` (the reverse). Each distinct string is measured once."""
    # plain lists: iterating a Series of Arrow strings makes a Python object per cell, each time
    own, other = text.to_numpy(dtype=object), text_other.to_numpy(dtype=object)
    distinct = pd.unique(np.concatenate([own, other])).tolist()
    repeats = {value: repeated_ngram_rate(value) for value in distinct}
    scripts = {value: script_counts(value) for value in distinct}
    mains = {value: main_script(counts) for value, counts in scripts.items()}
    pairs = list(zip(own.tolist(), other.tolist(), strict=True))
    return pd.DataFrame(
        {
            "hyp_rep": [repeats[a] for a, _ in pairs],
            "other_rep": [repeats[b] for _, b in pairs],
            "script_mismatch": [share_outside(scripts[a], mains[b]) for a, b in pairs],
            "other_script_mismatch": [share_outside(scripts[b], mains[a]) for a, b in pairs],
        },
        index=text.index,
    )
