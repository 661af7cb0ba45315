"""Normalisers and error counting: hand-derived cases, jiwer agreement on real data."""

from __future__ import annotations

import pickle

import jiwer
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import shared_path
from werest.errors import ConfigError
from werest.stats import bootstrap_ci
from werest.text import (
    ErrorCounts,
    Normaliser,
    as_normaliser,
    corpus_rate,
    count_errors,
    edit_distances,
    error_rate,
    get_normaliser,
    measure,
    normalise_many,
)
from werest.text.english import FastEnglishTextNormalizer

# --------------------------------------------------------------------------- normalisers


def test_a_normaliser_is_chosen_once_by_name_and_refuses_an_unknown_one_there():
    auto = as_normaliser(None)
    assert auto == Normaliser("auto") and str(auto) == "auto" and as_normaliser(auto) is auto
    # auto follows each row's language: English rules for "en", basic rules for Spanish
    assert auto("Twenty five!", "en") == "25" and auto("Veinte, CINCO", "es") == "veinte cinco"
    texts = pd.Series(["Twenty five!", None, "Twenty five!"], index=[7, 8, 9])
    many = Normaliser("whisper_english").many(texts)
    assert many.index.tolist() == [7, 8, 9] and many[7] == many[9] == "25" and pd.isna(many[8])
    assert pickle.loads(pickle.dumps(auto)) == auto  # what worker processes receive
    with pytest.raises(ConfigError, match="unknown normaliser 'english'"):
        Normaliser("english")


def test_whisper_english_folds_case_punctuation_and_numbers():
    normalise = get_normaliser("whisper_english")
    assert normalise("Hello, World!") == "hello world"
    # spelled-out and digit forms meet: Azure writes digits, references spell them out
    assert normalise("the budget is twelve thousand dollars") == normalise("The budget is $12,000.")
    assert normalise("colour") == normalise("color")


def test_whisper_basic_keeps_numbers_and_drops_brackets():
    normalise = get_normaliser("whisper_basic")
    assert normalise("Hello, [noise] World!").split() == ["hello", "world"]
    assert normalise("twelve") != normalise("12")


def test_none_keeps_text():
    assert get_normaliser("none")("Hello, World!") == "Hello, World!"


def test_unknown_normaliser_is_a_config_error():
    with pytest.raises(ConfigError, match="unknown normaliser 'english'"):
        get_normaliser("english")


def test_arabic_rules_remove_diacritics_and_unify_letters():
    normalise = get_normaliser("whisper_basic", "ar")
    # the reference of thennal10 ar/0 is fully vowelled; whisper's hypothesis is not
    assert normalise("وَأَمَّا الشِّبْرُ") == "واما الشبر"
    assert normalise("إلى مدرسة") == normalise("الي مدرسه")


def test_malayalam_rules_unify_chillu_forms():
    normalise = get_normaliser("whisper_basic", "ml")
    atomic = "അവൾ"  # ends with the atomic chillu LL (U+0D7E)
    sequence = "അവ\u0d33\u0d4d\u200d"  # the same letter written LLA + virama + ZWJ
    assert normalise(atomic) == normalise(sequence)


def test_auto_picks_by_language():
    texts = pd.Series(["Twelve dollars.", "وَأَمَّا"])
    out = normalise_many(texts, Normaliser("auto"), languages=["en", "ar"])
    assert out.tolist() == ["$12", "واما"]


def test_normalise_many_matches_one_by_one_and_keeps_nulls():
    texts = pd.Series(["A, b!", None, "A, b!", "Twenty-one"], index=[10, 11, 12, 13])
    out = normalise_many(texts, Normaliser("whisper_english"))
    assert out.index.tolist() == [10, 11, 12, 13]
    assert out[10] == out[12] == get_normaliser("whisper_english")("A, b!")
    assert pd.isna(out[11])
    assert out[13] == "21"


def test_normalise_many_in_worker_processes_matches_serial():
    texts = [f"Item number {i}, please!" for i in range(50)] * 2
    serial = normalise_many(texts, Normaliser("whisper_english"))
    parallel = normalise_many(texts, Normaliser("whisper_english"), n_jobs=2, chunk_size=10)
    assert serial.tolist() == parallel.tolist()


# --------------------------------------------------------------------------- counting


def test_counts_of_a_hand_aligned_pair():
    # ref: a b c d / hyp: a x c d e -> b->x substitution, e inserted, a c d hits
    counts = measure("a b c d", "a x c d e")
    assert counts == ErrorCounts(substitutions=1, deletions=0, insertions=1, hits=3)
    assert counts.reference_length == 4 and counts.hypothesis_length == 5
    assert counts.rate == pytest.approx(2 / 4)


def test_empty_hypothesis_is_all_deletions_and_empty_reference_undefined():
    assert measure("one two three", "") == ErrorCounts(0, 3, 0, 0)
    empty_ref = measure("", "noise words")
    assert empty_ref.insertions == 2 and empty_ref.reference_length == 0
    assert np.isnan(empty_ref.rate)


def test_insertions_make_wer_exceed_one():
    counts = measure("yes", "yes yes yes no")
    assert counts.rate == pytest.approx(3.0)


def test_character_counts_include_spaces():
    # "ab cd" vs "ab  ce": as in jiwer 4, inner spaces are characters (the second one is an
    # insertion) and d->e is one substitution, over 5 reference characters; ends are stripped
    counts = measure("ab cd", " ab  ce ", unit="char")
    assert counts == ErrorCounts(substitutions=1, deletions=0, insertions=1, hits=4)


def test_count_errors_keeps_order_and_reuses_identical_pairs():
    refs = ["a b", "c d e", "a b"]
    hyps = ["a b", "c e", "b"]
    frame = count_errors(refs, hyps)
    assert frame["deletions"].tolist() == [0, 1, 1]
    assert frame["hits"].tolist() == [2, 2, 1]
    assert frame["reference_length"].tolist() == [2, 3, 2]


def test_count_errors_rejects_unknown_unit_and_nulls():
    with pytest.raises(ConfigError):
        count_errors(["a"], ["a"], unit="phone")
    with pytest.raises(ValueError, match="nulls"):
        count_errors(["a", None], ["a", "b"])


def _jiwer_counts(refs, hyps, unit):
    process = jiwer.process_words if unit == "word" else jiwer.process_characters
    rows = []
    for ref, hyp in zip(refs, hyps, strict=True):
        out = process(ref, hyp)
        rows.append((out.substitutions, out.deletions, out.insertions, out.hits))
    return np.array(rows)


words = st.lists(st.sampled_from(["a", "b", "c", "the", "cat", "sat"]), max_size=8)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(words, words), min_size=1, max_size=10), st.sampled_from(["word", "char"])
)
def test_counts_equal_jiwer_on_random_pairs(pairs, unit):
    refs = [" ".join(r) for r, _ in pairs]
    hyps = [" ".join(h) for _, h in pairs]
    if unit == "word" and any(not r for r in refs):
        refs = [r or "a" for r in refs]
    ours = count_errors(refs, hyps, unit)[["substitutions", "deletions", "insertions", "hits"]]
    assert (ours.to_numpy() == _jiwer_counts(refs, hyps, unit)).all()


@pytest.mark.shared
@pytest.mark.parametrize("unit", ["word", "char"])
def test_counts_equal_jiwer_on_real_dighr_pairs(dighr_table, unit):
    labelled = dighr_table[dighr_table["reference"].notna()].sample(3000, random_state=1)
    refs = normalise_many(labelled["reference"]).tolist()
    hyps = normalise_many(labelled["hypothesis"]).tolist()
    keep = [i for i, r in enumerate(refs) if r.strip()]
    refs, hyps = [refs[i] for i in keep], [hyps[i] for i in keep]
    ours = count_errors(refs, hyps, unit, n_jobs=2, chunk_size=1000)
    expected = _jiwer_counts(refs, hyps, unit)
    assert (ours[["substitutions", "deletions", "insertions", "hits"]].to_numpy() == expected).all()


# --------------------------------------------------------------------------- corpus rates


def test_corpus_rate_is_pooled_not_mean_of_utterance_rates():
    errors = np.array([1, 0])
    lengths = np.array([1, 9])  # utterance WERs 100 % and 0 %
    assert corpus_rate(errors, lengths) == pytest.approx(0.1)
    assert error_rate(errors, lengths).mean() == pytest.approx(0.5)
    assert np.isnan(corpus_rate([], []))


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    rng = np.random.default_rng(3)
    lengths = rng.integers(3, 30, size=400)
    errors = rng.binomial(lengths, 0.2)
    first = bootstrap_ci(errors, lengths, seed=7)
    assert first == bootstrap_ci(errors, lengths, seed=7)
    assert first != bootstrap_ci(errors, lengths, seed=8)
    low, high = first
    assert low < corpus_rate(errors, lengths) < high
    narrow = bootstrap_ci(np.tile(errors, 9), np.tile(lengths, 9), seed=7)
    assert narrow[1] - narrow[0] < high - low


def test_bootstraps_sharing_their_draws_give_the_same_intervals(monkeypatch):
    """Inside shared_draws the bootstraps of one size and seed reuse one draw (each
    system of a dataset): the same intervals as drawing each afresh, for several sizes in
    turn, seeds and batches (a draw larger than a batch), and nothing kept after the block."""
    import werest.resampling as stats

    monkeypatch.setattr(stats, "_BATCH_INDICES", 250_000)  # 1000 resamples of 400: 2 batches
    rng = np.random.default_rng(4)
    cells = []
    for n, seed in ((400, 0), (400, 0), (250, 0), (400, 0), (400, 1), (30, 0)):
        lengths = rng.integers(1, 20, size=n)
        cells.append((rng.binomial(lengths, 0.3), lengths, seed))
    alone = [bootstrap_ci(e, n, seed=seed) for e, n, seed in cells]
    drawn = []
    real = np.random.default_rng
    monkeypatch.setattr(np.random, "default_rng", lambda seed: drawn.append(seed) or real(seed))
    with stats.shared_draws():
        shared = [bootstrap_ci(e, n, seed=seed) for e, n, seed in cells]
        assert stats._SHARED  # the last draw is kept while the block runs
    assert len(drawn) == 5  # the second cell of 400 (seed 0) drew nothing
    assert shared == alone and stats._SHARED is None


def test_bootstrap_of_a_constant_rate_has_zero_width():
    low, high = bootstrap_ci([2, 4, 6], [10, 20, 30])
    assert low == pytest.approx(0.2) and high == pytest.approx(0.2)


def test_whisper_basic_keeps_combining_marks_inside_words():
    # whisper's own basic normaliser turns marks into spaces: "ട ന ന ൽ"; werest keeps words
    assert get_normaliser("whisper_basic")("അതിന്റെ ടിന്നിൽ") == "അതിന്റെ ടിന്നിൽ"
    assert get_normaliser("whisper_basic", "ml")("ടിന്നില\u0d4d\u200d") == "ടിന്നിൽ"


# ------------------------------------------------ the fast English normaliser (issue 15)

_TOKENS = [
    *"abcxyz019 ,.'%$£€¢()[]<>-’—éœßøÆ½\t",
    *["won't", "can't", "mr", "Mrs.", "st", "dr", "'d been", "'s", "n't", "y'all", "hmm", "uh"],
    *["twelve", "thousand", "and a half", "dollars", "1,000", "3.5", "1960s", "2nd", "colour"],
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), max_size=14), st.sampled_from(["", " "]))
def test_fast_english_normaliser_equals_the_reference_on_adversarial_strings(tokens, joiner):
    from whisper_normalizer.english import EnglishTextNormalizer

    text = joiner.join(tokens)
    assert FastEnglishTextNormalizer()(text) == EnglishTextNormalizer()(text)


_NUMBER_TOKENS = [
    *["one", "ones", "two", "oh", "zero", "first", "twelfth", "twenty", "thirties", "hundred"],
    *["thousands", "millionth", "minus", "plus", "dollars", "cent", "cents", "per", "percent"],
    *["and", "double", "triple", "point", "half", "a", "and a half", "cat", "the", "x1", "3x"],
    *["1", "07", "2.5", "1.2.3", "$3", "-4", "+5", "£", "$", "¢7", "$0.5", "12th", "1960s"],
    *["1s", "٣", "²", "one's", "0"],
]


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(_NUMBER_TOKENS), max_size=12), st.sampled_from(["", " ", "  "]))
def test_fast_number_normaliser_equals_the_reference_on_number_words(tokens, joiner):
    """Runs of number words, numbers, signs and currencies between plain words: the fast
    normaliser cuts the words at the plain ones, which must not change a run's reading."""
    from whisper_normalizer.english import EnglishNumberNormalizer

    from werest.text.english import FastEnglishNumberNormalizer

    text = joiner.join(tokens)
    assert FastEnglishNumberNormalizer()(text) == EnglishNumberNormalizer()(text)


@pytest.mark.shared
def test_fast_english_normaliser_equals_the_reference_on_the_shared_transcripts(
    dighr_table, thennal10_table
):
    """Every distinct dighr and thennal10 English string and 20,000 afrispeech ones."""
    from whisper_normalizer.english import EnglishTextNormalizer

    from werest.ingest.importers import import_table

    afrispeech = import_table("afrispeech", [shared_path("afrispeech")])
    english = thennal10_table.loc[thennal10_table["language"] == "en"]
    texts = set()
    for table in (dighr_table, english):
        texts |= set(table["hypothesis"].dropna()) | set(table["reference"].dropna())
    distinct = pd.Series(sorted(set(afrispeech["hypothesis"].dropna())))
    texts |= set(distinct.sample(20_000, random_state=0))
    reference, fast = EnglishTextNormalizer(), get_normaliser("whisper_english")
    assert isinstance(fast, FastEnglishTextNormalizer)
    differing = [text for text in sorted(texts) if fast(text) != reference(text)]
    assert len(texts) > 50_000 and differing == []


@pytest.mark.parametrize("unit", ["word", "char"])
def test_edit_distances_are_the_edits_of_count_errors(unit):
    """The distance alone equals S + D + I of jiwer's alignment (count_errors), on texts with
    empty sides, inner runs of spaces, repeated words and non-Latin scripts."""
    rng = np.random.default_rng(7)
    words = ["the", "cat", "sat", "on", "a", "mat", "日本", "語", "كتاب", "ok"]
    refs = [" ".join(rng.choice(words, rng.integers(0, 12))) for _ in range(500)]
    hyps = [" ".join(rng.choice(words, rng.integers(0, 12))) for _ in range(500)]
    refs += ["", "a  b ", "x", "same words"]
    hyps += ["a b", "a b", "", "same words"]
    counts = count_errors(refs, hyps, unit)
    edits = counts[["substitutions", "deletions", "insertions"]].sum(axis=1).to_numpy()
    assert edit_distances(refs, hyps, unit).tolist() == edits.tolist()
    assert edit_distances(refs, hyps, unit, n_jobs=2).tolist() == edits.tolist()


def test_edit_distances_past_the_surrogate_code_points():
    """More distinct words than code points below U+D800: words still map one to one."""
    vocabulary = [f"w{i}" for i in range(60_000)]
    reference = " ".join(vocabulary)
    changed = vocabulary.copy()
    changed[55_400] = "w1"  # a word past U+D800 replaced by an early one
    del changed[58_000]
    hypothesis = " ".join(changed)
    counts = count_errors([reference], [hypothesis], "word").iloc[0]
    expected = counts["substitutions"] + counts["deletions"] + counts["insertions"]
    assert expected == 2
    assert edit_distances([reference], [hypothesis], "word").tolist() == [expected]


def test_word_strings_share_the_process_vocabulary_and_start_anew_past_its_limit(monkeypatch):
    """A text is encoded once for the process (the features, the guards' sample and the
    contests align the same texts); every text of one call is under one vocabulary, also
    when the encoder starts anew (at a call's start, past ENCODER_LIMIT); the distances do
    not depend on which vocabulary encoded them."""
    import werest.text.counting as text

    monkeypatch.setattr(text, "_ENCODER", [])
    first = text.word_strings(["a b c", "c b a", "a b c"])
    assert first[0] == first[2] and first[0] == first[1][::-1] and len(first[0]) == 3
    assert text.word_strings(["c b a"]) == [first[1]]  # the same points in a later call
    monkeypatch.setattr(text, "ENCODER_LIMIT", 2)  # 3 words known: the next call starts anew
    fresh = text.word_strings(["d a", "a d"])
    assert fresh[0] == fresh[1][::-1] and len(text._ENCODER[0].points) == 2
    refs = ["the cat sat", "a b", "", "x y z x"]
    hyps = ["the cat", "b a", "q", "x z"]
    before = edit_distances(refs, hyps, "word").tolist()
    monkeypatch.setattr(text, "_ENCODER", [])  # a fresh vocabulary: the same distances
    assert edit_distances(refs, hyps, "word").tolist() == before == [1, 2, 1, 2]
