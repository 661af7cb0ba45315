"""Prediction-powered corpus WER from a few labelled utterances (``werest estimate labels=…``).

A dataset's corpus WER is a ratio, θ = Σ eᵢ / Σ rᵢ (word errors over reference words, over its
N utterances). werest predicts every utterance's errors, êᵢ = predicted WER · nᵢ, and its
reference length, r̂ᵢ = nᵢ (the proxy's words). A person transcribes m draws from the N
utterances (``werest sample``): draw j is utterance i with probability pᵢ, so
wⱼ = 1 / (N pⱼ) undoes the design (1 for a simple random sample). The prediction-powered
estimate (PPI++; Angelopoulos, Duchi & Zrnic 2023) solves the estimating equation
Σ (e − θ r) = 0 with the predictions plus the labelled draws' correction of their bias:

    θ̂ = [λ Σᵢ êᵢ / N + mean_j wⱼ (eⱼ − λ êⱼ)] / [λ Σᵢ r̂ᵢ / N + mean_j wⱼ (rⱼ − λ r̂ⱼ)]

λ = 0 is the classical labels-only estimate Σ w e / Σ w r; λ = 1 trusts the predictions fully
(PPI). λ is tuned per system to the variance-minimising value, clipped to [0, 1], as
``ppi_py`` tunes it for a mean (``_calc_lam_glm``), so the estimate is never worse than labels
alone by more than the noise of estimating λ. For a mean (every rᵢ = r̂ᵢ = 1) this is exactly
``ppi_py.ppi_mean_pointestimate`` and, with ``method="normal"``, ``ppi_py.ppi_mean_ci``
(``tests/integration/test_ppi.py``).

Intervals (``method``):

* ``normal``: θ̂ ± z·se, se from the linearised terms (delta method), as ``ppi_py``;
* ``t``: the same with Student's t on m − 1 degrees of freedom (``werest estimate``'s
  default: the one that held 90 % coverage in every held-out domain at 50 labels);
* ``bootstrap``: percentile interval over resamples of the labelled draws, λ re-tuned in each;

none narrower than independent Poisson errors would give (:func:`poisson_se`).
:meth:`werest.estimation.ppi_frames.DatasetFrame.recalibrated_draws` refits the predictions
on the labels first, cross-fitted, so they also carry the errors every system shares.

Every system of a dataset is estimated on the same draws, so a difference of two systems'
WERs has the paired terms' variance (:func:`paired_differences`): much tighter than either.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy import special

from werest.estimation.settings import METHODS


@dataclass
class DatasetDraws:
    """One dataset's labelled draws and the predictions of its systems.

    Attributes
    ----------
    systems : the S systems, in column order.
    n_frame : N, the utterances the draws were made from.
    weight : (m,) design weights wⱼ = 1 / (N pⱼ) of the m draws (a utterance drawn twice is
        two draws).
    errors, words : (m, S) true word errors and reference words of each system on each draw.
    pred_errors, pred_words : (m, S) the predictions êⱼ, r̂ⱼ on the same draws.
    present : (m, S) whether the system has an estimated row for the draw's utterance; the
        other arrays are 0 where it does not.
    pop : the predictions over all N utterances, per system (S,): ``e`` = Σ ê, ``r`` = Σ r̂,
        ``ee`` = Σ ê², ``er`` = Σ ê r̂, ``rr`` = Σ r̂² (:func:`population_sums`).
    tail : (m, S) whether the draw's prediction is in the take-all tail (:func:`tail_mask`);
        None: no tail.
    pop_tail : :attr:`pop`'s sums over the tail's rows only.
    prior : the zero-label estimate of every system (S,), Σ ê / Σ r̂ of the model's own
        predictions before any refit: what :func:`shrink` leans on; None: no prior.
    offset : what the prediction-powered estimate adds to its numerator and denominator
        before dividing, per system (S,): ``e`` and ``r``, the tail's Σ ê and Σ r̂ once
        :meth:`trusting_tail` moved the tail there; None: nothing.
    skipped : (m,) draws of utterances marked unlabellable (``skip``): their true terms are
        0 (the estimand is the labellable utterances' WER) and they are not counted as
        labelled; None: none.
    """

    systems: list[str]
    n_frame: int
    weight: np.ndarray
    errors: np.ndarray
    words: np.ndarray
    pred_errors: np.ndarray
    pred_words: np.ndarray
    present: np.ndarray
    pop: dict[str, np.ndarray]
    tail: np.ndarray | None = None
    pop_tail: dict[str, np.ndarray] | None = None
    prior: np.ndarray | None = None
    offset: dict[str, np.ndarray] | None = None
    skipped: np.ndarray | None = None

    @property
    def m(self) -> int:
        return len(self.weight)

    def n_labelled(self) -> np.ndarray:
        """Per system (S,): the draws with a label, the ones marked ``skip`` left out."""
        present = self.present
        if self.skipped is not None:
            present = present & ~np.asarray(self.skipped, dtype=bool)[:, None]
        return present.sum(axis=0)

    def trusting_tail(self) -> DatasetDraws:
        """The same draws with the take-all tail's predictions trusted in full (λ = 1 there,
        whatever λ the rest gets): the tail's Σ ê and Σ r̂ over all N rows go to
        :attr:`offset`, and a labelled draw in the tail keeps only its residual, e − ê and
        r − r̂, with no prediction left to scale. For any λ the estimate stays unbiased (the
        tail is a function of the predictions alone); what it changes is a draw that misses
        the rare catastrophic utterances (hallucination loops, which agreement sees): with
        λ < 1 a share 1 − λ of their errors would be estimated from a sample without them."""
        if self.tail is None or (not self.tail.any() and not self.pop_tail["e"].any()):
            return self
        t = self.tail & self.present
        return replace(
            self,
            errors=self.errors - np.where(t, self.pred_errors, 0.0),
            words=self.words - np.where(t, self.pred_words, 0.0),
            pred_errors=np.where(t, 0.0, self.pred_errors),
            pred_words=np.where(t, 0.0, self.pred_words),
            pop={name: self.pop[name] - self.pop_tail[name] for name in self.pop},
            tail=None,
            pop_tail=None,
            offset={"e": self.pop_tail["e"], "r": self.pop_tail["r"]},
        )


#: A prediction is in the take-all tail when it predicts more than this many errors per
#: reference word (a hallucination loop's insertions: :func:`tail_mask`).
TAIL_WER = 1.5


#: ... or more than this many times its system's mean predicted errors per utterance (a long
#: hallucinated utterance: many errors, not necessarily 1.5 per word) ...
TAIL_FACTOR = 8.0
#: ... and at least this many errors (a system with almost no errors has no heavy tail).
TAIL_MIN_ERRORS = 5.0
#: The share of its predicted errors an unlabelled tail row's truth may differ by: the scale
#: of :func:`unobserved_tail_variance`'s term.
TAIL_RESIDUAL = 0.5


def tail_mask(
    pred_errors: np.ndarray, pred_words: np.ndarray, present: np.ndarray | None = None
) -> np.ndarray:
    """Where the predictions are in the take-all tail: ê > :data:`TAIL_WER` · max(r̂, 1)
    (a hallucination loop), or, on an (N, S) array of a whole dataset, ê >
    :data:`TAIL_FACTOR` × the system's mean ê and ê ≥ :data:`TAIL_MIN_ERRORS` (the few
    utterances carrying a large share of its errors). ``present``: the rows a system has."""
    e = np.asarray(pred_errors, dtype=float)
    tail = e > TAIL_WER * np.maximum(np.asarray(pred_words), 1.0)
    if e.ndim == 2 and len(e):
        present = np.ones(e.shape, dtype=bool) if present is None else present
        count = np.maximum(present.sum(axis=0), 1)
        mean = np.where(present, e, 0.0).sum(axis=0) / count
        tail |= (e > TAIL_FACTOR * mean) & (e >= TAIL_MIN_ERRORS)
    return tail


def unobserved_tail_variance(d: DatasetDraws, residual: float = TAIL_RESIDUAL) -> np.ndarray:
    """Per system (S,): the variance to add to the rectifier's mean for the part of the
    predicted tail the draws did not see (a random draw of 50 misses a 2 % tail with
    probability 0.98⁵⁰ ≈ 36 %, and then its own spread says nothing of the tail's residuals).

    The tail's residuals are bounded from the predictions of every tail row: |e − ê| up to
    ``residual`` · ê. A simple random sample of m would carry their variance
    Σ_tail (residual · ê)² / (m N) in the rectifier's mean; the term added is that times the
    share of the tail the draws missed, 1 − min(1, mean_j wⱼ êⱼ 1[tail] / (Σ_tail ê / N)):
    the design-weighted tail mass drawn against the tail's known predicted mass. A draw
    that holds its share of the tail adds nothing (its own spread carries the tail); one
    that holds none adds it all. Only the interval changes, never the point."""
    if d.tail is None or d.pop_tail is None or not d.m:
        return np.zeros(len(d.systems))
    missed = 1.0 - tail_seen(d)
    return missed * residual**2 * d.pop_tail["ee"] / (d.m * d.n_frame)


def tail_seen(d: DatasetDraws) -> np.ndarray:
    """Per system (S,): the share of the predicted tail's mass the draws represent,
    min(1, mean_j wⱼ êⱼ 1[tail] / (Σ_tail ê / N)); 1 where there is no tail."""
    if d.tail is None or d.pop_tail is None or not d.m:
        return np.ones(len(d.systems))
    expected = d.pop_tail["e"] / d.n_frame
    drawn = (d.weight[:, None] * np.where(d.tail, d.pred_errors, 0.0)).mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected > 0, np.clip(drawn / expected, 0.0, 1.0), 1.0)


def _offset(d: DatasetDraws, name: str) -> np.ndarray | float:
    return 0.0 if d.offset is None else d.offset[name]


def population_sums(pred_errors: np.ndarray, pred_words: np.ndarray) -> dict[str, np.ndarray]:
    """The prediction moments :attr:`DatasetDraws.pop` holds, summed over the N rows (axis 0:
    one value per system of an (N, S) array)."""
    e = np.asarray(pred_errors, dtype=float)
    r = np.asarray(pred_words, dtype=float)
    sums = {"e": e, "r": r, "ee": e * e, "er": e * r, "rr": r * r}
    return {name: values.sum(axis=0) for name, values in sums.items()}


def _moments(d: DatasetDraws, counts: np.ndarray) -> dict[str, np.ndarray]:
    """Means (K, S) over the draws, with multiplicities ``counts`` (K, m), of the weighted
    terms θ̂ and λ are built from (``e`` = w e, ``pe`` = w ê, ``e_pe`` = w² e ê, ...)."""
    w = d.weight[:, None]
    e, r, pe, pr = w * d.errors, w * d.words, w * d.pred_errors, w * d.pred_words
    terms = {
        "e": e, "r": r, "pe": pe, "pr": pr,
        "e_pe": e * pe, "e_pr": e * pr, "r_pe": r * pe, "r_pr": r * pr,
        "pe_pe": pe * pe, "pe_pr": pe * pr, "pr_pr": pr * pr,
    }  # fmt: skip
    m = counts.sum(axis=1)[:, None]
    return {name: counts @ values / m for name, values in terms.items()}


def _theta(d: DatasetDraws, mo: dict[str, np.ndarray], lam: np.ndarray) -> np.ndarray:
    """θ̂ (K, S) from the draws' moments and λ (K, S)."""
    num = (_offset(d, "e") + lam * d.pop["e"]) / d.n_frame + mo["e"] - lam * mo["pe"]
    den = (_offset(d, "r") + lam * d.pop["r"]) / d.n_frame + mo["r"] - lam * mo["pr"]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _tuned_lambda(
    d: DatasetDraws, mo: dict[str, np.ndarray], m: np.ndarray, theta: np.ndarray
) -> np.ndarray:
    """The variance-minimising λ (K, S) at θ (K, S), clipped to [0, 1]: ``ppi_py``'s
    ``_calc_lam_glm`` for a mean, applied to the ratio's estimating function
    g = w(e − θ r) and its prediction ĝ = w(ê − θ r̂), written with moments."""
    t = theta
    g = mo["e"] - t * mo["r"]
    g_hat = mo["pe"] - t * mo["pr"]
    g_g_hat = mo["e_pe"] - t * (mo["e_pr"] + mo["r_pe"]) + t**2 * mo["r_pr"]
    g_hat_sq = mo["pe_pe"] - 2 * t * mo["pe_pr"] + t**2 * mo["pr_pr"]
    cov = g_g_hat - g * g_hat
    # the variance of ĝ over the labelled draws and the N unlabelled rows together
    total = m + d.n_frame
    pop_sum, pop_sq = _population_residual(d.pop, t)
    sum_all = g_hat * m + pop_sum
    sq_all = g_hat_sq * m + pop_sq
    var = (sq_all - sum_all**2 / total) / (total - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = cov / ((1 + m / d.n_frame) * var)
    return np.clip(np.nan_to_num(lam, nan=0.0, posinf=1.0, neginf=0.0), 0.0, 1.0)


def point_estimates(
    d: DatasetDraws,
    counts: np.ndarray | None = None,
    lam: float | None = None,
    *,
    shared: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """(θ̂, λ), each (K, S), for the multiplicities ``counts`` (K, m; default: each draw once).

    ``lam`` fixes λ (0: classical; 1: PPI); None tunes it as ``ppi_py`` does: from the λ = 1
    estimate, per system, or with ``shared`` one λ for every system of the dataset (the
    median of theirs): every system's estimate then corrects its predictions by the same
    share, so the systems' estimates stay as paired as the labels themselves, which is what
    ranks them (:data:`werest.estimation.labels.LabelSettings`)."""
    if counts is None:
        counts = np.ones((1, d.m))
    moments = _moments(d, counts)
    shape = (len(counts), len(d.systems))
    if lam is not None:
        lams = np.full(shape, float(lam))
        return _theta(d, moments, lams), lams
    first = _theta(d, moments, np.ones(shape))
    m = counts.sum(axis=1)[:, None]
    lams = _tuned_lambda(d, moments, m, np.nan_to_num(first))
    if shared:
        lams = np.broadcast_to(np.median(lams, axis=1, keepdims=True), lams.shape).copy()
    lams = np.minimum(lams, _denominator_cap(d, moments))
    return _theta(d, moments, lams), lams


#: :func:`_denominator_cap`: the least share of the labels' own estimate of the mean
#: reference length the prediction-powered one may fall to.
DENOMINATOR_FLOOR = 0.5


def _denominator_cap(d: DatasetDraws, mo: dict[str, np.ndarray]) -> np.ndarray:
    """The largest λ (K, S) that keeps the ratio's denominator, the estimated mean reference
    length (offset_r + λ Σ r̂) / N + mean w r − λ mean w r̂, at no less than
    :data:`DENOMINATOR_FLOOR` of the labels' own (offset_r / N + mean w r). It falls with λ
    only where the drawn proxies are longer than the corpus's on average: with a handful of
    labels one long drawn proxy can take it to about 0 and the ratio's interval to thousands
    of points. λ is a data-chosen constant either way (PPI++), so the cap keeps the estimate
    as unbiased as the tuned λ is; 1 (no cap) where the denominator does not fall."""
    base = _offset(d, "r") / d.n_frame + mo["r"]
    slope = mo["pr"] - d.pop["r"] / d.n_frame  # how much the denominator loses per unit of λ
    with np.errstate(divide="ignore", invalid="ignore"):
        cap = (1 - DENOMINATOR_FLOOR) * base / slope
    return np.where(slope > 0, np.clip(np.nan_to_num(cap, nan=0.0), 0.0, 1.0), 1.0)


def linearised_se(
    d: DatasetDraws, theta: np.ndarray, lam: np.ndarray, extra: np.ndarray | float = 0.0
) -> np.ndarray:
    """The delta-method standard error (S,) of θ̂ at (θ, λ) (S,): the labelled draws'
    rectifier terms plus the predictions' own sampling term, as ``ppi_py.ppi_mean_ci``;
    ``extra``: a variance added to the rectifier's mean (:func:`unobserved_tail_variance`)."""
    terms, den = influence_terms(d, theta, lam)
    rectifier = terms.std(axis=0) / np.sqrt(d.m)
    imputed = _imputed_std(d, theta, lam) / np.sqrt(d.n_frame)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt(rectifier**2 + imputed**2 + extra) / den


def influence_terms(
    d: DatasetDraws, theta: np.ndarray, lam: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each draw's rectifier term wⱼ[(eⱼ − θ rⱼ) − λ(êⱼ − θ r̂ⱼ)] (m, S), and the denominator
    (the estimated mean reference length, S,) the terms are divided by in the delta method."""
    w = d.weight[:, None]
    terms = w * ((d.errors - theta * d.words) - lam * (d.pred_errors - theta * d.pred_words))
    den = (_offset(d, "r") + lam * d.pop["r"]) / d.n_frame
    den = den + (w * (d.words - lam * d.pred_words)).mean(axis=0)
    return terms, den


def _population_residual(pop: dict[str, np.ndarray], theta: np.ndarray):
    """Σ ĝ and Σ ĝ² over the N rows of ĝ = ê − θ r̂, from the prediction moments ``pop``."""
    total = pop["e"] - theta * pop["r"]
    squares = pop["ee"] - 2 * theta * pop["er"] + theta**2 * pop["rr"]
    return total, squares


def _imputed_std(d: DatasetDraws, theta: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """The standard deviation (ddof 0) of λ(ê − θ r̂) over the N rows, from the moments."""
    total, squares = _population_residual(d.pop, theta)
    mean, square = total / d.n_frame, squares / d.n_frame
    return lam * np.sqrt(np.clip(square - mean**2, 0, None))


@dataclass
class Estimates:
    """Per system of one dataset (arrays of length S): the prediction-powered and classical
    estimates with their intervals, λ and the effective number of labels."""

    systems: list[str]
    ppi: np.ndarray
    ppi_low: np.ndarray
    ppi_high: np.ndarray
    classical: np.ndarray
    classical_low: np.ndarray
    classical_high: np.ndarray
    lam: np.ndarray
    n_labelled: np.ndarray
    effective_labels: np.ndarray
    se: np.ndarray
    se_classical: np.ndarray
    boot: np.ndarray | None = None
    boot_classical: np.ndarray | None = None
    unshrunk: np.ndarray | None = None
    prior_weight: np.ndarray | None = None
    tail_seen: np.ndarray | None = None
    tail_widening: np.ndarray | None = None
    tail_counts: tuple[int, int] | None = None


def estimate_draws(
    d: DatasetDraws,
    *,
    method: str = "bootstrap",
    level: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
    floor: bool = True,
    shrink_to_prior: bool = True,
    shared_lambda: bool = False,
) -> Estimates:
    """Both estimates of every system of ``d`` with ``level`` intervals (``method``: see the
    module docstring). The effective labels are m · se²(classical) / se²(PPI): the labels a
    classical estimate would need for the prediction-powered one's precision.

    ``floor``: no interval is narrower than that of errors as independent Poisson counts at
    the estimated rate, se ≥ √(θ̂ / Σ w r) (:func:`poisson_se`). With few labels and rare
    errors (a 2 % WER system, 50 utterances) the draws' own variance is often too small: the
    utterances with many errors were not drawn, and the interval ends below the truth.

    ``shrink_to_prior``: the point estimate leans on the zero-label one where the labels do
    not contradict it (:func:`shrink`); the interval stays the prediction-powered one.
    ``shared_lambda``: one λ for every system (:func:`point_estimates`)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    trusted = d.trusting_tail()
    theta, lam = (v[0] for v in point_estimates(trusted, shared=shared_lambda))
    classical = _theta(d, _moments(d, np.ones((1, d.m))), np.zeros((1, len(d.systems))))[0]
    raw_se, se, se_c, floors, seen = _standard_errors(d, trusted, theta, lam, classical, floor)
    n_labelled = d.n_labelled()
    q = quantile("t" if method == "t" else "normal", level, d.m)
    with np.errstate(divide="ignore", invalid="ignore"):
        tail_widening = q * (se - seen)
        effective = n_labelled * se_c**2 / se**2
    boot = boot_c = None
    low, high = theta - q * se, theta + q * se
    low_c, high_c = classical - q * se_c, classical + q * se_c
    if method == "bootstrap":
        counts = resample_counts(d.m, n_resamples, seed)
        boot = point_estimates(trusted, counts, shared=shared_lambda)[0]
        boot_c = _theta(d, _moments(d, counts), np.zeros_like(boot))
        widen = np.clip(np.nan_to_num(tail_widening), 0.0, None)  # the unseen tail's term
        low, high, low_c, high_c = _percentile_intervals(
            (boot, boot_c), (theta, classical), level, widen, q, floors
        )
    theta, low = np.clip(theta, 0, None), np.clip(low, 0, None)  # a WER is never negative
    unshrunk, weight = theta, np.ones_like(theta)
    if shrink_to_prior and d.prior is not None:
        theta, weight = shrink(theta, raw_se, d.prior, low, high)
    return Estimates(  # in the order of its fields
        *(list(d.systems), theta, low, high, classical, low_c, high_c, lam, n_labelled),
        *(effective, se, se_c, boot, boot_c, unshrunk, 1 - weight, tail_seen(d)),
        tail_widening=np.clip(np.nan_to_num(tail_widening), 0.0, None),
    )


def _standard_errors(d: DatasetDraws, trusted, theta, lam, classical, floor: bool):
    """The linearised se of the prediction-powered estimate (with the unseen tail's term:
    raw, then floored), the classical one's (floored), the Poisson floors (None without
    ``floor``), and the se without the tail's term, floored: what the tail widens."""
    se = raw_se = linearised_se(trusted, theta, lam, extra=unobserved_tail_variance(d))
    se_seen = linearised_se(trusted, theta, lam)  # without the unseen tail's term
    se_c = linearised_se(d, classical, np.zeros_like(lam))
    floors = None
    if floor:
        floors = poisson_se(d, theta), poisson_se(d, classical)
        se, se_c = np.fmax(se, floors[0]), np.fmax(se_c, floors[1])
    return raw_se, se, se_c, floors, np.fmax(se_seen, floors[0] if floor else 0.0)


def _percentile_intervals(resampled, points, level, widen, q, floors):
    """The bootstrap's percentile intervals of the prediction-powered and the classical
    estimates (``resampled``: their resamples), the first widened by the unseen tail's term
    ``widen`` (the resamples of a draw that missed the tail cannot see it either), neither
    narrower than its Poisson floor (``floors``: the two se floors, None for none)."""
    boot, boot_c = resampled
    theta, classical = points
    alpha = (1 - level) / 2
    b_low, b_high = np.nanquantile(boot, [alpha, 1 - alpha], axis=0)
    c_low, c_high = np.nanquantile(boot_c, [alpha, 1 - alpha], axis=0)
    b_low, b_high = b_low - widen, b_high + widen
    if floors is not None:
        floor_ppi, floor_c = floors
        b_low, b_high = (
            np.fmin(b_low, theta - q * floor_ppi),
            np.fmax(b_high, theta + q * floor_ppi),
        )
        c_low, c_high = (
            np.fmin(c_low, classical - q * floor_c),
            np.fmax(c_high, classical + q * floor_c),
        )
    return b_low, b_high, c_low, c_high


#: :func:`shrink` needs at least this many systems to tell how far the prior is off.
SHRINK_MIN_SYSTEMS = 3


def shrink(
    theta: np.ndarray, se: np.ndarray, prior: np.ndarray, low: np.ndarray, high: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Prediction-powered shrinkage across one dataset's systems (in the spirit of Li &
    Ignatiadis, "Prediction-powered adaptive shrinkage", 2025): (estimate, weight on θ̂).

    Each system's prediction-powered θ̂ (standard error se) moves toward its zero-label
    estimate μ by the empirical-Bayes weight ω = τ² / (τ² + se²), where τ² is how far the
    zero-label estimates are off in this dataset, estimated from the labels by the method of
    moments over its systems: τ² = max(0, mean((θ̂ − μ)² − se²)). Where the labels say the
    zero-label estimate is close (τ² small beside se²) the estimate leans on it; where they
    contradict it, on the labels. The result is kept inside the prediction-powered interval
    [low, high], whose coverage does not depend on the point: the interval is unchanged.
    Fewer than :data:`SHRINK_MIN_SYSTEMS` systems with a finite estimate: no shrinkage."""
    ok = np.isfinite(theta) & np.isfinite(se) & np.isfinite(prior)
    weight = np.ones_like(theta)
    if ok.sum() < SHRINK_MIN_SYSTEMS:
        return theta, weight
    dev = theta - prior
    tau2 = max(0.0, float(np.mean(dev[ok] ** 2 - se[ok] ** 2)))
    with np.errstate(divide="ignore", invalid="ignore"):
        weight = np.where(ok, tau2 / (tau2 + se**2), 1.0)
    weight = np.nan_to_num(weight, nan=1.0)
    return np.where(ok, np.clip(prior + weight * dev, low, high), theta), weight


def poisson_se(d: DatasetDraws, theta: np.ndarray) -> np.ndarray:
    """The standard error (S,) of a corpus WER measured on the draws' Σ w r reference words
    if every word's errors were independent Poisson counts, at the larger of the rate θ and
    the predictions' own corpus rate Σ ê / Σ r̂ (draws without an error still say nothing
    against the errors the predictions see): √(rate / Σ w r)."""
    words = (d.weight[:, None] * d.words).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        predicted = d.pop["e"] / d.pop["r"]
        rate = np.fmax(np.clip(theta, 0, None), np.nan_to_num(predicted))
        return np.sqrt(rate / words)


def bootstrap_bytes(m: int, n_systems: int, n_resamples: int) -> int:
    """The peak memory :func:`estimate_draws`' bootstrap allocates for ``m`` draws of
    ``n_systems`` systems: :func:`resample_counts`' drawn indices (int64), their broadcast row
    index and the counts (float64), each (n_resamples, m), then the moments, λ and estimates
    of every resample, about 32 (n_resamples, n_systems) float64 arrays."""
    return int(n_resamples) * (24 * int(m) + 8 * 32 * int(n_systems))


def resample_counts(m: int, n_resamples: int, seed: int) -> np.ndarray:
    """(n_resamples, m) multiplicities of a nonparametric bootstrap over m draws."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, m, size=(n_resamples, m))
    counts = np.zeros((n_resamples, m))
    np.add.at(counts, (np.arange(n_resamples)[:, None], picks), 1.0)
    return counts


def paired_se(d: DatasetDraws, est: Estimates) -> np.ndarray:
    """(S, S) delta-method standard errors of θ̂_a − θ̂_b: the systems' influence terms on the
    same draws are correlated, so the difference is much tighter than either estimate."""
    terms, den = influence_terms(d.trusting_tail(), interval_centre(est), est.lam)
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = np.nan_to_num(terms / den)
    cov = np.atleast_2d(np.cov(scaled.T, ddof=0))
    var = np.diag(cov)[:, None] + np.diag(cov)[None, :] - 2 * cov
    return np.sqrt(np.clip(var, 0, None) / d.m)


def interval_centre(est: Estimates) -> np.ndarray:
    """The unbiased point the intervals are centred on (before :func:`shrink`)."""
    return est.ppi if est.unshrunk is None else est.unshrunk


def quantile(method: str, level: float, m: int) -> float:
    """The two-sided ``level`` multiplier of the ``normal`` or ``t`` (m − 1 df) interval."""
    # scipy.stats' t.ppf and norm.ppf are these functions (the same numbers), without
    # importing scipy.stats (about 0.6 s of a run's start-up)
    if method == "t":
        return float(special.stdtrit(max(m - 1, 1), 0.5 + level / 2))
    return float(special.ndtri(0.5 + level / 2))


def verdict(low: float, high: float) -> str:
    """ "A better" / "B better" where the interval of A − B excludes 0, else "not separable"."""
    return "A better" if high < 0 else "B better" if low > 0 else "not separable"


def paired_differences(
    d: DatasetDraws, est: Estimates, *, level: float = 0.95, method: str = "t"
) -> pd.DataFrame:
    """WER_A − WER_B for every pair of systems of ``d``, on the same labelled draws.

    With bootstrap estimates (``est.boot``), the interval is the percentile interval of the
    paired resamples' differences; else the ``method`` (t or normal) interval of the paired
    influence terms (:func:`paired_se`), centred on the unbiased difference; ``difference`` is
    that of the reported (shrunk) estimates, kept inside it. ``verdict`` says "A better" or
    "B better" only where the interval excludes 0."""
    rows = []
    alpha = (1 - level) / 2
    se = paired_se(d, est)
    q = quantile(method, level, d.m)
    centre = interval_centre(est)
    for a in range(len(d.systems)):
        for b in range(a + 1, len(d.systems)):
            middle = centre[a] - centre[b]
            if est.boot is not None:
                low, high = np.nanquantile(est.boot[:, a] - est.boot[:, b], [alpha, 1 - alpha])
            else:
                low, high = middle - q * se[a, b], middle + q * se[a, b]
            diff = float(np.clip(est.ppi[a] - est.ppi[b], low, high))
            said = verdict(low, high)
            rows.append(
                {
                    "system_a": d.systems[a],
                    "system_b": d.systems[b],
                    "difference": diff,
                    "low": low,
                    "high": high,
                    "verdict": said,
                    "more_labels_to_separate": 0
                    if said != "not separable"
                    else more_labels(d.m, (high - low) / 2, abs(diff)),
                }
            )
    return pd.DataFrame(rows)


def more_labels(m: int, half_width: float, target: float) -> float:
    """The labels beyond ``m`` that would bring an interval's half-width from ``half_width``
    down to ``target``, if it shrinks as 1/√labels (same design, same spread): m·(h/t)² − m,
    rounded up; 0 where it is there already, NaN for a target of 0 (two equal estimates:
    no number of labels is sure to separate them)."""
    if not np.isfinite(half_width) or not target > 0:
        return float("nan")
    return float(max(0, int(np.ceil(m * (half_width / target) ** 2)) - m))
