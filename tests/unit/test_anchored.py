"""The zero-label estimate starts from agreement (issue 23): no ceiling at 100 %, corrections
only inside the training range, hallucination signals, Mondrian intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import werest
from werest.demo import demo_table_path
from werest.estimation.corpus import estimated_sample
from werest.features.hallucination import (
    letter_script,
    pair_signals,
    repeated_ngram_rate,
    script_counts,
    script_mismatch,
)
from werest.ingest.table import read_table
from werest.model.intervals import ConformalInterval, calibrated_interval, calibration_from_cells
from werest.model.regressor import AnchoredWerRegressor
from werest.text import Normaliser, count_errors, normalise_many


def test_repeated_ngrams_count_each_repeat_of_an_earlier_trigram():
    # "a b c a b c": trigrams abc, bca, cab, abc -> one of four repeats an earlier one
    assert repeated_ngram_rate("a b c a b c") == pytest.approx(1 / 4)
    assert repeated_ngram_rate("one two three four") == 0.0
    assert repeated_ngram_rate("a b c") == 0.0  # one trigram: nothing to repeat
    looped = " ".join(["thank you so much"] * 5)  # 20 words, 18 trigrams, 4 distinct
    assert repeated_ngram_rate(looped) == pytest.approx(1 - 4 / 18)


def test_script_mismatch_is_the_share_of_letters_outside_the_proxys_script():
    assert letter_script("a") == "LATIN" and letter_script("م") == "ARABIC"
    assert letter_script("1") is None and letter_script(" ") is None
    latin, arabic = script_counts("hello"), script_counts("مرحبا")
    assert script_mismatch(latin, arabic) == 1.0
    assert script_mismatch(latin, latin) == 0.0
    mixed = script_counts("ab مر")  # two Latin and two Arabic letters against Arabic
    assert script_mismatch(mixed, arabic) == pytest.approx(0.5)
    assert script_mismatch(latin, script_counts("123")) == 0.0  # no letters: nothing to compare


def test_pair_signals_are_each_pairs_own_signals_in_any_scripts():
    """The pairs read the distinct texts' measures as arrays: the same floats as each
    pair's own repeated_ngram_rate and script_mismatch, for texts in one script, several
    (Latin and Arabic, Latin and CJK), none (digits, empty) and repeated ones."""
    texts = ["hello there", "مرحبا بك", "ab مر", "ab مرحبا x", "日本 go", "123", "", "x x x x x"]
    rng = np.random.default_rng(3)
    own = pd.Series(rng.choice(texts, 300), index=pd.RangeIndex(5, 305))
    other = pd.Series(rng.choice(texts, 300), index=own.index)
    signals = pair_signals(own, other)
    for column, first, second in (
        ("script_mismatch", own, other),
        ("other_script_mismatch", other, own),
    ):
        expected = [
            script_mismatch(script_counts(a), script_counts(b))
            for a, b in zip(first, second, strict=True)
        ]
        assert signals[column].tolist() == expected
    assert signals["hyp_rep"].tolist() == [repeated_ngram_rate(t) for t in own]
    assert signals["other_rep"].tolist() == [repeated_ngram_rate(t) for t in other]
    assert signals.index.equals(own.index)


def test_pair_signals_are_seen_from_each_side():
    signals = pair_signals(pd.Series(["a b c a b c", "x"]), pd.Series(["x y z", "مر"]))
    assert signals["hyp_rep"].tolist() == pytest.approx([0.25, 0.0])
    assert signals["other_rep"].tolist() == [0.0, 0.0]
    assert signals["script_mismatch"].tolist() == [0.0, 1.0]
    assert signals["other_script_mismatch"].tolist() == [0.0, 1.0]


def _agreement_rows(n: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "pwer": rng.uniform(0, 0.6, n),
            "disagreement": rng.uniform(0, 0.5, n),
            "proxy_words": rng.integers(3, 30, n).astype(float),
        }
    )
    # agreement misses errors in proportion to how much the systems disagree
    return X, X["pwer"].to_numpy() + 0.2 * X["disagreement"].to_numpy()


def test_the_correction_is_learned_weighted_and_scaled_by_shrinkage():
    X, y = _agreement_rows(4000)
    full = AnchoredWerRegressor(shrinkage=1.0).fit(X, y)
    assert np.abs(full.predict(X) - y).mean() < 0.01
    half = AnchoredWerRegressor(shrinkage=0.5).fit(X, y)
    np.testing.assert_allclose(half.correction(X), 0.5 * full.correction(X))
    assert list(full.inner_features_) == ["pwer", "disagreement"]  # the weight is no feature


def test_far_from_the_training_data_the_estimate_is_raw_pwer():
    X, y = _agreement_rows(4000)
    model = AnchoredWerRegressor(shrinkage=1.0).fit(X, y)
    far = X.assign(disagreement=X["disagreement"] + 2.0)  # every row outside its range
    assert not model.in_support(far).any()
    predicted = model.predict(far)
    np.testing.assert_array_equal(predicted, far["pwer"].to_numpy())
    # the corpus estimate of those predictions is raw corpus pWER: Σ errors / Σ proxy words
    errors = far["pwer"] * far["proxy_words"]
    rows = far.assign(predicted_wer=predicted)
    assert estimated_sample(rows).rate() == pytest.approx(errors.sum() / far["proxy_words"].sum())


def test_no_ceiling_a_looping_rate_is_kept():
    X, y = _agreement_rows(4000)
    model = AnchoredWerRegressor(shrinkage=1.0, max_correction=0.3).fit(X, y)
    loop = pd.DataFrame({"pwer": [4.0], "disagreement": [0.2], "proxy_words": [10.0]})
    assert model.predict(loop)[0] == 4.0  # pWER 4 is outside the range: kept as it is
    inside = X.iloc[:50]
    assert (np.abs(model.correction(inside)) <= 0.3 + 1e-12).all()


def test_without_disagreement_there_is_no_correction():
    X, y = _agreement_rows(4000)
    model = AnchoredWerRegressor(shrinkage=1.0, evidence="disagreement").fit(X, y)
    learned = AnchoredWerRegressor(shrinkage=1.0).fit(X, y).correction(X)
    capped = model.correction(X)
    bound = X["disagreement"].to_numpy()
    # the correction of the data is 0.2 × disagreement: inside the bound, so kept ...
    np.testing.assert_allclose(capped, np.clip(learned, -bound, bound))
    assert (np.abs(capped) <= bound + 1e-12).all()
    # ... and where the systems agree completely, the estimate is the anchor
    agreed = X.assign(disagreement=0.0)
    np.testing.assert_array_equal(model.predict(agreed), agreed["pwer"].to_numpy())


def test_anchored_regressor_refuses_arrays_and_bad_shrinkage():
    X, y = _agreement_rows(200)
    with pytest.raises(ValueError, match="DataFrame"):
        AnchoredWerRegressor().fit(X.to_numpy(), y)
    with pytest.raises(ValueError, match="shrinkage"):
        AnchoredWerRegressor(shrinkage=1.5).fit(X, y)
    with pytest.raises(ValueError, match="lacks"):
        AnchoredWerRegressor().fit(X.drop(columns="proxy_words"), y)


def test_mondrian_calibration_quantiles_per_bin():
    # bin 0 (aWER < 0.2): truth 0.01 above; bin 1: truth 0.1 above or below
    cells = pd.DataFrame(
        {
            "domain": [f"d{i}" for i in range(40)],
            "awer": [0.1] * 20 + [0.5] * 20,
            "wer": [0.11] * 20 + [0.6, 0.4] * 10,
        }
    )
    interval = ConformalInterval(level=0.9, offset=0.5, bins=(0.2,), min_cells=10)
    calibration = calibration_from_cells(cells, interval)
    assert calibration["bin_cells"] == [20, 20]
    # signed scores: bin 0 all (0.01 / 0.6); bin 1 ±0.1 / 1.0
    assert calibration["low"][0] == pytest.approx(0.01 / 0.6)
    assert calibration["high"][0] == pytest.approx(0.01 / 0.6)
    assert (calibration["low"][1], calibration["high"][1]) == pytest.approx((-0.1, 0.1))
    low, high = calibrated_interval([0.1, 0.5, 3.0], calibration)
    assert low == pytest.approx([0.11, 0.4, 3.0 - 0.35])
    assert high == pytest.approx([0.11, 0.6, 3.0 + 0.35])  # above 100 %: not capped
    # an estimate above every calibration cell's (max aWER 0.5) takes the widest quantiles
    assert calibration["max_awer"] == 0.5
    wider = {**calibration, "high": [0.3, 0.1]}
    low, high = calibrated_interval([0.5, 3.0], wider)
    assert high == pytest.approx([0.5 + 0.1 * 1.0, 3.0 + 0.3 * 3.5])
    assert low == pytest.approx([0.4, 3.0 - 0.1 * 3.5])
    # a bin with too few cells takes every cell's quantiles
    sparse = calibration_from_cells(cells.iloc[15:], interval)
    assert sparse["bin_cells"] == [5, 20]
    assert sparse["high"][0] == sparse["high"][1]


# --- the shipped model (models/default) -----------------------------------------


def _demo_with(system: str, make) -> pd.DataFrame:
    """The embedded demo table with one more system whose hypothesis is ``make(reference)``."""
    demo = read_table(demo_table_path())
    best = demo[demo["system"] == "large-v3"]
    added = best.assign(system=system, hypothesis=best["reference"].map(make))
    return pd.concat([demo, added], ignore_index=True)


def _true_wer(table: pd.DataFrame, system: str, dataset: str) -> float:
    rows = table[(table["system"] == system) & (table["dataset"] == dataset)]
    normaliser = Normaliser("whisper_english")
    counts = count_errors(
        normalise_many(rows["reference"], normaliser),
        normalise_many(rows["hypothesis"], normaliser),
    )
    errors = counts[["substitutions", "deletions", "insertions"]].to_numpy().sum()
    return errors / counts["reference_length"].sum()


def test_the_shipped_model_estimates_a_looping_system_above_200_percent():
    table = _demo_with("looper", lambda text: " ".join([text] * 5))
    result = werest.estimate(table, targets="looper")
    for record in result.summary.to_dict("records"):
        truth = _true_wer(table, "looper", record["dataset"])
        assert truth > 3.0 and record["wer"] == pytest.approx(truth)
        assert record["estimated_wer"] > 2.0
        assert record["interval_low"] <= truth <= record["interval_high"]


CYRILLIC = str.maketrans("abcdefghijklmnopqrstuvwxyz", "абцдефгхийклмнопярстувшхыз")


def test_the_shipped_model_estimates_a_system_in_another_script_above_90_percent():
    table = _demo_with("cyrillic", lambda text: text.lower().translate(CYRILLIC))
    result = werest.estimate(table, targets="cyrillic")
    rows = result.utterances

    def letters(column):
        return rows[column].fillna("").map(lambda text: any(c.isalpha() for c in text))

    # all Cyrillic against a Latin proxy; a proxy with no letter (an empty hypothesis) leaves
    # nothing to compare: 0
    compared = letters("hypothesis") & letters("proxy_hypothesis")
    assert compared.sum() >= len(rows) - 1
    assert (rows.loc[compared, "script_mismatch"] == 1.0).all()
    assert (rows.loc[~compared, "script_mismatch"] == 0.0).all()
    for record in result.summary.to_dict("records"):
        truth = _true_wer(table, "cyrillic", record["dataset"])
        assert truth >= 1.0 and record["wer"] == pytest.approx(truth)  # no word right
        assert record["estimated_wer"] > 0.9
        assert record["interval_low"] <= truth <= record["interval_high"]


def test_training_proxies_follow_each_domains_label_free_order():
    from werest.model.training import label_free_proxies, training_frame

    sentences = [f"the {w} sat on the mat near the door" for w in ("cat", "dog", "cow", "hen")]
    rows = []
    for dataset, garbled in (("a1", "z"), ("b1", "x")):  # the garbled system differs per domain
        for number, text in enumerate(sentences):
            for system in ("x", "y", "z"):
                hypothesis = "zz qq" if system == garbled else text
                if system == "y":
                    hypothesis = text.replace("door", "floor")
                rows.append((dataset, f"u{number}", system, hypothesis, text))
    table = pd.DataFrame(rows, columns=["dataset", "utt_id", "system", "hypothesis", "reference"])
    domains = {"A": ["a*"], "B": ["b*"]}
    proxies = label_free_proxies(table, domains, normaliser=Normaliser("whisper_english"))
    chosen = proxies.groupby(["dataset", "system"])["proxy"].agg(set).to_dict()
    # in a1 x agrees with y most: x is everyone's proxy but its own; in b1 x is garbled
    assert chosen[("a1", "y")] == {"x"} and chosen[("a1", "z")] == {"x"}
    assert chosen[("a1", "x")] == {"y"}
    # in b1 x is garbled: y and z agree and tie, the name breaks the tie (y first)
    assert chosen[("b1", "x")] == {"y"} and chosen[("b1", "z")] == {"y"}
    assert chosen[("b1", "y")] == {"z"}
    frame = training_frame(
        table,
        None,
        normaliser=Normaliser("whisper_english"),
        proxy_choice="label_free",
        domains=domains,
    )
    assert set(frame["proxy"][frame["dataset"] == "b1"]) <= {"y", "z"}
    with pytest.raises(werest.errors.ConfigError, match="proxies must be one of"):
        training_frame(table, None, normaliser=Normaliser("auto"), proxy_choice="oracle")
