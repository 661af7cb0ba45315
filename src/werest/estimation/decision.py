"""The decision of the label loop (ε-good best-arm identification, LUCB, one-sided): per
pair (leader, rival), the draws' Horvitz–Thompson terms (:func:`pair_terms`), their
confidence sequences (:mod:`werest.estimation.sequences`) kept inside what the labels and
distances already fix (:func:`known_ranges`), and the status, certificate and forecast
(:func:`decide`). See :mod:`werest.estimation.winner` for the whole argument."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from werest.estimation.contest import WITH_REPLACEMENT, Batch, Contest
from werest.estimation.sequences import (
    asymptotic_bounds,
    betting_lower_bounds,
    eb_lower_bounds,
)
from werest.estimation.settings import ALPHA, CONTROL, WinnerSettings
from werest.estimation.status import DECIDED, GOOD, UNDECIDED

#: the most of each draw's reach the betting sequence folds into its term. A draw's term
#: x = (e_A − e_B) / (N q_i) lies in [−r, r], r = d_i / (N q_i) its reach, known before the
#: label; x + θ r lies above −(1 − θ) c (c: the batch's widest reach), the floor that caps
#: the bets, and its mean is a μ + b + θ r̄ (r̄: the reach's mean over the utterances not
#: labelled, known), so the bound on μ is unchanged in kind and the sequence stays valid
#: for any θ fixed before the draw. Its spread grows by up to θ times the reach's. Where the
#: design does not follow a pair (a system far worse than the leader, with large distances
#: on utterances the draw seldom reaches), c is many times any spread the terms can have and
#: the cap, not the variance, sizes the bets: folding lifts the cap and costs little. Where
#: it follows the pair, r is nearly constant and c is near its spread: no fold
#: (:func:`fold_share`). Screened on the shared data's users (docs/winner.md)
FOLD = 0.6
#: the fold's threshold κ (:func:`fold_share`)
FOLD_RATIO = 3.0


def fold_share(widest: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """θ (P,) of a batch: 1 − κ ρ / c within [0, :data:`FOLD`], from the pair's widest reach
    c and the root mean square ρ of its reach under the batch's design (the most a term's
    spread can be): 0 until c passes κ ρ (:data:`FOLD_RATIO`). Label-free, so fixed before
    the batch's draws."""
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(widest > 0, 1 - FOLD_RATIO * spread / widest, 0.0)
    return np.clip(np.nan_to_num(share), 0.0, FOLD)


#: printed under a decision read with ``winner.bounds=asymptotic``
ASYMPTOTIC_CAVEAT = (
    "winner.bounds=asymptotic assumes the draws have already seen the tail: where a system "
    "hallucinates on a few utterances no draw reached, it can stop on the wrong system "
    "(the default, betting, cannot)"
)


def caveats(settings: WinnerSettings) -> list[str]:
    """The notes a decision read with ``settings`` prints under itself."""
    return [ASYMPTOTIC_CAVEAT] if settings.bounds == "asymptotic" else []


@dataclass
class PairTerms:
    """The draws' terms for pairs (A_k, B_k): x (T, P) = e_A − e_B on each draw's utterance
    weighted as the design says, c (T, P) their bounds, the mean's slope a and offset b
    (T, P) (:mod:`werest.estimation.sequences`); ``fold`` (T, P) the share θ of its reach
    each draw folds in (:func:`fold_share`), ``reach`` (T, P) θ r (r: the bound |x| ≤ r of
    the draw's own term, its pair's distance weighted as x is; 0 where x is) and
    ``reach_mean`` (T, P) θ r's conditional mean, in the units of a μ + b (:data:`FOLD`); and
    ``ends``: the draws counted at the end of each batch (where a user looks)."""

    x: np.ndarray
    c: np.ndarray
    slope: np.ndarray
    offset: np.ndarray
    reach: np.ndarray
    reach_mean: np.ndarray
    fold: np.ndarray
    ends: list[int] = field(default_factory=list)


def pair_terms(
    contest: Contest,
    batches: list[Batch],
    errors: np.ndarray,
    pairs: list[tuple[int, int]],
    *,
    control: bool = True,
    memo: dict | None = None,
) -> PairTerms:
    """The terms of every draw of ``batches`` (in order) for ``pairs`` of system positions.
    ``errors``: (N, S) true errors, read only at drawn utterances (NaN elsewhere is fine).

    With ``control`` (a control variate, Zrnic & Candès 2024), each term is that of
    x_i − β g_i, g the pair's :meth:`Contest.consensus_gap` (known on every utterance, its
    mean ḡ exactly), and the term's mean is shifted by β ḡ: unbiased whatever g is. β is
    predictable: the least-squares slope of x on g over the draws of earlier batches, in
    [0, 1] (0 before any), so a guess that does not follow the truth costs nothing but the
    range, (d_i + β |g_i|) where it was d_i.

    A fresh uniform draw of an utterance labelled before adds nothing (a draw without
    replacement never repeats; one of a sample drawn from every utterance that hits a
    labelled one is rejected, which leaves the others uniform over the unlabelled); its
    bound is the largest range over the utterances not labelled when its batch began.

    ``memo`` (a simulated user's, as :func:`pair_bounds`'s) keeps each pair set's terms after
    the batches seen: a batch's terms never change once drawn, so a call whose ``batches``
    begin with those (the same objects, on the same contest and errors) computes only the
    batches after them."""
    key = ("terms", tuple(pairs), control)
    kept = memo.get(key) if memo is not None else None
    if kept is None or not kept.continues(contest, batches, errors):
        kept = _KeptTerms(contest, errors, pairs, control)
        if memo is not None:
            memo[key] = kept
    for batch in batches[len(kept.batches) :]:
        kept.add(batch)
    return kept.terms()


class _KeptTerms:
    """:func:`pair_terms`' work on one pair set: the batches' terms so far, and the state
    (:class:`_TermState`) the next batch's terms start from."""

    def __init__(self, contest: Contest, errors: np.ndarray, pairs, control: bool) -> None:
        self.contest, self.errors = contest, errors
        self.a_idx = np.array([a for a, _ in pairs], dtype=int)
        self.b_idx = np.array([b for _, b in pairs], dtype=int)
        self.distances = np.column_stack([contest.distance(*pair) for pair in pairs])  # (N, P)
        self.gaps = (
            np.column_stack([contest.consensus_gap(*pair) for pair in pairs])
            if control
            else np.zeros_like(self.distances)
        )
        self.state = _TermState(contest.n, len(pairs), self.gaps.sum(axis=0))
        self.batches: list[Batch] = []
        self.parts: list[tuple] = []
        self.ends: list[int] = []

    def continues(self, contest: Contest, batches: list[Batch], errors: np.ndarray) -> bool:
        """Whether ``batches`` begin with the batches kept, on the same contest and errors."""
        done = self.batches
        return (
            contest is self.contest
            and errors is self.errors
            and len(batches) >= len(done)
            and all(a is b for a, b in zip(batches, done, strict=False))
        )

    def add(self, batch: Batch) -> None:
        """The terms of the next batch, and the state after it."""
        state, gaps, errors = self.state, self.gaps, self.errors
        a_idx, b_idx = self.a_idx, self.b_idx
        fit = state.fit_xg, state.fit_gg
        beta = np.clip(np.divide(fit[0], fit[1], out=np.zeros_like(fit[0]), where=fit[1] > 0), 0, 1)
        pos = np.asarray(batch.positions, dtype=int)
        diff = errors[pos][:, a_idx] - errors[pos][:, b_idx]  # (m, P)
        first = _first_labels(pos, state.labelled)
        reach = self.distances + beta * np.abs(gaps)  # (N, P): |x − β g| ≤ d + β |g|
        if batch.kind == WITH_REPLACEMENT:
            part = _drawn_terms(state, batch, pos, diff, gaps[pos], first, reach, beta)
        else:
            part = _fresh_terms(state, pos, diff, gaps[pos], first, reach, beta)
        self.parts.append(part)
        self.ends.append(state.count)
        self.batches.append(batch)
        state.labelled_x = state.labelled_x + diff[first].sum(axis=0)
        state.labelled_g = state.labelled_g + gaps[pos][first].sum(axis=0)
        state.labelled[pos] = True

    def terms(self) -> PairTerms:
        if not self.parts:
            empty = np.zeros((0, len(self.a_idx)))
            return PairTerms(empty, empty, empty, empty, empty, empty, empty, [])
        stacked = (np.vstack(v) for v in zip(*self.parts, strict=True))
        return PairTerms(*stacked, list(self.ends))


@dataclass
class _TermState:
    """What :func:`pair_terms` carries from batch to batch: the utterances labelled, their
    differences' and gaps' sums (P,), the control variate's running fit, the draws so far."""

    n: int
    p: int
    gap_total: np.ndarray
    labelled: np.ndarray = field(init=False)
    labelled_x: np.ndarray = field(init=False)
    labelled_g: np.ndarray = field(init=False)
    fit_xg: np.ndarray = field(init=False)
    fit_gg: np.ndarray = field(init=False)
    count: int = 0

    def __post_init__(self) -> None:
        self.labelled = np.zeros(self.n, dtype=bool)
        self.labelled_x, self.labelled_g = np.zeros(self.p), np.zeros(self.p)
        self.fit_xg, self.fit_gg = np.zeros(self.p), np.zeros(self.p)


def _drawn_terms(state: _TermState, batch: Batch, pos, diff, guess, first, reach, beta):
    """A with-replacement batch's (x, c, slope, offset, reach, reach_mean, fold)
    (:class:`PairTerms`): the labelled utterances' part of the mean is known, so each draw's
    term is its utterance's HT term if no earlier draw labelled it, else 0, and its mean the
    unlabelled part, μ − (known part)/N; its range, the largest over the utterances not
    labelled when the batch began."""
    n = state.n
    weight = 1.0 / (n * batch.probabilities[pos])
    zero = np.zeros((1, state.p))
    known_z = (state.labelled_x - beta * state.labelled_g) + _sums_before(
        (diff - beta * guess) * first[:, None]
    )
    x = (diff - beta * guess) * (weight * first)[:, None]
    scale = np.divide(1.0, n * batch.probabilities, out=np.zeros(n), where=batch.probabilities > 0)
    open_ = ~state.labelled
    open_reach = reach[open_]
    unlabelled = open_reach * scale[open_, None]
    widest = unlabelled.max(axis=0) if len(unlabelled) else zero[0]
    c = np.repeat(widest[None, :], len(pos), axis=0)
    offset = -(beta * state.gap_total + known_z) / n
    theta = fold_share(
        widest, np.sqrt(((unlabelled**2) * batch.probabilities[open_, None]).sum(axis=0))
    )
    drawn_reach = theta * reach[pos] * (weight * first)[:, None]
    left_reach = theta * (open_reach.sum(axis=0) - _sums_before(reach[pos] * first[:, None]))
    state.fit_xg += (diff * guess * weight[:, None] ** 2).sum(axis=0)
    state.fit_gg += (guess**2 * weight[:, None] ** 2).sum(axis=0)
    state.count += len(pos)
    return (
        x,
        c,
        np.ones_like(diff),
        offset,
        drawn_reach,
        left_reach / n,
        np.broadcast_to(theta, x.shape),
    )


def _fresh_terms(state: _TermState, pos, diff, guess, first, reach, beta):
    """A fresh uniform batch's (x, c, slope, offset, reach, reach_mean, fold)
    (:class:`PairTerms`): each first label is a draw without replacement from the utterances
    not labelled before it, its mean conditional on them."""
    n = state.n
    fresh, fresh_g = diff[first], guess[first]
    before = state.labelled.sum() + np.arange(len(fresh))  # labelled before each draw
    zero = np.zeros((1, state.p))
    sums_x = state.labelled_x + _sums_before(fresh)
    sums_g = state.labelled_g + _sums_before(fresh_g)
    left = (n - before)[:, None]
    open_reach = reach[~state.labelled]
    unlabelled = open_reach.max(axis=0) if len(open_reach) else zero[0]
    c = np.repeat(unlabelled[None, :], len(fresh), axis=0)
    slope = np.broadcast_to(n / left, fresh.shape)
    offset = -(sums_x + beta * (state.gap_total - sums_g)) / left
    theta = fold_share(
        unlabelled, np.sqrt((open_reach**2).mean(axis=0)) if len(open_reach) else zero[0]
    )
    fresh_reach = theta * reach[pos][first]
    left_reach = theta * open_reach.sum(axis=0) - _sums_before(fresh_reach)
    state.fit_xg += (fresh * fresh_g).sum(axis=0)
    state.fit_gg += (fresh_g**2).sum(axis=0)
    state.count += len(fresh)
    return (
        fresh - beta * fresh_g,
        c,
        slope,
        offset,
        fresh_reach,
        left_reach / left,
        np.broadcast_to(theta, fresh.shape),
    )


def _sums_before(rows: np.ndarray) -> np.ndarray:
    """Each row's sum of the rows before it (m, P): 0 for the first."""
    zero = np.zeros((1, rows.shape[1]))
    return np.vstack([zero, np.cumsum(rows, axis=0)[:-1]])


def _first_labels(positions: np.ndarray, labelled: np.ndarray) -> np.ndarray:
    """Which draws label an utterance for the first time (not labelled before, nor by an
    earlier draw of the same batch)."""
    _, first = np.unique(positions, return_index=True)
    mask = np.zeros(len(positions), dtype=bool)
    mask[first] = True
    return mask & ~labelled[positions]


def known_ranges(
    contest: Contest, pairs: list[tuple[int, int]], errors: np.ndarray, labelled: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """What each pair's mean difference μ = mean_i (e_A − e_B) is known to lie in without any
    further label (P,): the labelled utterances' exact differences, and ±d_i(A, B) on every
    utterance not labelled (|e_A − e_B| ≤ d_i). Exact once every utterance is labelled; [0,
    0] for two systems whose outputs are the same everywhere."""
    lowest, highest = [], []
    for a, b in pairs:
        d = contest.distance(a, b)
        known = (errors[labelled, a] - errors[labelled, b]).sum()
        unknown = d[~labelled].sum()
        lowest.append((known - unknown) / contest.n)
        highest.append((known + unknown) / contest.n)
    return np.array(lowest), np.array(highest)


def pair_bounds(
    terms: PairTerms,
    alpha: np.ndarray,
    bounds: str = "betting",
    *,
    lowest: np.ndarray,
    highest: np.ndarray,
    memo: dict | None = None,
    keys: list | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The lower and upper confidence-sequence bounds (P,) of each pair's mean difference
    (errors per utterance) after all the draws, each side at its pair's ``alpha``, within
    the ranges known without a label (:func:`known_ranges`). ``memo`` (the simulation's, one
    per user) keeps each pair's betting bound at each batch's end, keyed by ``keys``: the
    earlier batches' draws never change."""
    if not len(terms.x):
        return lowest.copy(), highest.copy()
    if bounds == "asymptotic":
        unbiased = (terms.x - terms.offset) / terms.slope  # each term's mean: μ
        low, high = asymptotic_bounds(unbiased, np.asarray(alpha))  # two-sided at α
    elif bounds == "eb":
        low = eb_lower_bounds(terms.x, terms.c, terms.slope, terms.offset, alpha)[-1]
        high = -eb_lower_bounds(-terms.x, terms.c, terms.slope, -terms.offset, alpha)[-1]
    else:
        low = _betting(terms, alpha, lowest, highest, memo, keys, side=1)
        high = -_betting(terms, alpha, -highest, -lowest, memo, keys, side=-1)
    return np.clip(low, lowest, highest), np.clip(high, lowest, highest)


def _betting(terms: PairTerms, alpha, lowest, highest, memo, keys, side: int) -> np.ndarray:
    """:func:`betting_lower_bounds` of ``side`` · x + θ r (each draw's reach folded in:
    :data:`FOLD`), read at every batch's end (a running maximum), the batches already read
    taken from ``memo``."""
    x = side * terms.x + terms.reach
    offset = side * terms.offset + terms.reach_mean
    alpha = np.broadcast_to(np.asarray(alpha, dtype=float), (x.shape[1],))
    if memo is None:  # nothing kept: every batch's end read now
        memo, keys = {}, list(range(x.shape[1]))
    out = np.array(lowest, dtype=float)
    ends = terms.ends
    columns = [(side, keys[p], float(alpha[p])) for p in range(x.shape[1])]
    known = [memo.get(column, []) for column in columns]
    start = min(len(k) for k in known)
    if start < len(ends):
        fresh = betting_lower_bounds(
            x,
            (1 - terms.fold) * terms.c,
            terms.slope,
            offset,
            alpha,
            lowest=lowest,
            highest=highest,
            checkpoints=ends[start:],
        )
        for p, column in enumerate(columns):
            memo[column] = known[p][:start] + list(fresh[:, p])
            known[p] = memo[column]
    for p in range(x.shape[1]):
        out[p] = max(out[p], max(known[p][: len(ends)], default=-np.inf))
    return out


def point_differences(terms: PairTerms) -> np.ndarray:
    """Each pair's mean difference per utterance, estimated from the draws (P,): the mean of
    (x_t − b_t) / a_t, each unbiased for μ given the draws before it."""
    if not len(terms.x):
        return np.zeros(terms.x.shape[1])
    return ((terms.x - terms.offset) / terms.slope).mean(axis=0)


def leader_prior(contest: Contest) -> np.ndarray:
    """π (S,): how much of α a claim about each system as the leader may spend, fixed before
    any label. Harmonic in the zero-label order (the system estimated lowest 1, the next 1/2,
    ..., a system without an estimate last; ties in the systems' order), normalised to sum 1;
    uniform where no system has a zero-label estimate (``labels_only``)."""
    s_count = len(contest.systems)
    guess = np.array([contest.zero_label.get(s, np.nan) for s in contest.systems], dtype=float)
    if not np.isfinite(guess).any():
        return np.full(s_count, 1.0 / s_count)
    order = np.argsort(np.where(np.isfinite(guess), guess, np.inf), kind="stable")
    rank = np.empty(s_count)
    rank[order] = np.arange(1, s_count + 1)
    return (1 / rank) / (1 / rank).sum()


def pair_alpha(contest: Contest, w: int, others: list[int], alpha: float = ALPHA) -> np.ndarray:
    """The α of each lower bound on (e_B − e_W), B in ``others``, with W the leader: a
    weighted Bonferroni split (Genovese, Roeder & Wasserman 2006) over the claims a stop can
    make. A stop that names W is wrong only if the bound on (e_B* − e_W) fails for the true
    best B*, so the guarantee needs, for each possible true best B, the bounds on (e_B − e_W)
    over every leader W to hold together: their α must sum to at most α. Each gets
    α π_W / Σ_{L ≠ B} π_L (:func:`leader_prior`), which sums to exactly α over W for every B.
    A claim about a system the zero-label estimates rank first spends the most α, one about a
    system they rank last the least; the guarantee holds whatever the ranking, and whichever
    system the labels make the leader."""
    prior = leader_prior(contest)
    return np.array([alpha * prior[w] / (prior.sum() - prior[b]) for b in others])


@dataclass
class Decision:
    """One dataset's entry of ``winner.json`` (differences in WER points).

    ``status``: :data:`DECIDED` (every other system shown worse than the leader), :data:`GOOD`
    (every other system shown no better than the leader by more than ``margin``: the leader
    is the best or at most ``margin`` worse) or :data:`UNDECIDED`. ``regret_bound``: the
    largest upper bound over the rivals on (e_leader − e_rival), floored at 0: the leader is
    at most this many points worse than the best (at level 1 − α, at any stopping time).
    ``may_be_best``: the leader and the systems not shown worse than it. ``runner_up``: the
    rival that sets ``regret_bound``, with its ``difference`` over the leader and interval
    ``low``/``high`` (the difference always inside it). ``exact``: every utterance is
    labelled, so the differences are known."""

    dataset: str
    status: str
    leader: str
    winner: str | None
    contenders: list[str]
    may_be_best: list[str]
    runner_up: str | None
    difference: float
    low: float
    high: float
    regret_bound: float
    margin: float
    labels_used: int
    draws: int
    labels_to_go: int | None
    exact: bool = False
    open: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items()}
        for key in ("difference", "low", "high", "regret_bound", "margin"):
            value = out[key]
            out[key] = None if value is None or not np.isfinite(value) else round(value, 4)
        return out


def system_estimates(contest: Contest, batches: list[Batch], errors: np.ndarray) -> np.ndarray:
    """Each system's mean errors per utterance from the draws (S,): the leader's choice.
    Before any draw, the zero-label estimates (scaled by r̄), NaN where there is none."""
    if not any(len(b.positions) for b in batches):
        return np.array(
            [contest.zero_label.get(s, np.nan) * contest.words for s in contest.systems]
        )
    n = contest.n
    parts = []
    for batch in batches:
        pos = np.asarray(batch.positions, dtype=int)
        if batch.kind == WITH_REPLACEMENT:
            parts.append(errors[pos] / (n * batch.probabilities[pos])[:, None])
        else:
            parts.append(errors[pos])
    return np.vstack(parts).mean(axis=0)


#: the leader is read among this many of the systems the labels estimate lowest
#: (:func:`decide`): each costs a reading of its bounds, none costs α
LEADER_CANDIDATES = 3


def leader_of(contest: Contest, estimates: np.ndarray, labelled: bool) -> int:
    """The leader: before any label, the contender with the lowest zero-label estimate; with
    labels, the system (any, a contender or not) the labels estimate lowest. Ties: the first."""
    pool = list(range(len(contest.systems)))
    if not labelled and contest.contenders:
        pool = [contest.index(s) for s in contest.contenders]
    values = np.array([estimates[i] if np.isfinite(estimates[i]) else np.inf for i in pool])
    return pool[int(np.argmin(values))]


def decide(
    contest: Contest,
    batches: list[Batch],
    errors: np.ndarray,
    settings: WinnerSettings | None = None,
    *,
    memo: dict | None = None,
) -> Decision:
    """The decision after ``batches`` (see the module docstring), with the margin, α and
    bounds of ``settings`` (:class:`WinnerSettings`, or anything with its fields: the
    experiment's). ``errors`` (N, S): the true errors of every system, read only at the
    labelled utterances. ``memo``: see :func:`pair_bounds`.

    The leader is, of the :data:`LEADER_CANDIDATES` systems the labels estimate lowest, the
    one with the strongest certificate (a status of ``decided``, then ``good``, then the
    smallest ``regret_bound``; the lowest estimate where they are equal). The bounds of
    every leader hold together (:func:`pair_alpha`), so reading several costs no α."""
    settings = settings or WinnerSettings()
    draws = sum(len(b.positions) for b in batches)
    labelled = np.zeros(contest.n, dtype=bool)
    for batch in batches:
        labelled[np.asarray(batch.positions, dtype=int)] = True
    exact = bool(labelled.all())
    estimates = errors.mean(axis=0) if exact else system_estimates(contest, batches, errors)
    candidates = [leader_of(contest, estimates, draws > 0)]
    if draws and not exact:
        lowest_first = np.argsort(np.nan_to_num(estimates, nan=np.inf), kind="stable")
        candidates += [int(i) for i in lowest_first if i != candidates[0]]
        candidates = candidates[:LEADER_CANDIDATES]
    readings = [
        _read_leader(contest, batches, errors, settings, w, (estimates, labelled, exact), memo)
        for w in candidates
    ]
    status, w, others, bounds = min(readings, key=lambda r: (STATUS_ORDER[r[0]], -r[3][0].min()))
    return _decision(contest, status, w, others, bounds, labelled, draws, exact)


#: the statuses, strongest first (:func:`decide` picks the leader with the strongest)
STATUS_ORDER = {DECIDED: 0, GOOD: 1, UNDECIDED: 2}


def _read_leader(contest, batches, errors, settings, w, state, memo) -> tuple:
    """The status of leader ``w`` and its bounds against every other system (:func:`decide`):
    ``state`` is the systems' estimates, the utterances labelled and whether that is all."""
    estimates, labelled, exact = state
    draws = sum(len(b.positions) for b in batches)
    others = [b for b in range(len(contest.systems)) if b != w]
    pairs = [(b, w) for b in others]  # B − W: positive when B is worse
    control = getattr(settings, "control", CONTROL)
    terms = pair_terms(contest, batches, errors, pairs, control=control, memo=memo)
    lowest, highest = known_ranges(contest, pairs, errors, labelled)
    if exact:  # every utterance labelled: the differences are known
        lower, upper, point = lowest, highest, lowest
    else:
        alphas = pair_alpha(contest, w, others, settings.alpha)
        lower, upper = pair_bounds(
            terms, alphas, settings.bounds, lowest=lowest, highest=highest, memo=memo, keys=pairs
        )
        point = point_differences(terms) if draws else estimates[others] - estimates[w]
        point = np.clip(np.nan_to_num(point, nan=0.0), lower, upper)  # inside its interval
    leader_wer = contest.points(estimates[w]) if np.isfinite(estimates[w]) else 0.0
    margin_points = settings.margin_points(leader_wer)
    margin = margin_points / 100 * contest.words
    status = DECIDED if (lower > 0).all() else GOOD if (lower > -margin).all() else UNDECIDED
    return status, w, others, (lower, upper, point, margin, margin_points)


def _decision(contest, status, w, others, bounds, labelled, draws, exact) -> Decision:
    """The :class:`Decision` of leader ``w`` against ``others`` from each pair's ``bounds``
    (lower, upper, point, margin in errors per utterance, margin in points)."""
    lower, upper, point, margin, margin_points = bounds
    worse = lower > 0
    # the runner-up: the rival whose bound sets regret_bound, then the closest by estimate
    k = int(np.lexsort((point, lower))[0])
    n_labelled = int(labelled.sum())
    return Decision(
        dataset=contest.dataset,
        status=status,
        leader=contest.systems[w],
        winner=contest.systems[w] if status != UNDECIDED else None,
        contenders=list(contest.contenders),
        may_be_best=[contest.systems[w]]
        + [contest.systems[b] for b, ok in zip(others, worse, strict=True) if not ok],
        runner_up=contest.systems[others[k]],
        difference=contest.points(point[k]),
        low=contest.points(lower[k]),
        high=contest.points(upper[k]),
        regret_bound=max(0.0, contest.points(-float(lower.min()))),
        margin=margin_points,
        labels_used=n_labelled,
        draws=draws,
        labels_to_go=None
        if status != UNDECIDED
        else labels_to_go(lower, point, margin, draws, n_labelled, contest.n),
        exact=exact,
        open=[contest.systems[b] for b, low in zip(others, lower, strict=True) if low <= -margin],
    )


def labels_to_go(lower, point, margin, draws: int, labelled: int, n: int) -> int | None:
    """A rough forecast of the further labels until ``good``: each open rival's bound must
    rise above −margin, so its distance below the estimate must shrink to (estimate +
    margin). With bets capped by the draws' known ranges the distance shrinks about as 1/t
    over the horizon users stop at (the 1/√t of a spread-limited bound forecast about 3×
    too many: ``experiment=winner`` checks it), so the draws needed grow as that ratio,
    scaled by labels per draw so far. Never more than the utterances not yet labelled
    (labelling them all makes the answer exact); None before any draw."""
    if not draws:
        return None
    left = n - labelled
    half = point - lower
    room = point + margin
    blocking = lower <= -margin
    if (blocking & (room <= 0)).any():
        return left
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(blocking, half / np.where(room > 0, room, 1), 0.0)
    more_draws = max(0.0, draws * float(ratio.max()) - draws)
    return min(left, max(1, math.ceil(more_draws * labelled / draws)))
