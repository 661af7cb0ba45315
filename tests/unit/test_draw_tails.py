"""Intervals that hold for any draw (issue 42): the predictions' heavy tail is trusted in
every mode, and a draw that misses it gets a wider interval (the unseen tail's residuals,
bounded from its predicted errors) and a warning with the cost of fixing it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest


def _frame(n: int = 500, systems: int = 4, seed: int = 0):
    from werest.estimation.ppi_frames import DatasetFrame

    rng = np.random.default_rng(seed)
    words = rng.integers(3, 40, size=(n, 1)).astype(float) * np.ones((1, systems))
    errors = rng.poisson(words * np.linspace(0.05, 0.3, systems)).astype(float)
    pred = np.clip(errors * rng.uniform(0.5, 1.3, errors.shape), 0, None)
    return DatasetFrame(
        dataset="d",
        utterances=pd.Index([f"u{i:04d}" for i in range(n)]),
        systems=[f"s{k}" for k in range(systems)],
        pred_errors=pred,
        pred_words=words,
        present=np.ones((n, systems), dtype=bool),
        errors=errors,
        words=words.copy(),
    )


def test_the_long_tail_copy_carries_its_share_of_the_errors():
    from werest.evaluation.few_labels import tail_frames

    frame = _frame()
    copy = tail_frames({"d": frame, "tiny": _frame(50)}, 0.02, 0.3, seed=0)
    assert list(copy) == ["d+tail"]  # fewer than 200 utterances: no copy
    tailed = copy["d+tail"]
    changed = (tailed.errors != frame.errors).any(axis=1)
    assert changed.sum() == 10  # 2 % of 500
    for k in (0, 2):  # one system in two hallucinates
        share = tailed.errors[changed, k].sum() - frame.errors[changed, k].sum()
        assert share / tailed.errors[:, k].sum() == pytest.approx(0.3, abs=0.01)
        extra_pred = tailed.pred_errors[changed, k] - frame.pred_errors[changed, k]
        extra_true = tailed.errors[changed, k] - frame.errors[changed, k]
        assert ((extra_pred >= 0.5 * extra_true) & (extra_pred <= extra_true)).all()
    assert (tailed.errors[:, [1, 3]] == frame.errors[:, [1, 3]]).all()
    assert tailed.tail()[changed][:, [0, 2]].all()  # the predictions put them in the tail


def test_a_draw_that_misses_the_tail_gets_a_wider_interval_and_a_warning():
    """50 draws without the tail and 50 with one tail utterance (a random draw's expected
    share): missing it adds the unseen tail's term, holding it adds (almost) nothing; the
    warning names the systems and the cost."""
    from werest.estimation.labels import missed_tail_warning
    from werest.estimation.ppi import estimate_draws, tail_seen, unobserved_tail_variance
    from werest.evaluation.few_labels import tail_frames

    frame = tail_frames({"d": _frame()}, 0.02, 0.3, seed=0)["d+tail"]
    tail = frame.tail().any(axis=1)
    ordinary = np.flatnonzero(~tail)
    missed = frame.draws(ordinary[:50], np.ones(50))
    held = frame.draws(np.r_[ordinary[:49], np.flatnonzero(tail)[:1]], np.ones(50))
    assert tail_seen(missed)[[0, 2]] == pytest.approx(0)
    assert (tail_seen(held)[[0, 2]] > 0.9).all()  # one tail draw: about its share (50/500)
    assert (unobserved_tail_variance(missed)[[0, 2]] > 0).all()
    assert (unobserved_tail_variance(held) <= 0.1 * unobserved_tail_variance(missed)).all()
    est = estimate_draws(missed, method="t", shrink_to_prior=False)
    assert est.tail_widening[2] > 0.005  # the 30 % WER system; s0's 5 % barely moves
    est.tail_counts = (int(tail.sum()), 0)
    warning = missed_tail_warning("d", missed, est, np.ones(4, dtype=bool))
    assert warning is not None and "s2" in warning["systems"]
    assert "holds 0 of the 10 utterances" not in warning["message"]
    assert "hold 0 of the 10 utterances" in warning["message"]
    assert "strategy=active" in warning["message"] and "150 labels" in warning["message"]
    est = estimate_draws(held, method="t")
    assert missed_tail_warning("d", held, est, np.ones(4, dtype=bool)) is None
    # the bootstrap's resamples of a draw without the tail cannot see it either: its
    # percentile interval gets the same term on each side
    boot = estimate_draws(missed, method="bootstrap", n_resamples=200, shrink_to_prior=False)
    low, high = np.nanquantile(boot.boot[:, 2], [0.025, 0.975])
    assert boot.tail_widening[2] > 0.005
    assert boot.ppi_low[2] <= low - boot.tail_widening[2] + 1e-12
    assert boot.ppi_high[2] >= high + boot.tail_widening[2] - 1e-12


def test_random_draws_of_the_long_tail_hold():
    """Random draws of 50 from a long-tail copy (2 % of utterances, 30 % of the errors of
    one system in two): at least 85 % of the draws hold 80 % of the systems."""
    from werest.estimation.ppi import estimate_draws
    from werest.evaluation.few_labels import tail_frames

    frame = tail_frames({"d": _frame(600, 6, seed=3)}, 0.02, 0.3, seed=0)["d+tail"]
    truth = frame.truth()
    rng = np.random.default_rng(0)
    holds = []
    for draw in range(150):
        rows = rng.choice(frame.n, 50, replace=False)
        draws = frame.recalibrated_draws(rows, np.ones(50), seed=draw)
        est = estimate_draws(draws, method="t", shrink_to_prior=False)
        holds.append(((est.ppi_low <= truth) & (truth <= est.ppi_high)).mean() >= 0.8)
    assert np.mean(holds) >= 0.85


def test_the_promise_is_measured_per_draw():
    """summarise_draws' promise_kept: the share of draws whose median half-width over the
    systems is within 1.5× of the promised one."""
    from werest.evaluation.few_labels import summarise_draws

    rows = []
    for draw, half in enumerate([0.021, 0.03, 0.05, 0.012]):
        for system in ("a", "b", "c"):
            rows.append(
                {
                    "strategy": "random", "budget": 50, "estimator": "ppi", "method": "t",
                    "domain": "x", "dataset": "d", "draw": draw, "system": system,
                    "estimate": 0.2, "low": 0.2 - half, "high": 0.2 + half, "wer": 0.2,
                    "lam": 0.5, "n_labelled": 50, "promise": 0.03, "pilot_promise": 0.021,
                }
            )  # fmt: skip
    summary = summarise_draws(pd.DataFrame(rows))
    # 0.03/0.021 = 1.43 and 1.0 kept; 0.6 (< 1/1.5) and 2.5 not
    assert summary["promise_kept"].iat[0] == pytest.approx(0.5)
    # the pilot's: 0.021 over 0.021, 0.03, 0.05, 0.012 = 1.0 and 0.7 kept, 0.42 and 1.75 not
    assert summary["pilot_promise_kept"].iat[0] == pytest.approx(0.5)
    assert summary["pilot_promise_ratio"].iat[0] == pytest.approx((0.7 + 1.0) / 2)


def test_a_few_draws_with_long_proxies_cannot_take_the_denominator_to_zero(monkeypatch):
    """10 labels whose proxies are 6× their references (the corpus's are not): at λ = 1 the
    estimated mean reference length, Σ r̂ / N + mean (r − r̂), is below 0. λ is capped so it
    stays at least half the labels' own (``DENOMINATOR_FLOOR``), and the interval stays
    finite and sane; without the cap the same draws give no estimate at all."""
    from dataclasses import replace

    from werest.estimation import ppi

    frame = _frame(n=500)
    drawn = np.arange(10)
    long = frame.pred_words.copy()
    long[drawn] *= 6.0
    frame = replace(frame, pred_words=long)
    draws = frame.draws(drawn, np.ones(10), frame.population())
    labels_own = draws.words.mean(axis=0)  # offset 0: the labels' own mean reference length
    assert (draws.pop["r"] / draws.n_frame + labels_own - draws.pred_words.mean(axis=0) < 0).all()
    est = ppi.estimate_draws(draws, method="t", shared_lambda=True)
    _, den = ppi.influence_terms(draws.trusting_tail(), est.ppi, est.lam)
    assert (den >= ppi.DENOMINATOR_FLOOR * labels_own - 1e-9).all()
    assert np.isfinite(est.ppi).all() and ((est.ppi_high - est.ppi_low) < 1.0).all()
    monkeypatch.setattr(ppi, "DENOMINATOR_FLOOR", -np.inf)  # no cap
    uncapped = ppi.estimate_draws(draws, method="t", shared_lambda=True)
    assert not np.isfinite(uncapped.ppi_high - uncapped.ppi_low).all()


def test_the_report_leaves_unmeasured_promises_empty():
    """No pilot promise at a budget no larger than the pilot (10 < 20): the report's cell is
    empty, not "nan %"; a measured share is shown in per cent."""
    from werest.report.few_labels_report import _rounded

    frame = pd.DataFrame(
        {"pilot_promise_kept": [np.nan, 0.96], "pilot_promise_ratio": [np.nan, 1.1]}
    )
    shown = _rounded(frame)
    assert shown["pilot_promise_kept"].tolist() == ["", "96.0 %"]
    assert shown["pilot_promise_ratio"].tolist() == ["", "1.10"]
