"""Descriptive statistics and paired tests that ASR leaderboards report.

* :func:`describe`: n, mean, SD, min/max and a 95 % t-interval of the mean of per-utterance
  values (utterance WER or CER; these describe the *distribution* of utterance errors, which a
  corpus WER Σ errors / Σ words does not);
* :func:`cohens_d`: standardised mean difference with the pooled SD;
* :func:`macro_bootstrap` and :func:`bootstrap_ci` (:mod:`werest.resampling`, re-exported):
  percentile CI of a macro average of corpus rates (each dataset's utterances resampled on
  their own, the rates averaged), and of one corpus rate;
* :func:`paired_bootstrap`: "A is better than B" with the *same* resample of the utterances both
  systems share, for both systems (the paired design removes the utterance-difficulty variance
  both systems have in common, as in Bisani & Ney 2004);
* :func:`rank_agreement`: Spearman's ρ and Kendall's τ between two rankings;
* :func:`latency`: RTFx (Σ audio s / Σ processing s) and per-utterance latency mean and p95.

:class:`Bootstrap` (declared in :mod:`werest.settings`) holds the settings every bootstrap of a
run shares (the ``bootstrap:`` block of ``werest score`` and ``werest leaderboard`` builds it by
its ``_target_``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from werest.resampling import (  # noqa: F401 (re-exported: the leaderboard's statistics)
    RateSample,
    bootstrap_ci,
    index_draws,
    macro_bootstrap,
    shared_draws,
)
from werest.settings import Bootstrap as Bootstrap  # declared there, light: --help reads it


def describe(values: np.ndarray | pd.Series, confidence: float = 0.95) -> dict[str, float]:
    """Summary of per-utterance values (NaN dropped).

    Parameters
    ----------
    values : per-utterance WER, CER or latency.
    confidence : level of the t-interval of the mean.

    Returns
    -------
    ``n, mean, sd, min, max, ci_low, ci_high`` (SD with ddof=1; NaN where undefined).
    """
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    n = len(x)
    if n == 0:
        nan = float("nan")
        return {
            "n": 0,
            "mean": nan,
            "sd": nan,
            "min": nan,
            "max": nan,
            "ci_low": nan,
            "ci_high": nan,
        }
    from scipy import stats as scipy_stats  # here: ~0.6 s of start-up for every command

    mean = float(x.mean())
    sd = float(x.std(ddof=1)) if n > 1 else float("nan")
    half = (
        float(scipy_stats.t.ppf(0.5 + confidence / 2, n - 1) * sd / np.sqrt(n))
        if n > 1
        else float("nan")
    )
    return {
        "n": n,
        "mean": mean,
        "sd": sd,
        "min": float(x.min()),
        "max": float(x.max()),
        "ci_low": mean - half,
        "ci_high": mean + half,
    }


def cohens_d(a: np.ndarray | pd.Series, b: np.ndarray | pd.Series) -> float:
    """Cohen's d = (mean a − mean b) / pooled SD (NaN when the pooled SD is 0 or undefined).

    Positive when ``a``'s values (e.g. utterance WERs) are higher than ``b``'s.
    """
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    x, y = x[np.isfinite(x)], y[np.isfinite(y)]
    if len(x) < 2 or len(y) < 2:
        return float("nan")
    pooled = ((len(x) - 1) * x.var(ddof=1) + (len(y) - 1) * y.var(ddof=1)) / (len(x) + len(y) - 2)
    return float((x.mean() - y.mean()) / np.sqrt(pooled)) if pooled > 0 else float("nan")


def paired_bootstrap(
    samples_a: list[RateSample],
    samples_b: list[RateSample],
    *,
    n_resamples: int = 1000,
    seed: int = 0,
) -> dict[str, float]:
    """One-sided paired bootstrap of "A's macro rate is lower than B's".

    Parameters
    ----------
    samples_a, samples_b : per dataset, A's and B's values on the *same* utterances in the
        same order (the utterances both systems have); each resample draws one index vector
        per dataset and applies it to both systems.

    Returns
    -------
    ``delta`` (A − B on all utterances), ``share_a_better`` (resamples with A < B) and
    ``p_value``: the share of resamples with A ≥ B, the bootstrap p-value of H0 "A is not
    better than B" (small = A reliably better).
    """
    pairs = [(a, b) for a, b in zip(samples_a, samples_b, strict=True) if len(a.numerator)]
    if not pairs or n_resamples < 1:
        return {"delta": float("nan"), "share_a_better": float("nan"), "p_value": float("nan")}
    a_list = [a for a, _ in pairs]
    b_list = [b for _, b in pairs]
    delta = float(np.mean([a.rate() for a in a_list]) - np.mean([b.rate() for b in b_list]))
    better = 0
    for idx in index_draws(a_list, n_resamples, seed):
        rate_a = np.mean([a.rate(i) for a, i in zip(a_list, idx, strict=True)], axis=0)
        rate_b = np.mean([b.rate(i) for b, i in zip(b_list, idx, strict=True)], axis=0)
        better += int(np.sum(rate_a < rate_b))
    share = better / n_resamples
    return {"delta": delta, "share_a_better": share, "p_value": 1.0 - share}


def rank_agreement(first: pd.Series, second: pd.Series) -> dict[str, float]:
    """Spearman's ρ and Kendall's τ-b between two scores of the same systems (index = system).

    Returns NaN coefficients when fewer than 3 systems have both scores (two systems' order
    is one comparison, not a correlation).
    """
    from scipy import stats as scipy_stats

    both = pd.concat([first, second], axis=1, join="inner").dropna()
    if len(both) < 3:
        return {"n_systems": len(both), "spearman": float("nan"), "kendall": float("nan")}
    rho = scipy_stats.spearmanr(both.iloc[:, 0], both.iloc[:, 1]).statistic
    tau = scipy_stats.kendalltau(both.iloc[:, 0], both.iloc[:, 1]).statistic
    return {"n_systems": len(both), "spearman": float(rho), "kendall": float(tau)}


def latency(rows: pd.DataFrame) -> dict[str, float]:
    """RTFx and per-utterance latency of rows with ``duration`` and ``processing_seconds``.

    Returns
    -------
    ``n_timed``, ``audio_seconds``, ``processing_seconds``, ``rtfx`` (Σ audio / Σ processing,
    the Open ASR Leaderboard's definition), ``latency_mean``, ``latency_p50`` and
    ``latency_p95`` (seconds per utterance), ``rtf_le_1`` (share of timed utterances with
    processing ≤ duration: faster than real time) and ``throughput`` (timed utterances per
    processing second); NaN when no row has both timings.
    """
    nan = float("nan")
    if not {"duration", "processing_seconds"} <= set(rows.columns):
        return {
            "n_timed": 0,
            "audio_seconds": nan,
            "processing_seconds": nan,
            "rtfx": nan,
            "latency_mean": nan,
            "latency_p50": nan,
            "latency_p95": nan,
            "rtf_le_1": nan,
            "throughput": nan,
        }
    duration = pd.to_numeric(rows["duration"], errors="coerce")
    seconds = pd.to_numeric(rows["processing_seconds"], errors="coerce")
    timed = duration.notna() & seconds.notna()
    audio, processing = float(duration[timed].sum()), float(seconds[timed].sum())
    return {
        "n_timed": int(timed.sum()),
        "audio_seconds": audio,
        "processing_seconds": processing,
        "rtfx": audio / processing if processing > 0 else nan,
        "latency_mean": float(seconds[timed].mean()) if timed.any() else nan,
        "latency_p50": float(np.percentile(seconds[timed], 50)) if timed.any() else nan,
        "latency_p95": float(np.percentile(seconds[timed], 95)) if timed.any() else nan,
        "rtf_le_1": float((seconds[timed] <= duration[timed]).mean()) if timed.any() else nan,
        "throughput": int(timed.sum()) / processing if processing > 0 else nan,
    }
