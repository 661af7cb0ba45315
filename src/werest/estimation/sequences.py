"""Confidence sequences for the mean of bounded terms: pure functions on arrays.

The decision of :mod:`werest.estimation.winner` reads, for each pair of systems (a column),
a sequence of draws (rows): draw t's term x_t lies in [−c_t, c_t] (``bound``, known before
the draw: the design's range of the paired difference, from the hypotheses' edit distances)
and has conditional mean a_t μ + b_t given the past (``slope`` a, ``offset`` b: a = 1, b = 0
for a draw with replacement; the finite-population correction for a draw without
replacement). A person looks after every batch, so every bound here is a *confidence
sequence*: it holds at every time at once, and a user may stop whenever they like.

* :func:`betting_lower_bounds` (the default, ``winner.bounds=betting``): the capital of a
  bettor against "the mean is m", Π (1 + λ_t(m) (x_t − a_t m − b_t)), is a nonnegative
  martingale when m is the truth, so by Ville's inequality it passes 1/α with probability at
  most α; the lower bound is the largest m it has rejected (Waudby-Smith & Ramdas 2024,
  JRSS-B, "Estimating means of bounded random variables by betting", section 4: the
  one-sided hedged capital process). Its bets are predictable: λ̃_t = √(2 log(1/α) /
  (σ̂²_{t−1} n*)), tuned for :data:`HORIZON` draws (the horizon users stop at), truncated
  at h / (c_t + a_t m + b_t) with h = :data:`TRUNCATION` so that a term at the bottom of its
  range costs at most the share h of the capital. Valid in finite samples; a term whose range
  is wide (an utterance where one system hallucinates, reachable by the draw) gets a small
  bet, never an assumption that it is small.
* :func:`eb_lower_bounds` (``winner.bounds=eb``): the predictable plug-in empirical
  Bernstein sequence (their Theorem 2), linear in m (closed form), tuned for every horizon at
  once (t log t): valid, but wider at the 50–300 draws users stop at.
* :func:`asymptotic_bounds` (``winner.bounds=asymptotic``): Waudby-Smith et al.'s asymptotic
  sequence. It assumes the draws have already shown the tail: a few dozen uniform draws that
  miss the 2 % of utterances where one system hallucinates make it stop on the wrong system.
  Kept as an option, never the default.
"""

from __future__ import annotations

import numpy as np

#: the bets' truncation: a term at the bottom of its range costs at most this share of the
#: capital (any value below 1 keeps the process nonnegative, so the sequence valid; WSR and
#: confseq default to 1/2). The draws' known ranges are worst cases: a Horvitz–Thompson term
#: may reach many times the mean distance, and seldom does, so the cap, not the variance,
#: sizes most bets. In ``experiment=winner`` screens 0.8 and then 0.9 reached good with fewer
#: labels than 0.5; with the leader prior's split of α, 0.9, 0.97 and 0.99 are within noise
#: of each other (``experiments/winner_screen.py``; docs/winner.md). A draw at the very bottom
#: of its range keeps 1 % of the capital, which a few draws that confirm the difference win back
TRUNCATION = 0.99
#: the empirical-Bernstein sequence's cap on its bets (on terms scaled to [0, 1]): ψ_E(λ)
#: grows without bound as λ → 1, so it keeps the truncation it was screened with
EB_TRUNCATION = 0.9
#: the betting sequence's bets are tuned for this many draws: its bound is tightest there
#: (valid at every time); users stop between 50 and 300 draws (``experiment=winner``)
HORIZON = 100
#: bisection steps of :func:`betting_lower_bounds` (the bound's error is 2^−steps of the
#: deterministic range, always on the safe side)
BISECTIONS = 32
#: the asymptotic confidence sequence's ρ is tuned for this many draws (its width is
#: smallest there; it is valid at every time)
ASYMPTOTIC_HORIZON = 100
#: the asymptotic confidence sequence says nothing before this many draws (its variance
#: estimate needs them; the central limit theorem it rests on, more)
MIN_DRAWS = 20


def _as_columns(alpha, width: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(alpha, dtype=float), (width,)).copy()


def predictable_bets(x: np.ndarray, bound: np.ndarray, alpha, horizon: int = HORIZON):
    """λ̃_t (T, P) of :func:`betting_lower_bounds`, from the draws before t: the running
    variance of the terms about their running mean, with a prior of (c_1/2)² as one draw
    (the variance of a term spread over its whole range), tuned for ``horizon`` draws."""
    x = np.asarray(x, dtype=float)
    t_count = len(x)
    steps = np.arange(1, t_count + 1)[:, None]
    running_mean = np.cumsum(x, axis=0) / (steps + 1)  # a prior mean of 0 as one draw
    mean_before = np.vstack([np.zeros((1, x.shape[1])), running_mean[:-1]])
    prior = (np.asarray(bound, dtype=float)[:1] / 2) ** 2
    squares = np.cumsum((x - mean_before) ** 2, axis=0)
    var_before = np.vstack([prior, (prior + squares[:-1]) / steps[1:]])
    log_alpha = np.log(1 / _as_columns(alpha, x.shape[1]))
    with np.errstate(divide="ignore"):
        return np.sqrt(2 * log_alpha / (np.maximum(var_before, 1e-300) * horizon))


def _log_capital(m, x, bound, slope, offset, bets, truncation) -> np.ndarray:
    """log Π (1 + λ_t(m)(x_t − a_t m − b_t)) over the rows given (P,); +inf where m is
    impossible (a_t m + b_t below −c_t: a term's mean outside its range)."""
    mean = slope * m + offset
    room = bound + mean
    exact = bound <= 0  # the pair agrees on every utterance this draw can reach: x = 0
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(exact, 0.0, np.minimum(bets, truncation / np.where(room > 0, room, 1)))
        terms = np.log1p(lam * (x - mean))
    impossible = ((room <= 0) & ~exact).any(axis=0)
    return np.where(impossible, np.inf, terms.sum(axis=0))


def betting_lower_bounds(
    x: np.ndarray,
    bound: np.ndarray,
    slope: np.ndarray,
    offset: np.ndarray,
    alpha,
    *,
    lowest: np.ndarray,
    highest: np.ndarray,
    checkpoints=None,
    horizon: int = HORIZON,
    truncation: float = TRUNCATION,
) -> np.ndarray:
    """The one-sided betting lower confidence sequence of the mean μ (module docstring), read
    after each of ``checkpoints`` draws (default: after the last), as a running maximum
    (K, P): each is at least ``lowest`` and at most ``highest`` (P,), the range μ is known to
    lie in without a label. ``alpha``: scalar or (P,). Found by bisection on m (the capital
    decreases in m), so the bound is on the safe side of the exact one."""
    x = np.asarray(x, dtype=float)
    width = x.shape[1]
    lowest = np.asarray(lowest, dtype=float).copy()
    highest = np.asarray(highest, dtype=float)
    checkpoints = [len(x)] if checkpoints is None else list(checkpoints)
    threshold = np.log(1 / _as_columns(alpha, width))
    bets = predictable_bets(x, bound, alpha, horizon)
    out = np.empty((len(checkpoints), width))
    running = lowest
    for k, upto in enumerate(checkpoints):
        rows = (x[:upto], bound[:upto], slope[:upto], offset[:upto], bets[:upto])
        found = _bisect(rows, lowest, highest, threshold, truncation)
        running = np.maximum(running, found)
        out[k] = running
    return out


def _bisect(rows, lowest, highest, threshold, truncation) -> np.ndarray:
    """The largest m in [lowest, highest] the capital rejects (to :data:`BISECTIONS` steps,
    rounded down), ``lowest`` where it rejects none."""
    x, bound, slope, offset, bets = rows
    if not len(x):
        return lowest.copy()

    def rejected(m):
        return _log_capital(m, x, bound, slope, offset, bets, truncation) >= threshold

    low, high = lowest.copy(), highest.copy()
    some = rejected(low)
    every = rejected(high)
    for _ in range(BISECTIONS):
        middle = (low + high) / 2
        hit = rejected(middle)
        low = np.where(hit, middle, low)
        high = np.where(hit, high, middle)
    return np.where(every, highest, np.where(some, low, lowest))


def _psi(lam: np.ndarray) -> np.ndarray:
    """ψ_E(λ) = (−log(1 − λ) − λ) / 4."""
    return (-np.log1p(-lam) - lam) / 4


def eb_lower_bounds(
    x: np.ndarray, bound: np.ndarray, mean_slope: np.ndarray, mean_offset: np.ndarray, alpha
) -> np.ndarray:
    """The predictable plug-in empirical-Bernstein lower confidence sequence (WSR 2024,
    Theorem 2) after each draw (T, P): with terms scaled to X = (x + c)/(2c) in [0, 1],

        Π_t exp(λ_t (X_t − (m_t + c_t)/(2c_t)) − v_t ψ_E(λ_t)),  v_t = 4 (X_t − X̂_{t−1})²,

    is a nonnegative supermartingale under μ, so μ ≥ L_t for every t with probability at
    least 1 − α (Ville). L_t is linear in the log-capital: closed form, no grid. Returns the
    running maximum of L_t (−inf before it can say anything). ``alpha``: scalar or (P,)."""
    x = np.asarray(x, dtype=float)
    c = np.asarray(bound, dtype=float)
    t_count, _ = x.shape
    exact = c <= 0  # the two systems agree on every utterance this draw could hit: x = 0
    c_safe = np.where(exact, 1.0, c)
    scaled = np.where(exact, 0.5, (x + c_safe) / (2 * c_safe))
    # the predictable plug-in bets (WSR eq. 26): μ̂_{t−1}, σ̂²_{t−1} from the draws before t
    steps = np.arange(1, t_count + 1)[:, None]
    cumulative = np.cumsum(scaled, axis=0)
    running_mean = (0.5 + cumulative) / (steps + 1)  # μ̂_t
    squares = np.cumsum((scaled - running_mean) ** 2, axis=0)
    first = np.ones((1, x.shape[1]))
    mean_before = np.vstack([0.5 * first, running_mean[:-1]])
    var_before = np.vstack([0.25 * first, (0.25 + squares[:-1]) / steps[1:]])
    log_alpha = np.log(1 / np.broadcast_to(np.asarray(alpha, dtype=float), x.shape[1:]))
    lam = np.sqrt(2 * log_alpha / (var_before * steps * np.log1p(steps)))
    lam = np.minimum(lam, EB_TRUNCATION)
    lam = np.where(exact, 0.0, lam)
    v = 4 * (scaled - mean_before) ** 2
    # Σ λ (X − (a μ + b + c)/(2c)) − Σ v ψ ≥ log(1/α)  ⇔  μ ≤ L
    slope = np.cumsum(lam * mean_slope / (2 * c_safe), axis=0)
    rest = np.cumsum(lam * (scaled - (mean_offset + c_safe) / (2 * c_safe)) - v * _psi(lam), axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        lower = np.where(slope > 0, (rest - log_alpha) / slope, -np.inf)
    return np.maximum.accumulate(lower, axis=0)


def asymptotic_half_widths(x: np.ndarray, alpha) -> np.ndarray:
    """The half-widths (T, P) of Waudby-Smith et al.'s asymptotic confidence sequence after
    each draw (2024, "Time-uniform central limit theory and asymptotic confidence
    sequences", eq. 13): σ̂_t √(2(tρ² + 1)/(t²ρ²) · log(√(tρ² + 1)/α)), ρ tuned for
    :data:`ASYMPTOTIC_HORIZON` draws. It is Robbins' two-sided normal mixture boundary at
    intrinsic time t σ̂_t², divided by t (``confseq.boundaries.normal_mixture_bound``)."""
    t = np.arange(1, len(x) + 1)[:, None]
    mean = np.cumsum(x, axis=0) / t
    var = np.maximum(np.cumsum(x**2, axis=0) / t - mean**2, 1e-12)
    a = np.broadcast_to(np.asarray(alpha, dtype=float), x.shape[1:])
    rho2 = (-2 * np.log(a) + np.log(-2 * np.log(a) + 1)) / ASYMPTOTIC_HORIZON
    scale = 2 * (t * rho2 + 1) / (t**2 * rho2)
    return np.sqrt(var) * np.sqrt(scale * np.log(np.sqrt(t * rho2 + 1) / a))


def asymptotic_bounds(x: np.ndarray, alpha) -> tuple[np.ndarray, np.ndarray]:
    """The asymptotic confidence sequence's running intersection after all T draws (P,):
    nothing before :data:`MIN_DRAWS` draws. Two-sided at ``alpha``."""
    t = np.arange(1, len(x) + 1)[:, None]
    mean = np.cumsum(x, axis=0) / t
    half = asymptotic_half_widths(x, alpha)
    low = np.where(t >= MIN_DRAWS, mean - half, -np.inf)
    high = np.where(t >= MIN_DRAWS, mean + half, np.inf)
    return np.maximum.accumulate(low, axis=0)[-1], np.minimum.accumulate(high, axis=0)[-1]
