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
* A person looks after every batch, so every bound is a confidence sequence: the predictable
  plug-in empirical-Bernstein CS of Waudby-Smith & Ramdas (2024, JRSS-B, Theorem 2), valid at
  any stopping time (:func:`eb_lower_bounds`). Draws made uniformly from the utterances not
  yet labelled (``strategy=random``) use the exact conditional mean of sampling without
  replacement (their Theorem 3).

The decision (:func:`decide`), at level 1 − α: the leader W is ``decided`` when every other
system is shown worse than W, and it is a ``tie`` when every other system is shown no better
than W by more than ``tie_margin`` and every system not shown worse (``tied``) is shown within
``tie_margin`` of W. Bonferroni over the pairs that contain the true best (whichever it is):
contender pairs share α/2, pairs with a non-contender α/2 over S − 1, so a stop names a
system more than ``tie_margin`` worse than the true best with probability at most α, however
the user stops. The contenders only steer the draws and the split of α.
"""

from __future__ import annotations

import hashlib
import logging
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from werest.estimation.shortlist import SHORTLIST_SHARE, shortlist  # noqa: F401 (re-exported)

log = logging.getLogger(__name__)

#: The decision's error level: at most this share of stops name a system more than
#: ``tie_margin`` worse than the true best.
ALPHA = 0.05
#: Points of WER within which two systems are called tied (at most 1, the issue's bound).
TIE_MARGIN = 0.5
#: ``strategy=winner``: the share of each draw's probability spread evenly over the
#: utterances: every weight 1 / (N q_i) is at most 1 / u.
WINNER_UNIFORM_SHARE = 0.2
#: The statuses of a dataset's decision.
DECIDED, TIE, UNDECIDED = "decided", "tie", "undecided"
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
            from werest.text import encoded_distances, encoded_texts

            path = contest_store.distance_file(self.store, self.number, key)
            stored = contest_store.read_distances(path, self.n)
            if stored is not None:  # an earlier process of the label loop aligned them
                self._distances[key] = stored
                return stored
            if "encoded" not in self._distances:  # each text encoded once
                unit = "char" if self.unit == "character" else "word"
                self._distances["encoded"] = encoded_texts(list(self.texts), unit)
            self._distances[key] = encoded_distances(
                self._distances["encoded"], self.codes[:, key[0]], self.codes[:, key[1]]
            ).astype(float)
            contest_store.write_distances(path, self._distances[key])
        return self._distances[key]

    @property
    def disputed(self) -> np.ndarray:
        """Where at least two systems' hypotheses differ (N,)."""
        return (self.codes != self.codes[:, :1]).any(axis=1)

    def max_distances(self, pairs: list[tuple[int, int]]) -> np.ndarray:
        """max_i d_i of each pair (P,)."""
        return np.array([self.distance(*pair).max() for pair in pairs])

    def points(self, words_per_utterance: float) -> float:
        """A mean difference in errors per utterance, in WER points."""
        return 100.0 * words_per_utterance / self.words


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


def winner_probabilities(
    contest: Contest, leader: str, rivals: list[str], uniform_share: float
) -> np.ndarray:
    """The per-draw probabilities of ``strategy=winner``: q_i = u/M + (1 − u) s_i / Σ s on
    the M disputed utterances (where two systems differ), 0 where every system agrees (every
    difference is exactly 0 there: a label would say nothing). They sum to 1; every
    disputed utterance has q_i ≥ u/M, so no weight 1/(N q_i) exceeds M/(N u) ≤ 1/u."""
    score = winner_scores(contest, leader, rivals)
    disputed = contest.disputed
    m = int(disputed.sum())
    if m == 0:
        return np.full(contest.n, 1.0 / contest.n)
    if score.sum() <= 0:
        return disputed / m
    q = np.where(disputed, uniform_share / m, 0.0) + (1 - uniform_share) * score / score.sum()
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
    _bounds: dict = field(default_factory=dict, repr=False)

    def bounds(self, contest: Contest, pairs: list[tuple[int, int]]) -> np.ndarray:
        """Each pair's range c = max_i d_i / (N q_i) under this batch's design (P,)."""
        q = self.probabilities
        weight = np.divide(1.0, contest.n * q, out=np.zeros_like(q), where=q > 0)
        for pair in pairs:
            if pair not in self._bounds:
                self._bounds[pair] = float((contest.distance(*pair) * weight).max())
        return np.array([self._bounds[pair] for pair in pairs])


def draw_order(positions: np.ndarray, dataset: str, number: int) -> np.ndarray:
    """A batch's draws in a fixed pseudo-random order (seeded by the dataset and the batch's
    number): a uniformly random order of exchangeable draws is distributed as the draws
    themselves, so the predictable bets of :func:`eb_lower_bounds` stay valid whatever
    order the sheet lists its rows in."""
    digest = hashlib.blake2b(f"{dataset}/{number}".encode(), digest_size=8).digest()
    rng = np.random.default_rng(int.from_bytes(digest, "little"))
    return np.asarray(positions)[rng.permutation(len(positions))]


# --------------------------------------------------------------------------- bounds


#: the bets' truncation (λ < 1 keeps the process nonnegative; WSR and confseq use 1/2)
TRUNCATION = 0.5


def _psi(lam: np.ndarray) -> np.ndarray:
    """ψ_E(λ) = (−log(1 − λ) − λ) / 4."""
    return (-np.log1p(-lam) - lam) / 4


def eb_lower_bounds(
    x: np.ndarray, bound: np.ndarray, mean_slope: np.ndarray, mean_offset: np.ndarray, alpha
) -> np.ndarray:
    """A lower confidence sequence for μ, the mean of a finite population of paired
    differences, from T draws (rows) of P pairs (columns).

    Draw t's term x_t lies in [−c_t, c_t] (``bound``, known before the draw) and has
    conditional mean m_t(μ) = a_t μ + b_t given the past (``mean_slope`` a, ``mean_offset``
    b: a = 1, b = 0 for a draw with replacement; the without-replacement correction for a
    fresh uniform draw). Scaled to X = (x + c)/(2c) in [0, 1], the predictable plug-in
    empirical-Bernstein process of Waudby-Smith & Ramdas (2024, Theorem 2),

        Π_t exp(λ_t (X_t − (m_t + c_t)/(2c_t)) − v_t ψ_E(λ_t)),  v_t = 4 (X_t − X̂_{t−1})²,

    is a nonnegative supermartingale under μ, so μ ≥ L_t for every t with probability at
    least 1 − α (Ville). L_t is linear in the log-capital: closed form, no grid. Returns the
    running maximum of L_t (T, P): the bound after each draw (−inf before it can say
    anything). ``alpha``: scalar or (P,)."""
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
    lam = np.minimum(lam, TRUNCATION)
    lam = np.where(exact, 0.0, lam)
    v = 4 * (scaled - mean_before) ** 2
    # Σ λ (X − (a μ + b + c)/(2c)) − Σ v ψ ≥ log(1/α)  ⇔  μ ≤ L
    slope = np.cumsum(lam * mean_slope / (2 * c_safe), axis=0)
    rest = np.cumsum(lam * (scaled - (mean_offset + c_safe) / (2 * c_safe)) - v * _psi(lam), axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        lower = np.where(slope > 0, (rest - log_alpha) / slope, -np.inf)
    return np.maximum.accumulate(lower, axis=0)


@dataclass
class PairTerms:
    """The draws' terms for pairs (A_k, B_k): x (T, P) = e_A − e_B on each draw's utterance
    weighted as the design says, c (T, P) their bounds, and the mean's slope a and offset
    b (T, P) (:func:`eb_lower_bounds`)."""

    x: np.ndarray
    c: np.ndarray
    slope: np.ndarray
    offset: np.ndarray


def pair_terms(
    contest: Contest, batches: list[Batch], errors: np.ndarray, pairs: list[tuple[int, int]]
) -> PairTerms:
    """The terms of every draw of ``batches`` (in order) for ``pairs`` of system positions.
    ``errors``: (N, S) true errors, read only at drawn utterances (NaN elsewhere is fine).

    A fresh uniform draw of an utterance labelled before adds nothing (a draw without
    replacement never repeats; one of a sample drawn from every utterance that hits a
    labelled one is rejected, which leaves the others uniform over the unlabelled); its
    bound is max_i d_i over every utterance, a valid (if loose) range."""
    n = contest.n
    a_idx = np.array([a for a, _ in pairs], dtype=int)
    b_idx = np.array([b for _, b in pairs], dtype=int)
    xs, cs, slopes, offsets = [], [], [], []
    labelled = np.zeros(n, dtype=bool)
    labelled_sum = np.zeros(len(pairs))
    for batch in batches:
        pos = np.asarray(batch.positions, dtype=int)
        diff = errors[pos][:, a_idx] - errors[pos][:, b_idx]  # (m, P)
        first = _first_labels(pos, labelled)
        if batch.kind == WITH_REPLACEMENT:
            weight = 1.0 / (n * batch.probabilities[pos])
            xs.append(diff * weight[:, None])
            cs.append(np.repeat(batch.bounds(contest, pairs)[None, :], len(pos), axis=0))
            slopes.append(np.ones_like(diff))
            offsets.append(np.zeros_like(diff))
        else:
            fresh = diff[first]
            before = labelled.sum() + np.arange(len(fresh))  # labelled before each draw
            sums = labelled_sum + np.vstack([np.zeros(len(pairs)), np.cumsum(fresh, axis=0)[:-1]])
            left = (n - before)[:, None]
            xs.append(fresh)
            cs.append(np.repeat(contest.max_distances(pairs)[None, :], len(fresh), axis=0))
            slopes.append(np.broadcast_to(n / left, fresh.shape))
            offsets.append(-sums / left)
        labelled_sum = labelled_sum + diff[first].sum(axis=0)
        labelled[pos] = True
    if not xs:
        empty = np.zeros((0, len(pairs)))
        return PairTerms(empty, empty, empty, empty)
    return PairTerms(*(np.vstack(v) for v in (xs, cs, slopes, offsets)))


def _first_labels(positions: np.ndarray, labelled: np.ndarray) -> np.ndarray:
    """Which draws label an utterance for the first time (not labelled before, nor by an
    earlier draw of the same batch)."""
    _, first = np.unique(positions, return_index=True)
    mask = np.zeros(len(positions), dtype=bool)
    mask[first] = True
    return mask & ~labelled[positions]


#: how :func:`pair_bounds` bounds (``winner.bounds``): ``asymptotic`` (the default: about half
#: the labels, valid as the draws grow) or ``eb`` (valid at every sample size)
BOUNDS = ("asymptotic", "eb")
#: the asymptotic confidence sequence's ρ is tuned for this many draws (its width is
#: smallest there; it is valid at every time)
HORIZON = 100
#: the asymptotic confidence sequence says nothing before this many draws (its variance
#: estimate needs them; the central limit theorem it rests on, more)
MIN_DRAWS = 20


def asymptotic_half_widths(x: np.ndarray, alpha) -> np.ndarray:
    """The half-widths (T, P) of Waudby-Smith et al.'s asymptotic confidence sequence after
    each draw (2024, "Time-uniform central limit theory and asymptotic confidence
    sequences", eq. 13): σ̂_t √(2(tρ² + 1)/(t²ρ²) · log(√(tρ² + 1)/α)), ρ tuned for
    :data:`HORIZON` draws. It is Robbins' two-sided normal mixture boundary at intrinsic time
    t σ̂_t², divided by t (``confseq.boundaries.normal_mixture_bound``)."""
    t = np.arange(1, len(x) + 1)[:, None]
    mean = np.cumsum(x, axis=0) / t
    var = np.maximum(np.cumsum(x**2, axis=0) / t - mean**2, 1e-12)
    a = np.broadcast_to(np.asarray(alpha, dtype=float), x.shape[1:])
    rho2 = (-2 * np.log(a) + np.log(-2 * np.log(a) + 1)) / HORIZON
    scale = 2 * (t * rho2 + 1) / (t**2 * rho2)
    return np.sqrt(var) * np.sqrt(scale * np.log(np.sqrt(t * rho2 + 1) / a))


def asymptotic_bounds(x: np.ndarray, alpha) -> tuple[np.ndarray, np.ndarray]:
    """The asymptotic confidence sequence's running intersection after all T draws (P,):
    nothing before :data:`MIN_DRAWS` draws."""
    t = np.arange(1, len(x) + 1)[:, None]
    mean = np.cumsum(x, axis=0) / t
    half = asymptotic_half_widths(x, alpha)
    low = np.where(t >= MIN_DRAWS, mean - half, -np.inf)
    high = np.where(t >= MIN_DRAWS, mean + half, np.inf)
    return np.maximum.accumulate(low, axis=0)[-1], np.minimum.accumulate(high, axis=0)[-1]


def pair_bounds(
    terms: PairTerms, alpha: np.ndarray, bounds: str = "asymptotic"
) -> tuple[np.ndarray, np.ndarray]:
    """The lower and upper confidence-sequence bounds (P,) of each pair's mean difference
    (errors per utterance) after all the draws, each side at its pair's ``alpha``
    (``bounds``: :data:`BOUNDS`)."""
    if not len(terms.x):
        inf = np.full(terms.x.shape[1], np.inf)
        return -inf, inf
    if bounds == "asymptotic":
        return asymptotic_bounds(terms.x, np.asarray(alpha))  # two-sided at α: α/2 a side
    lower = eb_lower_bounds(terms.x, terms.c, terms.slope, terms.offset, alpha)[-1]
    upper = -eb_lower_bounds(-terms.x, terms.c, terms.slope, -terms.offset, alpha)[-1]
    return lower, upper


def point_differences(terms: PairTerms) -> np.ndarray:
    """Each pair's mean difference per utterance, estimated from the draws (P,)."""
    if not len(terms.x):
        return np.zeros(terms.x.shape[1])
    return terms.x.mean(axis=0)


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
    """One dataset's entry of ``winner.json`` (differences in WER points)."""

    dataset: str
    status: str
    leader: str
    winner: str | None
    tied: list[str]
    contenders: list[str]
    runner_up: str | None
    difference: float
    low: float
    high: float
    labels_used: int
    draws: int
    tie_margin: float
    labels_to_go: int | None
    open: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items()}
        for key in ("difference", "low", "high"):
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
    *,
    tie_margin: float = TIE_MARGIN,
    alpha: float = ALPHA,
    bounds: str = "asymptotic",
) -> Decision:
    """The decision after ``batches`` (see the module docstring). ``errors`` (N, S): the true
    errors of every system, read only at the drawn utterances."""
    draws = sum(len(b.positions) for b in batches)
    labelled = len(np.unique(np.concatenate([b.positions for b in batches]))) if draws else 0
    estimates = system_estimates(contest, batches, errors)
    w = leader_of(contest, estimates, draws > 0)
    others = [b for b in range(len(contest.systems)) if b != w]
    pairs = [(b, w) for b in others]  # B − W: positive when B is worse
    terms = pair_terms(contest, batches, errors, pairs)
    margin = tie_margin / 100 * contest.words
    if labelled == contest.n:  # every utterance labelled: the differences are known
        point = (errors[:, others] - errors[:, [w]]).mean(axis=0)
        lower = upper = point
    else:
        lower, upper = pair_bounds(terms, pair_alpha(contest, w, others, alpha), bounds)
        point = point_differences(terms) if draws else estimates[others] - estimates[w]
    worse = lower > 0
    near = (lower > -margin) & (upper < margin)
    if worse.all():
        status, tied = DECIDED, []
    elif (lower > -margin).all() and (worse | near).all():
        status, tied = (
            TIE,
            [contest.systems[b] for b, ok in zip(others, worse, strict=True) if not ok],
        )
    else:
        status, tied = UNDECIDED, []
    # the runner-up: the closest rival by its lower bound (the one the decision waits for),
    # then by its estimated difference
    k = int(np.lexsort((np.nan_to_num(point, nan=np.inf), lower))[0])
    to_go = (
        None
        if status != UNDECIDED
        else labels_to_go(terms, lower, upper, point, margin, draws, labelled)
    )
    open_rivals = [contest.systems[b] for b, ok in zip(others, worse | near, strict=True) if not ok]
    return Decision(
        dataset=contest.dataset,
        status=status,
        leader=contest.systems[w],
        winner=contest.systems[w] if status != UNDECIDED else None,
        tied=tied,
        contenders=list(contest.contenders),
        runner_up=contest.systems[others[k]],
        difference=contest.points(point[k]) if np.isfinite(point[k]) else float("nan"),
        low=contest.points(lower[k]),
        high=contest.points(upper[k]),
        labels_used=labelled,
        draws=draws,
        tie_margin=tie_margin,
        labels_to_go=to_go,
        open=open_rivals,
    )


def decide_as(settings, contest: Contest, batches: list[Batch], errors: np.ndarray) -> Decision:
    """:func:`decide` with the ``tie_margin``, ``alpha`` and ``bounds`` of ``settings``
    (:class:`WinnerSettings`, or the experiment's)."""
    return decide(
        contest,
        batches,
        errors,
        tie_margin=settings.tie_margin,
        alpha=settings.alpha,
        bounds=settings.bounds,
    )


def labels_to_go(terms, lower, upper, point, margin, draws: int, labelled: int) -> int | None:
    """A rough estimate of the further labels a decision needs: the widest open pair's
    half-width shrinks about as √(log t / t); the labels until it is below the larger of
    its estimated difference and the margin, scaled by labels per draw so far. None with
    no draw yet."""
    if not draws:
        return None
    half = (upper - lower) / 2
    target = np.maximum(np.abs(point), margin)
    settled = (lower > 0) | ((lower > -margin) & (upper < margin))
    need = np.where(settled, 0.0, (half / np.maximum(target, 1e-12)) ** 2)
    ratio = float(np.nanmax(need)) if need.size else 0.0
    if not np.isfinite(ratio):
        return None
    more_draws = max(0.0, draws * ratio - draws)
    return math.ceil(more_draws * labelled / max(draws, 1))


# --------------------------------------------------------------------------- sheets


@dataclass(frozen=True)
class WinnerSettings:
    """``winner:`` of ``werest estimate`` and ``werest sample``.

    Parameters
    ----------
    tie_margin : points of WER within which systems are called tied (at most 1).
    alpha : the decision's error level: at most this share of stops name a system more than
        ``tie_margin`` worse than the true best, however the user stops.
    """

    tie_margin: float = TIE_MARGIN
    alpha: float = ALPHA
    bounds: str = "asymptotic"

    def __post_init__(self) -> None:
        from werest.errors import ConfigError

        if not 0 <= self.tie_margin <= 1:
            raise ConfigError(f"winner.tie_margin must be in [0, 1] points, got {self.tie_margin}")
        if not 0 < self.alpha < 1:
            raise ConfigError(f"winner.alpha must be in (0, 1), got {self.alpha}")
        if self.bounds not in BOUNDS:
            raise ConfigError(
                f"winner.bounds must be one of {', '.join(BOUNDS)}, got {self.bounds!r}"
            )


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
    sheets in order), and notes on the sheets it cannot read.

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
        draws = sheet["draws"].fillna(1).round().astype(int).to_numpy()
        drawn = draw_order(np.repeat(position, draws), contest.dataset, int(number))
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
    start from; no draw when it is already decided or a tie. The rivals are the contenders
    the leader has not yet been separated from (or tied with); once none is left, every
    other system not yet separated."""
    decision = decide_as(settings, contest, batches, errors)
    columns = ["utt_id", "draws", "expected_draws", "selection_probability"]
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
    batch, its positions in draw order, and its rivals): the rivals are the contenders the
    leader has not yet been separated from (or tied with); once none is left, every other
    system not yet separated."""
    rivals = [s for s in decision.open if s in contest.contenders] or decision.open
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
        {**decide_as(settings, contest, batches, errors).as_dict(), "notes": notes}
        for contest, batches, errors, notes in prepared
    ]


def zero_label_entry(
    dataset: str, estimates: dict[str, float], contenders: list[str], settings: WinnerSettings
) -> dict:
    """A dataset's ``winner.json`` entry before any label: undecided, the shortlist, the
    leader (the lowest zero-label estimate among the contenders) and the next contender's
    estimated difference (points)."""
    ranked = sorted(
        (s for s in estimates if s in contenders and np.isfinite(estimates[s])),
        key=lambda s: (estimates[s], s),
    )
    leader = ranked[0] if ranked else sorted(contenders)[0]
    runner = ranked[1] if len(ranked) > 1 else None
    difference = 100 * (estimates[runner] - estimates[leader]) if runner else None
    return Decision(
        dataset=dataset,
        status=UNDECIDED,
        leader=leader,
        winner=None,
        tied=[],
        contenders=list(contenders),
        runner_up=runner,
        difference=float("nan") if difference is None else difference,
        low=float("nan"),
        high=float("nan"),
        labels_used=0,
        draws=0,
        tie_margin=settings.tie_margin,
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
    """The console's first block: per dataset, the shortlist, and with labels the decision."""
    lines = ["Which system is best:"]
    for entry in entries:
        contenders = entry["contenders"]
        if entry["labels_used"] == 0:
            said = (
                f"{contenders[0]} (the only contender)"
                if len(contenders) == 1
                else f"{len(contenders)} contenders: {', '.join(contenders)}; label to decide "
                "(werest sample strategy=winner)"
            )
        elif entry["status"] == DECIDED:
            said = (
                f"{entry['winner']}, decided with {entry['labels_used']} labels: "
                f"{entry['runner_up']} is {_signed(entry['difference'])} points worse "
                f"[{_signed(entry['low'])}, {_signed(entry['high'])}]"
            )
        elif entry["status"] == TIE:
            said = (
                f"a tie within {entry['tie_margin']:g} points: {entry['winner']}, "
                f"{', '.join(entry['tied'])} ({entry['labels_used']} labels)"
            )
        else:
            to_go = entry["labels_to_go"]
            interval = (
                f"[{_signed(entry['low'])}, {_signed(entry['high'])}]"
                if entry["low"] is not None
                else "(no interval yet)"
            )
            said = (
                f"undecided after {entry['labels_used']} labels: {entry['leader']} leads "
                f"{entry['runner_up']} by {_signed(entry['difference'])} points {interval}"
                + (f"; about {to_go} more labels" if to_go else "")
            )
        lines.append(f"  {entry['dataset']}: {said}")
        lines += [f"    note: {note}" for note in entry.get("notes", [])]
    return "\n".join(lines)


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
        decisions.append({**decision.as_dict(), "notes": notes})
        sheets.append(sheet.assign(dataset=contest.dataset, n_utterances=contest.n))
    return pd.concat(sheets, ignore_index=True), decisions
