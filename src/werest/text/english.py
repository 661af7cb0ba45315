"""whisper-normalizer's ``EnglishTextNormalizer``, faster, with the same output.

The reference normaliser runs about 70 ``re.sub`` calls per string (most of them the
contraction and title replacers, each looked up in ``re``'s pattern cache) and a
per-character Unicode lookup. At ~0.1–0.3 ms a string it is the largest per-row cost of a
big run (``experiments/bench_scale.py``). This subclass changes *how*, never *what*:

* every pattern is compiled once;
* a replacer whose literal text (the pattern without its ``\\b`` anchors) is not in the
  string cannot match it, so it is skipped: ``in`` is a substring search, far cheaper
  than a regex call. A pattern that is a whole word (``\bst\b``, the fillers
  ``\b(hmm|uh|...)\b``) can only match one of the string's runs of word characters, so it
  is looked up in their set (``st`` is in "first", not among its words). The check is made
  on the string as it stands at that step, so the replacers still apply in the reference
  order;
* ASCII strings (NFKD leaves them unchanged and none of them is a diacritic) replace their
  symbols and punctuation with one ``str.translate``, built from the same Unicode
  categories the reference reads.

The spelling normaliser is the reference's own mapping, looked up word by word in C; the number
normaliser is the reference's class, its rules run only on the runs of words they can change
(:class:`FastEnglishNumberNormalizer`: none for a string without a number word or a digit, and
a lone ``and``, ``minus``, ``dollars``... between plain words is kept as the rules keep it).
The replacers are taken from the reference instance, so a new whisper-normalizer release that
changes them is followed; a release that changes the steps themselves would not be, which is
why ``tests/unit/test_text.py`` compares these classes with the reference on every distinct
transcript of the shared data (and on adversarial strings) and the version is pinned in
``pyproject.toml``.
"""

from __future__ import annotations

import re
import unicodedata

from whisper_normalizer.basic import remove_symbols_and_diacritics
from whisper_normalizer.english import EnglishNumberNormalizer, EnglishTextNormalizer

#: Characters the reference keeps through symbol removal (numeric symbols).
_KEEP = ".%$¢€£"


def _ascii_symbols_table(keep: str) -> dict[int, str]:
    """``str.translate`` table: each ASCII character of Unicode category M*, S* or P*
    (except ``keep``) becomes a space, as ``remove_symbols_and_diacritics`` does."""
    return {
        code: " "
        for code in range(128)
        if chr(code) not in keep and unicodedata.category(chr(code))[0] in "MSP"
    }


def _literal(pattern: str) -> str | None:
    """The text every match of ``pattern`` contains, when it is a plain word between
    ``\\b`` anchors (all the reference's replacers are); None for anything else."""
    text = pattern.replace(r"\b", "")
    return None if re.escape(text) != text.replace(" ", r"\ ") else text


#: what the reference's number normaliser reads as an arabic number (after a sign or currency)
_NUMBER = re.compile(r"^\d+(\.\d+)?$")
#: an ASCII digit: every pattern of the number normaliser's pre- and post-processing needs one
_ASCII_DIGIT = re.compile(r"[0-9]")
#: a decimal digit of any script (what ``str.isdecimal`` accepts and an arabic number ends with)
_DECIMAL = re.compile(r"\d")


#: a maximal run of word characters: ``\bword\b`` matches where one of them is ``word``
_WORD = re.compile(r"\w+")


def _whole_word(pattern: str) -> bool:
    """Whether ``pattern`` is ``\bword\b``, ``word`` word characters only: it matches a
    string exactly when ``word`` is one of the string's runs of word characters."""
    return _whole_words(pattern) is not None and "|" not in pattern


def _whole_words(pattern: str) -> frozenset[str] | None:
    """The words of a pattern ``\bword\b`` or ``\b(one|two)\b`` (word characters only),
    any of which it matches as a whole run of word characters; None for another pattern."""
    found = re.fullmatch(r"\\b(?:\((\w+(?:\|\w+)*)\)|(\w+))\\b", pattern)
    return frozenset((found.group(1) or found.group(2)).split("|")) if found else None


class FastEnglishNumberNormalizer(EnglishNumberNormalizer):
    """``EnglishNumberNormalizer`` with the same output, its rules run only where they can
    change something.

    The reference runs a state machine over every word (a regular expression and a dozen
    set lookups each). A *plain* word, neither one of its number words (``self.words``) nor
    an arabic number (:data:`_NUMBER`, after a sign or currency symbol), is yielded as it
    is and leaves the machine as it found it when it started (no value, no prefix, nothing
    to skip); and a plain neighbour reads as no neighbour (``prev``/``next`` are only looked
    up in the number words, or matched as numbers). So the words are cut at the plain ones,
    and only the runs between them go through the reference's machine. The pre- and
    post-processing patterns all need an ASCII digit (or ``half``), so a string without one
    skips them."""

    def __init__(self) -> None:
        super().__init__()
        #: number words that never start or take part in a value (``and``, ``minus``,
        #: ``dollars``, ``percent``...): alone between plain words, the machine yields one
        #: as it is (with no number before or after it, each of their branches does)
        self._inert = self.words - {
            *self.zeros,
            *self.ones,
            *self.ones_suffixed,
            *self.tens,
            *self.tens_suffixed,
            *self.multipliers,
            *self.multipliers_suffixed,
        }

    def process_words(self, words: list[str]):
        yield from self._standardised(words)

    def _standardised(self, words: list[str]) -> list[str]:
        number_words, prefixes, machine = self.words, self.prefixes, super().process_words
        inert = self._inert
        out: list[str] = []
        start = 0  # where the current run of words that are not plain began
        for i, word in enumerate(words):
            # an arabic number ends with what \d matches (str.isdecimal)
            bare = word[1:] if word[0] in prefixes else word
            if word in number_words or (word[-1].isdecimal() and _NUMBER.match(bare)):
                continue
            if start == i - 1 and words[start] in inert:
                out.append(words[start])
            elif start < i:
                out.extend(machine(words[start:i]))
            out.append(word)
            start = i + 1
        if start == len(words) - 1 and words[start] in inert:
            out.append(words[start])
        elif start < len(words):
            out.extend(machine(words[start:]))
        return out

    def __call__(self, s: str) -> str:
        s = self.preprocess(s)
        words = s.split()
        if self.words.isdisjoint(words) and not _DECIMAL.search(s):
            return self.postprocess(" ".join(words))  # no number word, no digit: all plain
        s = " ".join(word for word in self._standardised(words) if word is not None)
        return self.postprocess(s)

    def preprocess(self, s: str) -> str:
        if "half" in s or _ASCII_DIGIT.search(s):
            return super().preprocess(s)
        return s if s.strip() else ""  # the reference drops a blank segment

    def postprocess(self, s: str) -> str:
        return super().postprocess(s) if _ASCII_DIGIT.search(s) else s


class FastEnglishTextNormalizer(EnglishTextNormalizer):
    """``EnglishTextNormalizer`` with compiled patterns and literal pre-checks."""

    def __init__(self) -> None:
        super().__init__()
        self.standardize_numbers = FastEnglishNumberNormalizer()
        self._brackets = re.compile(r"[<\[][^>\]]*[>\]]")
        self._parentheses = re.compile(r"\(([^)]+?)\)")
        self._ignore = re.compile(self.ignore_patterns)
        self._space_apostrophe = re.compile(r"\s+'")
        self._ignored = _whole_words(self.ignore_patterns)
        self._replacers = [
            (_literal(pattern), re.compile(pattern), replacement, _whole_word(pattern))
            for pattern, replacement in self.replacers.items()
        ]
        self._digit_commas = re.compile(r"(\d),(\d)")
        self._periods = re.compile(r"\.([^0-9]|$)")
        self._prefix_symbols = re.compile(r"[.$¢€£]([^0-9])")
        self._suffix_percent = re.compile(r"([^0-9])%")
        self._spaces = re.compile(r"\s+")
        self._ascii_symbols = _ascii_symbols_table(_KEEP)

    def __call__(self, s: str) -> str:
        s = s.lower()
        if "[" in s or "<" in s:
            s = self._brackets.sub("", s)
        if "(" in s:
            s = self._parentheses.sub("", s)
        words = set(_WORD.findall(s))  # what a pattern between \b anchors can match
        if self._ignored is None or not self._ignored.isdisjoint(words):
            s, words = self._ignore.sub("", s), None
        if "'" in s:
            s, words = self._space_apostrophe.sub("'", s), None
        for literal, pattern, replacement, whole_word in self._replacers:
            if whole_word:
                words = set(_WORD.findall(s)) if words is None else words
                if literal not in words:
                    continue
            elif literal is not None and literal not in s:
                continue
            replaced = pattern.sub(replacement, s)
            if replaced != s:
                s, words = replaced, None
        if "," in s:
            s = self._digit_commas.sub(r"\1\2", s)
        if "." in s:
            s = self._periods.sub(r" \1", s)
        if s.isascii():
            s = s.translate(self._ascii_symbols)
        else:
            s = remove_symbols_and_diacritics(s, keep=_KEEP)
        s = self.standardize_numbers(s)
        words = s.split()  # the spelling normaliser's own step, word by word in C
        s = " ".join(map(self.standardize_spellings.mapping.get, words, words))
        s = self._prefix_symbols.sub(r" \1", s)
        if "%" in s:
            s = self._suffix_percent.sub(r"\1 ", s)
        return self._spaces.sub(" ", s)
