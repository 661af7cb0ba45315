"""Which system is best: a zero-label shortlist, then a decision from the fewest labels.

Agreement cannot tell an outlier winner from an outlier loser, so with no label werest names
*contenders* (:func:`shortlist`): the systems that may be the best, by a rule calibrated leave
one domain out (``werest evaluate experiment=winner``). Labels then decide, and the design
does most of the work (docs/winner.md):

* One reference scores every system, so differences are paired: per utterance,
  x_i = e_A,i − e_B,i (word errors, or characters where the dataset is scored by character).
* |x_i| ≤ d_i(A, B), the edit distance between the two hypotheses (the triangle inequality),
  known without a label. Where A and B agree the difference is exactly 0.
* ``werest sample strategy=winner`` draws utterances with replacement with probability
  q_i = u/N + (1 − u) s_i / Σ s, s_i the largest distance of the current leader to an open
  contender (each pair's distances scaled to mean 1). A draw's Horvitz–Thompson term
  x_i / (N q_i) is unbiased for the mean difference and bounded by max_i d_i / (N q_i),
  which the design keeps small; every weight 1 / (N q_i) is at most 1 / u.
* A person looks after every batch, so every bound is a confidence sequence, valid at any
  stopping time and in finite samples (:mod:`werest.estimation.sequences`: by default the
  betting sequence of Waudby-Smith & Ramdas 2024, its bets sized by each draw's known range).
  Draws made uniformly from the utterances not yet labelled (``strategy=random``) use the
  exact conditional mean of sampling without replacement. Every bound also stays inside what
  is known without a label: the labelled differences exactly, ±d_i on the rest
  (:func:`known_ranges`), so an utterance no draw has reached is never assumed small.

The decision (:func:`decide`), at level 1 − α, is ε-good best-arm identification (LUCB,
Kalyanakrishnan et al. 2012), one-sided: the leader W is ``decided`` when every other system
is shown worse than W, and ``good`` when every other system is shown no better than W by more
than the margin (the larger of ``winner.margin`` points and ``winner.relative_margin`` of W's
WER). Each round it reports ``regret_bound``, the largest upper bound on (e_W − e_B) over the
rivals: W is at most that much worse than the best. Bonferroni over the pairs that contain
the true best (whichever it is): contender pairs share α/2, pairs with a non-contender α/2
over S − 1, so a stop names a system more than the margin worse than the true best, and a
``regret_bound`` is exceeded, with probability at most α, however the user stops. The
contenders only steer the draws and the split of α.
"""

from __future__ import annotations

import hashlib
import logging
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from werest.estimation import sequences  # noqa: F401 (the module, for the tests)
from werest.estimation.sequences import (  # noqa: F401 (re-exported)
    HORIZON,
    TRUNCATION,
    asymptotic_bounds,
    asymptotic_half_widths,
    betting_lower_bounds,
    eb_lower_bounds,
)
from werest.estimation.shortlist import SHORTLIST_SHARE, shortlist  # noqa: F401 (re-exported)

log = logging.getLogger(__name__)

#: The decision's error level: at most this share of stops name a system more than the
#: margin worse than the true best.
ALPHA = 0.05
#: ``good``: the leader is at most this many points of WER worse than the best, or
#: :data:`RELATIVE_MARGIN` of its WER where that is larger
MARGIN = 1.0
RELATIVE_MARGIN = 0.05
#: ``strategy=winner``: the share of each draw's probability spread evenly over the
#: utterances: every weight 1 / (N q_i) is at most 1 / u.
WINNER_UNIFORM_SHARE = 0.2
#: The statuses of a dataset's decision.
DECIDED, GOOD, UNDECIDED = "decided", "good", "undecided"
#: How a sheet's draws were made, as the decision reads them.
WITH_REPLACEMENT, FRESH_UNIFORM = "with_replacement", "fresh_uniform"


# --------------------------------------------------------------------------- the contest


@dataclass
class Contest:
    """One dataset's systems on its utterances: what the decision needs besides the labels.

    Attributes
    ----------
    dataset : its name.
    utterances : the N utterance ids, sorted.
    systems : the S systems.
    codes : (N, S) integer codes of each system's normalised hypothesis into ``texts``
        (a missing hypothesis is the empty text).
    texts : the distinct normalised hypotheses.
    unit : ``word`` or ``char``: what an error counts.
    words : r̄, the mean reference length the differences are expressed against: the mean
        over utterances of the median hypothesis length over systems (a label-free stand-in
        for the reference's; it scales the points, never the sign of a difference).
    contenders : the zero-label shortlist (a subset of ``systems``).
    zero_label : each system's zero-label estimate (a fraction), for the first leader.
    """

    dataset: str
    utterances: pd.Index
    systems: list[str]
    codes: np.ndarray
    texts: np.ndarray
    unit: str = "word"
    words: float = 1.0
    contenders: list[str] = field(default_factory=list)
    zero_label: dict[str, float] = field(default_factory=dict)
    _distances: dict = field(default_factory=dict, repr=False)
    #: where its distances are kept by content (:mod:`werest.estimation.contest_store`), and
    #: its number there
    store: Path | None = field(default=None, repr=False)
    number: int = field(default=0, repr=False)

    @property
    def n(self) -> int:
        return len(self.utterances)

    def index(self, system: str) -> int:
        return self.systems.index(system)

    def distance(self, a: int, b: int) -> np.ndarray:
        """d_i(A, B) on every utterance (N,), computed once per pair."""
        key = (min(a, b), max(a, b))
        if key not in self._distances:
            from werest.estimation import contest_store
            from werest.text import encoded_distances

            path = contest_store.distance_file(self.store, self.number, key)
            stored = contest_store.read_distances(path, self.n)
            if stored is not None:  # an earlier process of the label loop aligned them
                self._distances[key] = stored
                return stored
            self._distances[key] = encoded_distances(
                self._encoded(), self.codes[:, key[0]], self.codes[:, key[1]]
            ).astype(float)
            contest_store.write_distances(path, self._distances[key])
        return self._distances[key]

    def _encoded(self) -> list:
        if "encoded" not in self._distances:  # each text encoded once, kept by content too
            from werest.estimation import contest_store

            self._distances["encoded"] = contest_store.encoded(
                self.store, self.number, self.texts, self.unit
            )
        return self._distances["encoded"]

    def consensus_gap(self, a: int, b: int) -> np.ndarray:
        """g_i = d_i(A, P) − d_i(B, P) on every utterance (N,), P the consensus: the
        hypothesis most systems gave (ties: the first text). A label-free guess of e_A − e_B
        (exact where the consensus is the reference), |g_i| ≤ d_i(A, B); the decision's
        control variate."""
        from werest.text import encoded_distances

        if "consensus" not in self._distances:
            self._distances["consensus"] = consensus_codes(self.codes)
        consensus = self._distances["consensus"]
        for s in (a, b):
            if ("to_consensus", s) not in self._distances:
                self._distances[("to_consensus", s)] = encoded_distances(
                    self._encoded(), self.codes[:, s], consensus
                ).astype(float)
        return self._distances[("to_consensus", a)] - self._distances[("to_consensus", b)]

    @property
    def disputed(self) -> np.ndarray:
        """Where at least two systems' hypotheses differ (N,)."""
        return (self.codes != self.codes[:, :1]).any(axis=1)

    def points(self, words_per_utterance: float) -> float:
        """A mean difference in errors per utterance, in WER points."""
        return 100.0 * words_per_utterance / self.words


def consensus_codes(codes: np.ndarray) -> np.ndarray:
    """Per row of ``codes`` (N, S), the code most columns hold (ties: the lowest code)."""
    ordered = np.sort(codes, axis=1)
    out = np.empty(len(codes), dtype=codes.dtype)
    for i, row in enumerate(ordered):
        values, counts = np.unique(row, return_counts=True)
        out[i] = values[int(np.argmax(counts))]
    return out


def build_contests(
    table: pd.DataFrame,
    normaliser,
    *,
    contenders: dict[str, list[str]] | None = None,
    zero_label: dict[str, dict[str, float]] | None = None,
    cache_dir=None,
    n_jobs: int = 1,
) -> dict[str, Contest]:
    """One :class:`Contest` per dataset of a transcripts table with two or more systems,
    its hypotheses normalised as ``werest score`` normalises them (the contests and their
    distances kept by content in ``cache_dir``, when set, for the label loop's next process:
    :mod:`werest.estimation.contest_store`)."""
    from werest.estimation.contest_store import contests_folder, read_contests, write_contests
    from werest.text.scoring import dataset_units, scoring_units

    folder = None if cache_dir is None else contests_folder(cache_dir, table, normaliser)
    stored = None if folder is None else read_contests(folder)
    if stored is not None:
        return {
            fields["dataset"]: Contest(
                **fields,
                contenders=list((contenders or {}).get(fields["dataset"], fields["systems"])),
                zero_label=dict((zero_label or {}).get(fields["dataset"], {})),
                store=folder,
                number=number,
            )
            for number, fields in enumerate(stored)
        }
    text = normalised_hypotheses(table, normaliser, n_jobs=n_jobs)  # the contests are kept
    rows = table[["dataset", "utt_id", "system"]].assign(text=text.to_numpy())
    units = dataset_units(scoring_units(table, normaliser), table["dataset"])
    out = {}
    for dataset, mine in rows.groupby("dataset", sort=True):
        wide = mine.pivot_table(
            index="utt_id", columns="system", values="text", aggfunc="first"
        ).sort_index()
        if wide.shape[1] < 2:
            continue
        wide = wide.fillna("")
        codes, texts = pd.factorize(wide.to_numpy().ravel())
        unit = units.get(dataset, "word")
        unit = "character" if unit == "character" else "word"
        lengths = np.array([len(t) if unit == "character" else len(t.split()) for t in texts])
        per_row = lengths[codes].reshape(wide.shape)
        systems = [str(s) for s in wide.columns]
        out[str(dataset)] = Contest(
            dataset=str(dataset),
            utterances=pd.Index(wide.index.astype(str)),
            systems=systems,
            codes=codes.reshape(wide.shape),
            texts=np.asarray(texts, dtype=object),
            unit=unit,
            words=max(float(np.median(per_row, axis=1).mean()), 1e-9),
            contenders=list((contenders or {}).get(dataset, systems)),
            zero_label=dict((zero_label or {}).get(dataset, {})),
        )
    if folder is not None:
        write_contests(folder, list(out.values()))
        for number, contest in enumerate(out.values()):
            contest.store, contest.number = folder, number
    return out


def normalised_hypotheses(table: pd.DataFrame, normaliser, cache_dir=None, *, n_jobs: int = 1):
    """The table's hypotheses normalised (:func:`werest.text.normalised_columns`), read from
    ``cache_dir`` when the same table and normaliser were normalised before."""
    import hashlib

    from werest.text import normalised_columns

    def normalise():
        return normalised_columns(table, normaliser, ("hypothesis",), n_jobs=n_jobs)["hypothesis"]

    if cache_dir is None:
        return normalise()
    columns = [c for c in ("dataset", "utt_id", "system", "hypothesis", "language") if c in table]
    digest = hashlib.sha256(
        pd.util.hash_pandas_object(table[columns], index=False).to_numpy().tobytes()
    )
    digest.update(f"{normaliser}|{','.join(columns)}".encode())
    path = Path(cache_dir) / f"texts-{digest.hexdigest()[:32]}.parquet"
    try:
        stored = pd.read_parquet(path)["text"]
        if len(stored) == len(table):
            return pd.Series(stored.to_numpy(), index=table.index, dtype="str")
    except (OSError, ValueError, KeyError):
        pass
    text = normalise()
    try:
        from werest.io import atomic_path, unrecorded

        path.parent.mkdir(parents=True, exist_ok=True)
        with unrecorded(), atomic_path(path) as tmp:  # a cache entry, not an output
            pd.DataFrame({"text": text.to_numpy()}).to_parquet(tmp)
    except (OSError, ValueError) as error:
        log.info("normalised hypotheses not cached (%s)", error)
    return text


# --------------------------------------------------------------------------- the design


#: ``strategy=winner``: the weight of the leader's pairs with systems that are not its open
#: rivals in the draw's score (:func:`winner_scores`). Not 0: every pair the decision reads
#: keeps a bounded range (its terms at most max(d) / (N q)), so no draw is wasted on it.
SETTLED_WEIGHT = 0.25


def winner_scores(contest: Contest, leader: str, rivals: list[str]) -> np.ndarray:
    """s_i: the largest distance of ``leader`` to another system on utterance i, each pair's
    distances scaled to mean 1 (a pair of near-identical systems gets as much attention as a
    pair that differs everywhere) and weighted 1 for the open ``rivals``,
    :data:`SETTLED_WEIGHT` for the others; zeros when the leader differs from no system."""
    a = contest.index(leader)
    score = np.zeros(contest.n)
    for other in contest.systems:
        if other == leader:
            continue
        d = contest.distance(a, contest.index(other))
        if d.mean() > 0:
            weight = 1.0 if other in rivals else SETTLED_WEIGHT
            score = np.maximum(score, weight * d / d.mean())
    return score


#: ``strategy=winner``: the share of the draw (besides the uniform share) spent on the leader's
#: pair with its *critical* rival, the one whose bound sets ``regret_bound`` (LUCB); the rest
#: follows :func:`winner_scores` over every rival, so each pair's terms stay bounded
CRITICAL_SHARE = 0.5


def winner_probabilities(
    contest: Contest, leader: str, rivals: list[str], uniform_share: float
) -> np.ndarray:
    """The per-draw probabilities of ``strategy=winner``: on the M disputed utterances (where
    two systems differ), q_i = u/M + (1 − u) (π d_i / Σ d + (1 − π) s_i / Σ s), with d the
    distance of the leader to the critical rival (``rivals[0]``: the one that limits the
    certificate, as LUCB draws), π = :data:`CRITICAL_SHARE` and s :func:`winner_scores`; 0
    where every system agrees (every difference is exactly 0 there: a label would say
    nothing). They sum to 1; every disputed utterance has q_i ≥ u/M, so no weight 1/(N q_i)
    exceeds M/(N u) ≤ 1/u, and the critical pair's terms are at most mean(d)/((1 − u) π)."""
    score = winner_scores(contest, leader, rivals)
    disputed = contest.disputed
    m = int(disputed.sum())
    if m == 0:
        return np.full(contest.n, 1.0 / contest.n)
    if score.sum() <= 0:
        return disputed / m
    mix = score / score.sum()
    if rivals and rivals[0] in contest.systems and rivals[0] != leader:
        critical = contest.distance(contest.index(leader), contest.index(rivals[0]))
        if critical.sum() > 0:
            mix = CRITICAL_SHARE * critical / critical.sum() + (1 - CRITICAL_SHARE) * mix
    q = np.where(disputed, uniform_share / m, 0.0) + (1 - uniform_share) * mix
    return q / q.sum()


@dataclass
class Batch:
    """One sheet's draws of one dataset, as the decision reads them.

    ``positions``: the utterances drawn (an utterance drawn twice appears twice), in the
    order the decision takes them (:func:`draw_order`). ``kind``: :data:`WITH_REPLACEMENT`
    (``probabilities``: the (N,) per-draw probabilities) or :data:`FRESH_UNIFORM` (drawn
    without replacement, uniformly, from the utterances no earlier batch labelled)."""

    positions: np.ndarray
    kind: str
    probabilities: np.ndarray | None = None


def draw_order(positions: np.ndarray, dataset: str, number: int) -> np.ndarray:
    """A batch's draws in a fixed pseudo-random order (seeded by the dataset and the batch's
    number), for a sheet that does not record the order its draws were made in (no
    ``draw_order`` column: drawn before werest recorded it, or made by hand): a uniformly
    random order of exchangeable draws is distributed as the draws themselves, so the
    predictable bets of :func:`eb_lower_bounds` stay valid. The order follows the rows' order
    on the sheet; a recorded order (:func:`recorded_draws`) does not."""
    digest = hashlib.blake2b(f"{dataset}/{number}".encode(), digest_size=8).digest()
    rng = np.random.default_rng(int.from_bytes(digest, "little"))
    return np.asarray(positions)[rng.permutation(len(positions))]


# --------------------------------------------------------------------------- bounds


@dataclass
class PairTerms:
    """The draws' terms for pairs (A_k, B_k): x (T, P) = e_A − e_B on each draw's utterance
    weighted as the design says, c (T, P) their bounds, the mean's slope a and offset b
    (T, P) (:mod:`werest.estimation.sequences`), and ``ends``: the draws counted at the end of
    each batch (where a user looks)."""

    x: np.ndarray
    c: np.ndarray
    slope: np.ndarray
    offset: np.ndarray
    ends: list[int] = field(default_factory=list)


def pair_terms(
    contest: Contest,
    batches: list[Batch],
    errors: np.ndarray,
    pairs: list[tuple[int, int]],
    *,
    control: bool = True,
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
    bound is the largest range over the utterances not labelled when its batch began."""
    n = contest.n
    a_idx = np.array([a for a, _ in pairs], dtype=int)
    b_idx = np.array([b for _, b in pairs], dtype=int)
    distances = np.column_stack([contest.distance(*pair) for pair in pairs])  # (N, P)
    gaps = (
        np.column_stack([contest.consensus_gap(*pair) for pair in pairs])
        if control
        else np.zeros_like(distances)
    )
    gap_total = gaps.sum(axis=0)
    xs, cs, slopes, offsets, ends = [], [], [], [], []
    labelled = np.zeros(n, dtype=bool)
    labelled_x, labelled_g = np.zeros(len(pairs)), np.zeros(len(pairs))
    fit_xg, fit_gg = np.zeros(len(pairs)), np.zeros(len(pairs))
    count = 0
    for batch in batches:
        beta = np.clip(np.divide(fit_xg, fit_gg, out=np.zeros_like(fit_xg), where=fit_gg > 0), 0, 1)
        pos = np.asarray(batch.positions, dtype=int)
        diff = errors[pos][:, a_idx] - errors[pos][:, b_idx]  # (m, P)
        guess = gaps[pos]
        first = _first_labels(pos, labelled)
        reach = distances + beta * np.abs(gaps)  # (N, P): |x − β g| ≤ d + β |g|
        if batch.kind == WITH_REPLACEMENT:
            # the labelled utterances' part of the mean is known: each draw's term is its
            # utterance's HT term if no earlier draw labelled it, else 0, and its mean the
            # unlabelled part, μ − (known part)/N; its range, the largest over the
            # utterances not labelled when the batch began
            weight = 1.0 / (n * batch.probabilities[pos])
            zero = np.zeros((1, len(pairs)))
            known_z = (labelled_x - beta * labelled_g) + np.vstack(
                [zero, np.cumsum((diff - beta * guess) * first[:, None], axis=0)[:-1]]
            )
            xs.append((diff - beta * guess) * (weight * first)[:, None])
            scale = np.divide(
                1.0, n * batch.probabilities, out=np.zeros(n), where=batch.probabilities > 0
            )
            unlabelled = (reach * scale[:, None])[~labelled]
            widest = unlabelled.max(axis=0) if len(unlabelled) else zero[0]
            cs.append(np.repeat(widest[None, :], len(pos), axis=0))
            slopes.append(np.ones_like(diff))
            offsets.append(-(beta * gap_total + known_z) / n)
            fit_xg += (diff * guess * weight[:, None] ** 2).sum(axis=0)
            fit_gg += (guess**2 * weight[:, None] ** 2).sum(axis=0)
            count += len(pos)
        else:
            fresh, fresh_g = diff[first], guess[first]
            before = labelled.sum() + np.arange(len(fresh))  # labelled before each draw
            zero = np.zeros((1, len(pairs)))
            sums_x = labelled_x + np.vstack([zero, np.cumsum(fresh, axis=0)[:-1]])
            sums_g = labelled_g + np.vstack([zero, np.cumsum(fresh_g, axis=0)[:-1]])
            left = (n - before)[:, None]
            unlabelled = reach[~labelled].max(axis=0) if (~labelled).any() else zero[0]
            xs.append(fresh - beta * fresh_g)
            cs.append(np.repeat(unlabelled[None, :], len(fresh), axis=0))
            slopes.append(np.broadcast_to(n / left, fresh.shape))
            offsets.append(-(sums_x + beta * (gap_total - sums_g)) / left)
            fit_xg += (fresh * fresh_g).sum(axis=0)
            fit_gg += (fresh_g**2).sum(axis=0)
            count += len(fresh)
        ends.append(count)
        labelled_x = labelled_x + diff[first].sum(axis=0)
        labelled_g = labelled_g + guess[first].sum(axis=0)
        labelled[pos] = True
    if not xs:
        empty = np.zeros((0, len(pairs)))
        return PairTerms(empty, empty, empty, empty, [])
    return PairTerms(*(np.vstack(v) for v in (xs, cs, slopes, offsets)), ends)


def _first_labels(positions: np.ndarray, labelled: np.ndarray) -> np.ndarray:
    """Which draws label an utterance for the first time (not labelled before, nor by an
    earlier draw of the same batch)."""
    _, first = np.unique(positions, return_index=True)
    mask = np.zeros(len(positions), dtype=bool)
    mask[first] = True
    return mask & ~labelled[positions]


#: how :func:`pair_bounds` bounds (``winner.bounds``): ``betting`` (the default: valid at
#: every number of labels, the tightest), ``eb`` (valid too, wider at the usual horizon) or
#: ``asymptotic`` (valid only as the draws grow: it assumes they have seen the tail)
BOUNDS = ("betting", "eb", "asymptotic")
#: the decision's terms use the consensus control variate (:func:`pair_terms`): off, as it
#: measured more labels in `werest evaluate experiment=winner winner.control=true`
CONTROL = False
#: printed under a decision read with ``winner.bounds=asymptotic``
ASYMPTOTIC_CAVEAT = (
    "winner.bounds=asymptotic assumes the draws have already seen the tail: where a system "
    "hallucinates on a few utterances no draw reached, it can stop on the wrong system "
    "(the default, betting, cannot)"
)


def _caveats(settings: WinnerSettings) -> list[str]:
    """The notes a decision read with ``settings`` prints under itself."""
    return [ASYMPTOTIC_CAVEAT] if settings.bounds == "asymptotic" else []


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
    """:func:`betting_lower_bounds` of ``side`` · x, read at every batch's end (a running
    maximum), the batches already read taken from ``memo``."""
    x, offset = side * terms.x, side * terms.offset
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
            terms.c,
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


# --------------------------------------------------------------------------- the decision


def pair_alpha(contest: Contest, w: int, others: list[int], alpha: float = ALPHA) -> np.ndarray:
    """Each pair (W, B)'s α: contender pairs share α/2 over the K − 1 pairs of a contender
    with the others, pairs with a non-contender α/2 over S − 1, so the pairs that contain the
    true best, whichever system it is, spend at most α in all."""
    contenders = {contest.index(s) for s in contest.contenders}
    s_count, k_count = len(contest.systems), max(len(contenders), 2)
    return np.array(
        [
            alpha / (2 * (k_count - 1))
            if (w in contenders and b in contenders)
            else alpha / (2 * (s_count - 1))
            for b in others
        ]
    )


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
    labelled utterances. ``memo``: see :func:`pair_bounds`."""
    settings = settings or WinnerSettings()
    draws = sum(len(b.positions) for b in batches)
    labelled = np.zeros(contest.n, dtype=bool)
    for batch in batches:
        labelled[np.asarray(batch.positions, dtype=int)] = True
    exact = bool(labelled.all())
    estimates = errors.mean(axis=0) if exact else system_estimates(contest, batches, errors)
    w = leader_of(contest, estimates, draws > 0)
    others = [b for b in range(len(contest.systems)) if b != w]
    pairs = [(b, w) for b in others]  # B − W: positive when B is worse
    terms = pair_terms(
        contest, batches, errors, pairs, control=getattr(settings, "control", CONTROL)
    )
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
    worse = lower > 0
    if worse.all():
        status = DECIDED
    elif (lower > -margin).all():
        status = GOOD
    else:
        status = UNDECIDED
    # the runner-up: the rival whose bound sets regret_bound, then the closest by estimate
    k = int(np.lexsort((point, lower))[0])
    open_rivals = [
        contest.systems[b] for b, low in zip(others, lower, strict=True) if low <= -margin
    ]
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
        labels_used=int(labelled.sum()),
        draws=draws,
        labels_to_go=None
        if status != UNDECIDED
        else labels_to_go(lower, point, margin, draws, int(labelled.sum()), contest.n),
        exact=exact,
        open=open_rivals,
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


# --------------------------------------------------------------------------- sheets


@dataclass(frozen=True)
class WinnerSettings:
    """``winner:`` of ``werest estimate`` and ``werest sample``.

    Parameters
    ----------
    margin : points of WER: ``good`` means the leader is at most this much worse than the
        best (the margin is the larger of this and ``relative_margin``).
    relative_margin : the same as a share of the leader's WER (0.05: 5 % of it).
    alpha : the decision's error level: at most this share of stops name a system more than
        the margin worse than the true best, however the user stops.
    bounds : :data:`BOUNDS`.
    """

    margin: float = MARGIN
    relative_margin: float = RELATIVE_MARGIN
    alpha: float = ALPHA
    bounds: str = "betting"

    def __post_init__(self) -> None:
        from werest.errors import ConfigError

        if not self.margin >= 0:
            raise ConfigError(f"winner.margin must be ≥ 0 points, got {self.margin}")
        if not 0 <= self.relative_margin < 1:
            raise ConfigError(
                f"winner.relative_margin must be in [0, 1), got {self.relative_margin}"
            )
        if not 0 < self.alpha < 1:
            raise ConfigError(f"winner.alpha must be in (0, 1), got {self.alpha}")
        if self.bounds not in BOUNDS:
            raise ConfigError(
                f"winner.bounds must be one of {', '.join(BOUNDS)}, got {self.bounds!r}"
            )

    def margin_points(self, leader_wer: float) -> float:
        """The margin in points for a leader at ``leader_wer`` points."""
        return max(self.margin, self.relative_margin * max(leader_wer, 0.0))


def error_matrix(contest: Contest, scores: pd.DataFrame) -> np.ndarray:
    """(N, S) true errors of every system on the labelled utterances of ``contest`` (NaN on
    the others), from :func:`werest.estimation.labels.labelled_scores` rows
    (``utt_id, system, word_errors, ref_words``); a system with no hypothesis for a labelled
    utterance deleted every reference word (its text in the contest is empty)."""
    out = np.full((contest.n, len(contest.systems)), np.nan)
    if scores.empty:
        return out
    rows = contest.utterances.get_indexer(scores["utt_id"].astype(str))
    cols = pd.Index(contest.systems).get_indexer(scores["system"].astype(str))
    ok = (rows >= 0) & (cols >= 0)
    out[rows[ok], cols[ok]] = scores["word_errors"].to_numpy(dtype=float)[ok]
    length = pd.Series(scores["ref_words"].to_numpy(dtype=float)[ok]).groupby(rows[ok]).max()
    labelled = length.index.to_numpy()
    block = out[labelled]
    out[labelled] = np.where(np.isnan(block), length.to_numpy()[:, None], block)
    return out


def sheet_batches(
    contest: Contest, labels: pd.DataFrame, active: np.ndarray | None = None
) -> tuple[list[Batch], list[str]]:
    """The batches the decision reads from one dataset's labels (``read_labels`` rows: its
    sheets in the order of their numbers), and notes on the sheets it cannot read. Each
    batch's draws are in the order they were made (:func:`recorded_draws`), so neither the
    order the sheets are listed in nor the order of a sheet's rows changes the decision.

    ``winner`` sheets: with replacement, q recomputed from the recorded leader, rivals and
    uniform share (it must match the recorded ``selection_probability``: the same table).
    ``active`` sheets: with replacement, q from ``active`` (the per-draw probabilities of
    ``werest sample strategy=active`` on this table, (N,)), when they match. ``random`` sheets
    and sheets with no design (a test split): fresh uniform draws. ``stratified`` sheets
    carry no design the decision can read and are left out of it (the estimates use them)."""
    from werest.errors import InputError

    batches, notes = [], []
    for number, sheet in labels.groupby("sheet", sort=True):
        position = contest.utterances.get_indexer(sheet["utt_id"].astype(str))
        sheet, position = sheet[position >= 0], position[position >= 0]
        drawn = recorded_draws(sheet, position, contest.dataset, int(number))
        strategy = str(sheet["strategy"].iat[0]) if len(sheet) else ""
        recorded = sheet["selection_probability"].to_numpy(dtype=float)
        if strategy == "winner":
            rivals = [r for r in str(sheet["rivals"].iat[0]).split("|") if r]
            unknown = [s for s in [sheet["leader"].iat[0], *rivals] if s not in contest.systems]
            q = (
                None
                if unknown
                else winner_probabilities(
                    contest,
                    str(sheet["leader"].iat[0]),
                    rivals,
                    float(sheet["uniform_share"].iat[0]),
                )
            )
            if q is None or not np.allclose(q[position], recorded, rtol=1e-6, atol=1e-12):
                raise InputError(
                    f"dataset {contest.dataset}: the sheet's design (selection_probability) does "
                    "not follow from this input table: label the sheets drawn from this table",
                    column="selection_probability",
                )
            batches.append(Batch(drawn, WITH_REPLACEMENT, q))
        elif strategy == "active":
            if active is None or not np.allclose(active[position], recorded, rtol=1e-6):
                notes.append(
                    f"sheet {int(number) + 1}: its active design does not follow from this "
                    "table and model; left out of the decision"
                )
                continue
            batches.append(Batch(drawn, WITH_REPLACEMENT, active))
        elif strategy in ("random", "", "nan"):
            batches.append(Batch(drawn, FRESH_UNIFORM))
        else:
            notes.append(f"sheet {int(number) + 1}: a {strategy} design; left out of the decision")
    return batches, notes


def recorded_draws(
    sheet: pd.DataFrame, position: np.ndarray, dataset: str, number: int
) -> np.ndarray:
    """One sheet's draws of one dataset (``position``: each row's utterance in the contest)
    in the order they were made: each row's recorded ``draw_order`` places
    (:func:`werest.estimation.labels.draw_places`; ``werest sample`` writes them), else, on a
    sheet that records none, :func:`draw_order` of the rows as listed."""
    from werest.estimation.labels import draw_places

    draws = sheet["draws"].fillna(1).round().astype(int).to_numpy()
    cells = sheet["draw_order"] if "draw_order" in sheet else pd.Series("", index=sheet.index)
    places = [draw_places(cell) for cell in cells]
    if not len(places) or not all(places):
        return draw_order(np.repeat(position, draws), dataset, number)
    drawn = np.full(max(max(p) for p in places) + 1, -1)
    for utterance, mine in zip(position, places, strict=True):
        drawn[mine] = utterance
    return drawn[drawn >= 0]


def winner_sheet(
    contest: Contest,
    batches: list[Batch],
    errors: np.ndarray,
    budget: int,
    *,
    settings: WinnerSettings = WinnerSettings(),
    uniform_share: float = WINNER_UNIFORM_SHARE,
    rng: np.random.Generator,
) -> tuple[pd.DataFrame, Decision]:
    """The next ``budget`` draws of ``strategy=winner`` for one dataset (with replacement, from
    every utterance: a redrawn labelled utterance costs no new label) and the decision they
    start from; no draw once it is ``decided`` or ``good`` (:func:`next_batch` picks the
    rivals). ``draw_order``: each row's places in the batch's draw order
    (:func:`werest.estimation.sampling.recorded_order`), which :func:`sheet_batches` reads
    back."""
    from werest.estimation.sampling import recorded_order

    decision = decide(contest, batches, errors, settings)
    columns = ["utt_id", "draws", "expected_draws", "selection_probability", "draw_order"]
    if decision.status != UNDECIDED:
        return pd.DataFrame(columns=columns), decision
    batch, rivals = next_batch(contest, decision, budget, uniform_share, rng)
    counts = np.bincount(batch.positions, minlength=contest.n)
    chosen = np.flatnonzero(counts)
    q = batch.probabilities
    sheet = pd.DataFrame(
        {
            "utt_id": contest.utterances[chosen],
            "draws": counts[chosen],
            "expected_draws": budget * q[chosen],
            "selection_probability": q[chosen],
            "draw_order": recorded_order(batch.positions, contest.n)[chosen],
        }
    )
    return sheet.assign(
        leader=decision.leader, rivals="|".join(rivals), uniform_share=uniform_share
    ), decision


def next_batch(
    contest: Contest,
    decision: Decision,
    budget: int,
    uniform_share: float,
    rng: np.random.Generator,
) -> tuple[Batch, list[str]]:
    """``budget`` draws with replacement of ``strategy=winner`` after ``decision`` (the
    batch, its positions in draw order, and its rivals): the rivals are the open contenders
    (those the leader is not yet shown within the margin of; once none is left, every open
    system), the critical one first (the runner-up: its bound sets ``regret_bound``)."""
    rivals = [s for s in decision.open if s in contest.contenders] or decision.open
    if decision.runner_up in decision.open:
        rivals = [decision.runner_up] + [s for s in rivals if s != decision.runner_up]
    q = winner_probabilities(contest, decision.leader, rivals, uniform_share)
    positions = rng.choice(contest.n, size=budget, p=q)
    return Batch(positions, WITH_REPLACEMENT, q), rivals


# --------------------------------------------------------------------------- werest estimate


def mark_contenders(records: list[dict], contenders: dict[str, list[str]]) -> None:
    """Every summary record gets ``contender`` (true/false), in place."""
    for record in records:
        record["contender"] = record["system"] in contenders.get(record["dataset"], ())


def zero_label_estimates(records: list[dict]) -> dict[str, dict[str, float]]:
    """Per dataset and system, the zero-label estimate (``zero_label_wer`` once ``labels=``
    replaced ``estimated_wer``): what the shortlist, the α split and the first leader read."""
    out: dict[str, dict[str, float]] = {}
    for record in records:
        out.setdefault(record["dataset"], {})[record["system"]] = record.get(
            "zero_label_wer", record["estimated_wer"]
        )
    return out


def zero_label_shortlist(zero_label: dict[str, dict[str, float]]) -> dict[str, list[str]]:
    """:func:`shortlist` of :func:`zero_label_estimates`."""
    return shortlist(
        [
            {"dataset": dataset, "system": system, "estimated_wer": value}
            for dataset, systems in zero_label.items()
            for system, value in systems.items()
        ]
    )


def labelled_contests(
    zero_label: dict[str, dict[str, float]],
    table: pd.DataFrame,
    normaliser,
    labels: pd.DataFrame | None,
    *,
    utterances: pd.DataFrame | None = None,
    cache_dir=None,
    n_jobs: int = 1,
):
    """Per dataset of two systems or more: its contest (the shortlist of ``zero_label``), the
    batches its sheets support (:func:`sheet_batches`), the true errors on the labelled
    utterances and the notes on sheets left out. Yields ``(contest, batches, errors, notes)``."""
    from werest.estimation.labels import distinct_labels, labelled_scores

    contenders = zero_label_shortlist(zero_label)
    contests = build_contests(
        table,
        normaliser,
        contenders=contenders,
        zero_label=zero_label,
        cache_dir=cache_dir,
        n_jobs=n_jobs,
    )
    scores = (
        labelled_scores(table, distinct_labels(labels), normaliser)
        if labels is not None and len(labels)
        else pd.DataFrame(columns=["dataset", "utt_id", "system", "word_errors", "ref_words"])
    )
    for name, contest in contests.items():
        mine = labels[labels["dataset"] == name] if labels is not None else None
        batches, notes = [], []
        if mine is not None and len(mine):
            batches, notes = sheet_batches(contest, mine, _active_design(contest, mine, utterances))
        yield contest, batches, error_matrix(contest, scores[scores["dataset"] == name]), notes


def winner_entries(
    records: list[dict],
    table: pd.DataFrame,
    normaliser,
    labels: pd.DataFrame | None = None,
    *,
    settings: WinnerSettings = WinnerSettings(),
    utterances: pd.DataFrame | None = None,
    cache_dir=None,
    n_jobs: int = 1,
) -> list[dict]:
    """``winner.json``: per dataset of two systems or more, the zero-label shortlist (the
    records get ``contender``) and, with ``labels`` (:func:`werest.estimation.labels.
    read_labels` rows), the decision its sheets support (:func:`decide`); ``utterances``:
    the estimate's rows, for the designs of ``active`` sheets."""
    zero_label = zero_label_estimates(records)
    contenders = zero_label_shortlist(zero_label)
    mark_contenders(records, contenders)
    if labels is None:  # the shortlist alone: nothing to align
        return [
            zero_label_entry(dataset, zero_label[dataset], contenders[dataset], settings)
            for dataset in sorted(zero_label)
            if len(zero_label[dataset]) >= 2
        ]
    prepared = labelled_contests(
        zero_label,
        table,
        normaliser,
        labels,
        utterances=utterances,
        cache_dir=cache_dir,
        n_jobs=n_jobs,
    )
    return [
        {
            **decide(contest, batches, errors, settings).as_dict(),
            "notes": notes + _caveats(settings),
        }
        for contest, batches, errors, notes in prepared
    ]


def zero_label_entry(
    dataset: str, estimates: dict[str, float], contenders: list[str], settings: WinnerSettings
) -> dict:
    """A dataset's ``winner.json`` entry before any label: undecided, the shortlist, the
    leader (the lowest zero-label estimate among the contenders) and the next contender's
    estimated difference (points); no bound yet (a label decides, not agreement)."""
    ranked = sorted(
        (s for s in estimates if s in contenders and np.isfinite(estimates[s])),
        key=lambda s: (estimates[s], s),
    )
    leader = ranked[0] if ranked else sorted(contenders)[0]
    runner = ranked[1] if len(ranked) > 1 else None
    difference = 100 * (estimates[runner] - estimates[leader]) if runner else None
    leader_wer = 100 * estimates.get(leader, float("nan"))
    return Decision(
        dataset=dataset,
        status=UNDECIDED,
        leader=leader,
        winner=None,
        contenders=list(contenders),
        may_be_best=sorted(estimates),
        runner_up=runner,
        difference=float("nan") if difference is None else difference,
        low=float("nan"),
        high=float("nan"),
        regret_bound=float("nan"),
        margin=settings.margin_points(leader_wer if np.isfinite(leader_wer) else 0.0),
        labels_used=0,
        draws=0,
        labels_to_go=None,
        open=[s for s in sorted(estimates) if s != leader],
    ).as_dict() | {"notes": []}


def _active_design(
    contest: Contest, labels: pd.DataFrame, utterances: pd.DataFrame | None
) -> np.ndarray | None:
    """The per-draw probabilities ``strategy=active`` drew this dataset's sheets with, from
    the estimate's predictions (None without them or without an active sheet)."""
    active = labels[labels["strategy"] == "active"]
    if utterances is None or active.empty or active["uniform_share"].isna().all():
        return None
    from werest.estimation.sampling import active_probabilities, labelling_scores

    scores = labelling_scores(utterances[utterances["dataset"] == contest.dataset])
    scores = pd.Series(scores.to_numpy(), index=scores.index.get_level_values(1).astype(str))
    scores = scores.reindex(contest.utterances)
    return active_probabilities(scores.to_numpy(float), float(active["uniform_share"].iat[0]))


def format_winner(entries: list[dict]) -> str:
    """The console's first block: per dataset, the shortlist, and with labels the decision
    and its certificate in one plain line (the notes below it)."""
    lines = ["Which system is best:"]
    for entry in entries:
        lines.append(f"  {entry['dataset']}: {_said(entry)}")
        lines += [f"    note: {note}" for note in entry.get("notes", [])]
    return "\n".join(lines)


def _said(entry: dict) -> str:
    """One dataset's line of :func:`format_winner`."""
    contenders, n = entry["contenders"], entry["labels_used"]
    if n == 0 and entry["status"] == UNDECIDED and entry.get("regret_bound") is None:
        if len(contenders) == 1:
            return f"{contenders[0]} (the only contender)"
        return (
            f"{len(contenders)} contenders: {', '.join(contenders)}; label to decide "
            "(werest sample strategy=winner)"
        )
    labels = (
        "every utterance labelled, the answer is exact"
        if entry.get("exact")
        else (f"{n} {'label' if n == 1 else 'labels'}")
    )
    regret = f"at most {entry['regret_bound']:.2f} points worse than the best"
    if entry["status"] == DECIDED:
        return (
            f"{entry['winner']}, decided ({labels}): every other system is worse; the least "
            f"clearly, {entry['runner_up']}, by {_interval(entry)} points"
        )
    if entry["status"] == GOOD:
        return (
            f"{entry['winner']}, good ({labels}): {regret} (margin {entry['margin']:.2f}); "
            f"may be best: {', '.join(entry['may_be_best'])}"
        )
    to_go = entry["labels_to_go"]
    return (
        f"undecided ({labels}): {entry['leader']} leads, {regret}; "
        f"{entry['runner_up']} is {_interval(entry)} points worse"
        + (f"; about {to_go} more labels to within {entry['margin']:.2f}" if to_go else "")
    )


def _interval(entry: dict) -> str:
    return f"{_signed(entry['difference'])} [{_signed(entry['low'])}, {_signed(entry['high'])}]"


def _signed(value) -> str:
    return "?" if value is None else f"{value:+.2f}"


# --------------------------------------------------------------------------- werest sample


def winner_draw(
    records: list[dict],
    table: pd.DataFrame,
    normaliser,
    labels: pd.DataFrame | None,
    budget: int,
    *,
    seed: int = 0,
    settings: WinnerSettings = WinnerSettings(),
    utterances: pd.DataFrame | None = None,
    cache_dir=None,
    n_jobs: int = 1,
) -> tuple[pd.DataFrame, list[dict]]:
    """``werest sample strategy=winner``: per dataset of two systems or more, the next
    ``budget`` draws (:func:`winner_sheet`) given the sheets labelled so far, and every
    dataset's decision before them. Sheet rows: ``dataset, utt_id, draws, expected_draws,
    selection_probability, leader, rivals, uniform_share``."""
    from werest.estimation.sampling import dataset_rng, next_sheet

    prepared = labelled_contests(
        zero_label_estimates(records),
        table,
        normaliser,
        labels,
        utterances=utterances,
        cache_dir=cache_dir,
        n_jobs=n_jobs,
    )
    sheets, decisions = [], []
    number = next_sheet(labels)
    for contest, batches, errors, notes in prepared:
        rng = dataset_rng(seed, f"{contest.dataset}#{number}")
        sheet, decision = winner_sheet(contest, batches, errors, budget, settings=settings, rng=rng)
        decisions.append({**decision.as_dict(), "notes": notes + _caveats(settings)})
        sheets.append(sheet.assign(dataset=contest.dataset, n_utterances=contest.n))
    return pd.concat(sheets, ignore_index=True), decisions
