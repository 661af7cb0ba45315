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
    ``other_script_mismatch`` (the reverse). Each distinct string is measured once, and the
    pairs read those measures as arrays."""
    own, other = text.to_numpy(dtype=object), text_other.to_numpy(dtype=object)
    codes, distinct = pd.factorize(np.concatenate([own, other]))
    distinct = list(distinct)
    repeats = np.array([repeated_ngram_rate(value) for value in distinct], dtype=float)
    letters = _Letters([script_counts(value) for value in distinct])
    first, second = codes[: len(own)], codes[len(own) :]
    return pd.DataFrame(
        {
            "hyp_rep": repeats[first],
            "other_rep": repeats[second],
            "script_mismatch": letters.shares_outside(first, second),
            "other_script_mismatch": letters.shares_outside(second, first),
        },
        index=text.index,
    )


class _Letters:
    """The script counts of distinct texts as arrays: each text's letters, its main script
    and, for a text all of whose letters are in one script, that script (most texts)."""

    def __init__(self, counts: list[Counter]) -> None:
        self.counts = counts
        mains = [main_script(c) for c in counts]
        self.names = sorted({name for c in counts for name in c})
        number = {name: i for i, name in enumerate(self.names)} | {None: -1}
        self.total = np.array([sum(c.values()) for c in counts], dtype=np.int64)
        self.main = np.array([number[m] for m in mains], dtype=np.int64)
        # the one script of a text's letters, -2 for a text in several (-1: none)
        self.only = np.array(
            [number[next(iter(c))] if len(c) == 1 else (-1 if not c else -2) for c in counts],
            dtype=np.int64,
        )

    def shares_outside(self, rows: np.ndarray, of: np.ndarray) -> np.ndarray:
        """:func:`share_outside` of each ``rows`` text's letters and the main script of the
        ``of`` text beside it (codes into the distinct texts), the same floats."""
        script, total = self.main[of], self.total[rows]
        defined = (script >= 0) & (total > 0)
        only = self.only[rows]
        inside = np.where(only == script, total, 0)
        for i in np.flatnonzero(defined & (only == -2)).tolist():  # letters in several scripts
            inside[i] = self.counts[rows[i]].get(self.names[script[i]], 0)
        shares = np.zeros(len(rows), dtype=float)
        shares[defined] = 1.0 - inside[defined] / total[defined]
        return shares
