"""The prediction-powered ratio estimator (werest.estimation.ppi): ppi_py's mean case, exact limits,
design weights and coverage by simulation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from werest.estimation import ppi
from werest.estimation.ppi import (
    DatasetDraws,
    estimate_draws,
    paired_differences,
    point_estimates,
    population_sums,
)
from werest.estimation.ppi_frames import dataset_frames

pytestmark = [pytest.mark.test_extra]


def one_system_draws(e, r, pe, pr, rows, weight=None) -> DatasetDraws:
    """Draws ``rows`` of a one-system population (arrays over N)."""
    m = len(rows)
    pop = {k: np.array([v]) for k, v in population_sums(pe, pr).items()}
    return DatasetDraws(
        systems=["s"],
        n_frame=len(e),
        weight=np.ones(m) if weight is None else np.asarray(weight, dtype=float),
        errors=np.asarray(e, dtype=float)[rows, None],
        words=np.asarray(r, dtype=float)[rows, None],
        pred_errors=np.asarray(pe, dtype=float)[rows, None],
        pred_words=np.asarray(pr, dtype=float)[rows, None],
        present=np.ones((m, 1), bool),
        pop=pop,
    )


def population(n=3000, seed=0, heavy=True):
    """Utterance lengths, predicted and true errors; a few looping utterances (heavy tail)
    whose insertions the prediction mostly sees (as pWER sees a loop its proxy lacks)."""
    rng = np.random.default_rng(seed)
    words = rng.integers(3, 30, n).astype(float)
    pred_wer = rng.beta(2, 8, n)
    true_wer = np.clip(pred_wer + rng.normal(0.04, 0.08, n), 0, None)
    errors = np.round(true_wer * words)
    pred_errors = pred_wer * words
    if heavy:
        loops = rng.choice(n, n // 100, replace=False)
        errors[loops] += 40
        pred_errors[loops] += 35
    ref_words = np.clip(words + rng.integers(-2, 3, n), 1, None)
    return errors, ref_words, pred_errors, words


def test_the_mean_case_is_ppi_py_exactly():
    """With every reference length 1 the ratio is a mean: the point estimate, the tuned λ
    and the normal interval are ppi_py's (ppi_mean_pointestimate / ppi_mean_ci)."""
    ppi_py = pytest.importorskip("ppi_py", reason="ppi-python is in the test extra")
    rng = np.random.default_rng(1)
    n = 2000
    y_hat = rng.normal(0.3, 0.1, n)
    y = y_hat + rng.normal(0.05, 0.05, n)
    rows = rng.choice(n, 80, replace=False)
    ones = np.ones(n)
    draws = one_system_draws(y, ones, y_hat, ones, rows)
    est = estimate_draws(draws, method="normal", level=0.9, floor=False)
    assert est.ppi[0] == pytest.approx(
        ppi_py.ppi_mean_pointestimate(y[rows], y_hat[rows], y_hat)[0]
    )
    low, high = ppi_py.ppi_mean_ci(y[rows], y_hat[rows], y_hat, alpha=0.1)
    assert est.ppi_low[0] == pytest.approx(low[0])
    assert est.ppi_high[0] == pytest.approx(high[0])
    classical_low, classical_high = ppi_py.ppi_mean_ci(
        y[rows], y_hat[rows], y_hat, alpha=0.1, lam=0
    )
    assert est.classical_low[0] == pytest.approx(classical_low[0])
    assert est.classical_high[0] == pytest.approx(classical_high[0])


def test_limits_of_lambda():
    """λ = 0 is Σ w e / Σ w r of the draws; with perfect predictions λ = 1 gives the
    population's corpus WER from any draw, and the tuned λ is ppi_py's value."""
    e, r, pe, pr = population(500, seed=2)
    rows = np.random.default_rng(3).choice(500, 40, replace=False)
    weight = np.linspace(0.5, 2.0, 40)
    draws = one_system_draws(e, r, pe, pr, rows, weight)
    classical = point_estimates(draws, lam=0.0)[0][0, 0]
    assert classical == pytest.approx((weight * e[rows]).sum() / (weight * r[rows]).sum())
    perfect = one_system_draws(e, r, e, r, rows, weight)
    assert point_estimates(perfect, lam=1.0)[0][0, 0] == pytest.approx(e.sum() / r.sum())
    # tuned on perfect predictions, λ is ppi_py's cov / ((1 + m/N) var) = 1 / (1 + m/N)
    lam = point_estimates(one_system_draws(e, r, e, r, rows), lam=None)[1][0, 0]
    assert lam > 0.85


@pytest.mark.parametrize("method", ["t", "bootstrap"])
def test_coverage_and_gain_by_simulation(method):
    """Over 300 simple random samples of 60 from a population without loops: the 95 %
    interval covers the corpus WER at least 90 % of the time, and the prediction-powered
    estimate's mean error is below the labels-only one's. (Heavy tails are measured on real
    held-out data: werest evaluate experiment=few_labels.)"""
    e, r, pe, pr = population(3000, seed=4, heavy=False)
    truth = e.sum() / r.sum()
    rng = np.random.default_rng(5)
    covered, err_ppi, err_classical = [], [], []
    for draw in range(300):
        rows = rng.choice(3000, 60, replace=False)
        est = estimate_draws(
            one_system_draws(e, r, pe, pr, rows), method=method, n_resamples=400, seed=draw
        )
        covered.append(est.ppi_low[0] <= truth <= est.ppi_high[0])
        err_ppi.append(abs(est.ppi[0] - truth))
        err_classical.append(abs(est.classical[0] - truth))
    assert np.mean(covered) >= 0.90
    assert np.mean(err_ppi) < 0.8 * np.mean(err_classical)


def test_design_weights_undo_an_unequal_draw():
    """Draws made with probability rising with the predicted errors are biased towards bad
    utterances; weights 1 / (N p) make the estimate unbiased again (mean over 400 draws
    within 3 standard errors of the truth), while ignoring them overestimates."""
    e, r, pe, pr = population(2000, seed=6, heavy=False)
    truth = e.sum() / r.sum()
    p = 0.5 / 2000 + 0.5 * (pe + 0.1 * pr) / (pe + 0.1 * pr).sum()
    rng = np.random.default_rng(7)
    weighted, unweighted = [], []
    for _ in range(400):
        rows = rng.choice(2000, 50, replace=True, p=p)
        weighted.append(
            point_estimates(one_system_draws(e, r, pe, pr, rows, 1 / (2000 * p[rows])), lam=0.0)[0][
                0, 0
            ]
        )
        unweighted.append(point_estimates(one_system_draws(e, r, pe, pr, rows), lam=0.0)[0][0, 0])
    se = np.std(weighted) / np.sqrt(len(weighted))
    assert abs(np.mean(weighted) - truth) < 3 * se + 0.002  # Hájek ratio: bias O(1/m)
    assert np.mean(unweighted) - truth > 5 * se


def frame_rows(e_by_system: dict, r, pe_by_system: dict, pr, labelled: np.ndarray):
    rows = []
    for system, e in e_by_system.items():
        for i in range(len(r)):
            rows.append(
                {
                    "dataset": "d",
                    "utt_id": f"u{i:04d}",
                    "system": system,
                    "pred_errors": pe_by_system[system][i],
                    "pred_words": pr[i],
                    "errors": e[i] if labelled[i] else np.nan,
                    "words": r[i] if labelled[i] else np.nan,
                }
            )
    return pd.DataFrame(rows)


def test_paired_difference_is_tighter_and_says_which_is_better():
    """System b makes one more error than a on every utterance: the paired interval excludes 0
    ("A better") and is narrower than either system's own interval."""
    e, r, pe, pr = population(800, seed=8, heavy=False)
    labelled = np.zeros(800, bool)
    labelled[np.random.default_rng(9).choice(800, 60, replace=False)] = True
    frame = dataset_frames(
        frame_rows({"a": e, "b": e + 1}, r, {"a": pe, "b": pe + 1}, pr, labelled)
    )["d"]
    rows = np.flatnonzero(labelled)
    draws = frame.draws(rows, np.ones(len(rows)))
    est = estimate_draws(draws, method="bootstrap", n_resamples=1000)
    pairs = paired_differences(draws, est)
    (pair,) = pairs.to_dict("records")
    assert pair["verdict"] == "A better"
    assert pair["high"] - pair["low"] < 0.5 * min(est.ppi_high - est.ppi_low)
    assert pair["difference"] == pytest.approx(est.ppi[0] - est.ppi[1])


def test_no_interval_is_narrower_than_independent_poisson_errors():
    """50 draws without a single error (a 1 % WER system, rare errors): the draws' own
    variance is 0, and the estimate is 0, yet the interval reaches at least
    t √(rate / Σr) above it, the rate being the predictions' own 1 %; without the floor it
    collapses to a point."""
    rng = np.random.default_rng(11)
    n = 2000
    words = rng.integers(5, 20, n).astype(float)
    errors = np.zeros(n)
    errors[rng.choice(n, 150, replace=False)] = 1.0  # ≈ 1 % WER
    pred = 0.01 * words
    rows = np.flatnonzero(errors == 0)[:50]
    draws = one_system_draws(errors, words, pred, words, rows)
    est = estimate_draws(draws, method="t")
    theta = est.ppi[0]
    assert theta == pytest.approx(0.0, abs=1e-3)
    expected = np.sqrt(0.01 / words[rows].sum())
    assert est.se[0] == pytest.approx(expected)
    assert est.ppi_high[0] - theta >= 1.95 * expected
    bare = estimate_draws(draws, method="t", floor=False)
    assert bare.ppi_high[0] - bare.ppi[0] < 1e-4


def shared_error_population(n=1500, systems=4, seed=12):
    """Every system misses the same hard words: a shared error count per utterance that
    grows with its length (about 15 % of its words) and that the zero-label predictions do
    not see."""
    rng = np.random.default_rng(seed)
    words = rng.integers(3, 30, n).astype(float)
    hard = np.round(0.15 * words) + rng.integers(0, 2, n)  # shared, unseen by agreement
    e, pe = {}, {}
    for s in range(systems):
        own = rng.binomial(words.astype(int), 0.03 * (s + 1)).astype(float)
        e[f"s{s}"] = hard + own
        pe[f"s{s}"] = own + rng.normal(0, 0.3, n)  # agreement sees each system's own errors
    return e, words, pe


def test_recalibration_learns_shared_errors_and_stays_unbiased():
    """With errors every system shares (invisible to agreement, but growing with the
    utterance's length), the cross-fitted refit of the predictions on 60 labels lowers the
    prediction-powered error by at least 15 % against the plain predictions, keeps the mean
    estimate within 3 standard errors of the truth over 150 draws, and its t intervals cover
    at least 90 %."""
    e, r, pe = shared_error_population()
    labelled = np.ones(len(r), bool)
    frame = dataset_frames(frame_rows(e, r, pe, r, labelled))["d"]
    truth = np.array([e[s].sum() / r.sum() for s in frame.systems])
    rng = np.random.default_rng(13)
    plain, refit, estimates, covered = [], [], [], []
    for draw in range(150):
        rows = rng.choice(len(r), 60, replace=False)
        weight = np.ones(60)
        base = estimate_draws(frame.draws(rows, weight), method="t")
        recal = estimate_draws(frame.recalibrated_draws(rows, weight, seed=draw), method="t")
        plain.append(np.abs(base.ppi - truth).mean())
        refit.append(np.abs(recal.ppi - truth).mean())
        estimates.append(recal.unshrunk)  # the unbiased point (ppi leans on the prior)
        covered.append((recal.ppi_low <= truth) & (truth <= recal.ppi_high))
    assert np.mean(refit) < 0.85 * np.mean(plain)
    estimates = np.array(estimates)
    se = estimates.std(axis=0) / np.sqrt(len(estimates))
    assert np.all(np.abs(estimates.mean(axis=0) - truth) < 3 * se + 1e-3)
    assert np.mean(covered) >= 0.90


def looping_population(n=2000, systems=4, seed=21):
    """Systems whose predictions are good but not exact, and 1.5 % of utterances on which
    system s0 loops: 100 insertions that agreement sees (predicted too), as in the
    few_labels stress set. A draw of 50 misses every loop with probability 0.985⁵⁰ ≈ 47 %."""
    rng = np.random.default_rng(seed)
    words = rng.integers(3, 30, n).astype(float)
    e, pe = {}, {}
    loops = rng.choice(n, int(0.015 * n), replace=False)
    for s in range(systems):
        wer = rng.beta(2, 12, n)
        e[f"s{s}"] = np.round(wer * words + rng.normal(0, 1.0, n).clip(-1, None)).clip(0, None)
        pe[f"s{s}"] = wer * words
    e["s0"][loops] += 100
    pe["s0"][loops] += 100
    return e, words, pe


def test_a_draw_that_misses_the_loops_still_counts_them(monkeypatch):
    """The take-all tail (predictions above 1.5 errors per word) is trusted in full: over 200
    random draws of 50, the looping system's t interval covers its WER at least 90 % of the
    time and its mean error is lower than with no tail (λ < 1 would estimate a share of the
    loops from draws that have none); the mean estimate stays within 3 standard errors."""
    e, r, pe = looping_population()
    frame = dataset_frames(frame_rows(e, r, pe, r, np.ones(len(r), bool)))["d"]
    truth = frame.truth()[0]

    def run():
        rng = np.random.default_rng(22)
        estimates, covered = [], []
        for _ in range(200):
            rows = rng.choice(frame.n, 50, replace=False)
            est = estimate_draws(frame.draws(rows, np.ones(50)), method="t", shrink_to_prior=False)
            estimates.append(est.ppi[0])
            covered.append(est.ppi_low[0] <= truth <= est.ppi_high[0])
        return np.array(estimates), np.mean(covered)

    with_tail, coverage = run()
    monkeypatch.setattr(ppi, "TAIL_WER", np.inf)
    monkeypatch.setattr(ppi, "TAIL_FACTOR", np.inf)  # no tail by either rule
    without_tail, coverage_without = run()
    assert coverage >= 0.90 > coverage_without
    assert np.abs(with_tail - truth).mean() < 0.8 * np.abs(without_tail - truth).mean()
    se = with_tail.std() / np.sqrt(len(with_tail))
    assert abs(with_tail.mean() - truth) < 3 * se + 1e-3


def six_systems(prior_off: float, n=1500, seed=31):
    """Six systems whose per-utterance predictions carry noise; each system's zero-label
    estimate is off by a system-specific ``prior_off`` · (WER points) times a fixed sign."""
    rng = np.random.default_rng(seed)
    words = rng.integers(3, 30, n).astype(float)
    e, pe = {}, {}
    for s in range(6):
        wer = rng.beta(2, 10 - s, n)
        e[f"s{s}"] = rng.binomial(words.astype(int), wer).astype(float)
        shift = prior_off * (1 if s % 2 else -1) * (1 + s / 5)
        pe[f"s{s}"] = (wer + shift + rng.normal(0, 0.05, n)).clip(0, None) * words
    return e, words, pe


@pytest.mark.parametrize("prior_off", [0.0, 0.15])
def test_shrinkage_leans_on_a_close_prior_and_not_on_a_far_one(prior_off):
    """With zero-label estimates close to the truth, shrinking the prediction-powered
    estimates toward them lowers the mean error by at least 20 %; with estimates 15 points
    off (half of them too high), it costs at most 5 %. The interval is the same either way,
    and holds the point."""
    e, r, pe = six_systems(prior_off)
    frame = dataset_frames(frame_rows(e, r, pe, r, np.ones(len(r), bool)))["d"]
    truth = frame.truth()
    rng = np.random.default_rng(32)
    shrunk, unshrunk = [], []
    for draw in range(100):
        rows = rng.choice(frame.n, 50, replace=False)
        est = estimate_draws(frame.recalibrated_draws(rows, np.ones(50), seed=draw), method="t")
        assert np.all((est.ppi_low <= est.ppi) & (est.ppi <= est.ppi_high))
        assert np.allclose(est.unshrunk, (est.ppi_low + est.ppi_high) / 2) or np.any(
            est.ppi_low == 0
        )  # the interval is centred on the unbiased point (unless cut at 0)
        shrunk.append(np.abs(est.ppi - truth).mean())
        unshrunk.append(np.abs(est.unshrunk - truth).mean())
    ratio = np.mean(shrunk) / np.mean(unshrunk)
    assert ratio < 0.8 if prior_off == 0 else ratio < 1.05
