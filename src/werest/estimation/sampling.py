"""Choosing utterances for a person to transcribe: the design of a few-label estimate.

One transcribed utterance serves every system of its dataset, so the unit drawn is the
utterance, ``(dataset, utt_id)``, and each dataset is drawn on its own. The drawn utterances
go to a *labelling sheet* (:func:`draw_sample`) that records the design exactly, so an
estimator fed the labels (a prediction-powered estimate, :mod:`werest.estimation.ppi`) can weigh
each
labelled utterance by how likely it was to be drawn:

``random``
    simple random sample without replacement of ``min(budget, N)`` utterances:
    inclusion probability ``n / N``.
``stratified``
    up to ``strata`` equal-count groups of the utterances ordered by their mean predicted WER
    over the systems (:func:`mean_predicted_wer`), utterances without a prediction in a group
    of their own; the budget is shared in proportion to the groups' sizes (largest remainder,
    at least one each) and each group is a simple random sample without replacement:
    inclusion probability ``n_h / N_h``.
``active``
    ``budget`` draws *with* replacement, utterance ``i`` drawn with probability
    ``p_i = u / N + (1 - u) s_i / Σ s`` per draw (``u = uniform_share``, ``s`` from
    :func:`labelling_scores`). Every ``p_i`` is at least ``u / N``, so no weight ``1 / p_i``
    exceeds ``N / u``.

With ``budget >= N`` every strategy takes every utterance of the dataset once (a census).

The sheet (:func:`draw_sample`, sorted by dataset and utt_id) has one row per distinct drawn
utterance: ``dataset, utt_id, audio, duration`` (empty when the input has none), ``reference``
(empty: to fill in), ``strategy``, ``draws`` (times drawn: 1 without replacement),
``expected_draws`` (E[draws]: ``n/N``, ``n_h/N_h`` or ``budget * p_i``; 1 in a census),
``inclusion_probability`` (P[drawn at least once]: equal to ``expected_draws`` without
replacement, ``1 - (1 - p_i)**budget`` for ``active``), ``selection_probability``
(``expected_draws`` / the dataset's number of draws, ``min(budget, N)``: ``p_i`` for
``active``, ``1/N`` in a census; it sums to 1 over a dataset's utterances), ``n_utterances``
(the dataset's N), ``budget``, ``stratum`` (``stratified``: 1 = the lowest predicted WER,
unscored utterances last; empty otherwise and in a census), ``sheet`` (its number) and
``draw_order`` (:func:`recorded_order`: the 0-based places of the row's draws in the order
they were made: the order ``random`` drew its sample in, stratum by stratum for
``stratified``; ``active``'s counts and a census in a uniformly random order from the
dataset's generator, which is how draws made one at a time would come).
``Σ draws_i · x_i / expected_draws_i`` over a dataset's rows is an unbiased estimate of
``Σ x_i`` over all its utterances, for every strategy.

Each dataset's generator is seeded from ``seed`` and a stable hash of the dataset's name
(:func:`dataset_rng`), and its utterances are taken in ``utt_id`` order, so a draw does not
depend on the table's row order nor on the other datasets in it.
"""

from __future__ import annotations

import hashlib
from itertools import pairwise

import numpy as np
import pandas as pd

from werest.columns import ORDER_SEPARATOR, SHEET_COLUMNS, UTTERANCE
from werest.errors import ConfigError, InputError
from werest.features.agreement import STATUS_OK

#: the strategies :func:`draw_sample` knows (``winner`` is :func:`werest.estimation.label_round.
#: winner_draw`'s: it needs the decision so far)
STRATEGIES: tuple[str, ...] = ("random", "stratified", "active")

#: added to each predicted WER in :func:`labelling_scores`, so an utterance predicted right by
#: every system keeps a score of its length: the model may be wrong about it too
ACTIVE_FLOOR = 0.1


# --------------------------------------------------------------------------- utterances, scores


def utterance_list(table: pd.DataFrame) -> pd.DataFrame:
    """One row per ``(dataset, utt_id)`` of a transcripts table, sorted.

    Parameters
    ----------
    table : a transcripts table (:func:`werest.ingest.table.read_table`), one row per system.

    Returns
    -------
    ``dataset, utt_id, audio, duration``: ``audio`` and ``duration`` are the first non-null
    value among the utterance's rows (null when the table has no such column or no value).
    """
    columns = [c for c in ("audio", "duration") if c in table.columns]
    if columns:
        out = table.groupby(UTTERANCE, sort=True)[columns].first().reset_index()
    else:
        out = table[UTTERANCE].drop_duplicates().sort_values(UTTERANCE).reset_index(drop=True)
    if "audio" not in out.columns:
        out["audio"] = pd.Series([pd.NA] * len(out), dtype=object)
    if "duration" not in out.columns:
        out["duration"] = np.nan
    return out[[*UTTERANCE, "audio", "duration"]]


def _usable(estimated: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`werest.estimation.pipeline.estimate_frame` output that carry a
    prediction."""
    done = estimated[estimated["status"] == STATUS_OK]
    return done[np.isfinite(done["predicted_wer"].to_numpy(dtype=float))]


def mean_predicted_wer(estimated: pd.DataFrame) -> pd.Series:
    """Each utterance's mean predicted WER over the systems estimated on it (the ``stratified``
    strategy's score).

    Parameters
    ----------
    estimated : per-target-row output of :func:`werest.estimation.pipeline.estimate_frame`
    (``dataset,
        utt_id, system, status, predicted_wer``).

    Returns
    -------
    A Series indexed by ``(dataset, utt_id)``; utterances with no ``ok`` row are absent.
    """
    done = _usable(estimated)
    return done.groupby(UTTERANCE, sort=True)["predicted_wer"].mean().rename("score")


def labelling_scores(estimated: pd.DataFrame, floor: float = ACTIVE_FLOOR) -> pd.Series:
    """Each utterance's ``active`` score: a proxy for the spread of the model's error on it.

    ``s_i = sqrt(mean over systems of (max(proxy_words, 1) * (predicted_wer + floor))**2)``,
    over the systems with status ``ok``. A prediction-powered estimate's variance is smallest
    when utterances are drawn with probability proportional to the spread of the residual
    (true errors minus predicted errors); that residual grows with the utterance's length and
    with how much the systems disagree on it (a high predicted WER), and ``floor`` keeps an
    utterance every system gets right from a score of zero.

    Parameters
    ----------
    estimated : per-target-row output of :func:`werest.estimation.pipeline.estimate_frame`
    (``dataset,
        utt_id, system, status, predicted_wer, proxy_words``).
    floor : added to each predicted WER (:data:`ACTIVE_FLOOR`).

    Returns
    -------
    A Series indexed by ``(dataset, utt_id)``; utterances with no ``ok`` row are absent.
    """
    done = _usable(estimated)
    words = done["proxy_words"].to_numpy(dtype=float)
    words = np.where(np.isfinite(words), np.maximum(words, 1.0), 1.0)
    terms = (words * (done["predicted_wer"].to_numpy(dtype=float) + floor)) ** 2
    squares = pd.Series(terms, index=pd.MultiIndex.from_frame(done[UTTERANCE]))
    return np.sqrt(squares.groupby(level=UTTERANCE, sort=True).mean()).rename("score")


def expected_half_width(
    estimated: pd.DataFrame,
    budget: int,
    level: float = 0.95,
    probabilities: pd.Series | None = None,
    pilot: dict[str, tuple[int, np.ndarray]] | None = None,
) -> pd.Series:
    """Per dataset, the half-width (a fraction) of the 95 % interval ``werest estimate
    labels=…`` is expected to give from ``budget`` more labels: :func:`promised_half_width` of
    the dataset's predictions (ê = predicted WER × n̂, r̂ = n̂: the corpus estimate's terms)
    under the sheet's design: ``probabilities`` (indexed by ``(dataset, utt_id)``: each
    utterance's probability per draw, :func:`draw_probabilities`) for draws with
    replacement, None for a simple random sample. ``pilot``: dataset → (labelled draws m,
    their standard errors per system) of the labels already in; the promise for its m +
    ``budget`` labels is then :func:`pilot_half_width`. A dataset of at most ``budget``
    utterances is taken whole: 0."""
    done = _usable(estimated)
    words = np.maximum(done["proxy_words"].to_numpy(dtype=float), 1.0)
    frame = done[[*UTTERANCE, "system"]].assign(
        e=done["predicted_wer"].to_numpy(dtype=float) * words, r=words
    )
    out = {}
    pilot = pilot or {}
    for dataset, rows in frame.groupby("dataset", sort=True):
        labelled, se = pilot.get(dataset, (0, None))
        total = budget + labelled
        wide = rows.pivot_table(index="utt_id", columns="system", values=["e", "r"])
        e = wide["e"].to_numpy(dtype=float)
        p = None
        if probabilities is not None:
            p = probabilities.loc[dataset].reindex(wide.index.astype(str)).to_numpy(dtype=float)
        out[dataset] = prior = promised_half_width(
            np.nan_to_num(e),
            np.nan_to_num(wide["r"].to_numpy(dtype=float)),
            np.isfinite(e),
            total,
            level,
            probabilities=p,
        )
        if labelled and prior > 0:
            out[dataset] = pilot_half_width(se, labelled, total, prior, level)
    return pd.Series(out, name="half_width", dtype=float)


def draw_probabilities(scores: pd.Series, uniform_share: float) -> pd.Series:
    """``active``'s per-draw probabilities of the scored utterances (:func:`labelling_scores`),
    dataset by dataset (:func:`active_probabilities`), indexed as ``scores``."""
    parts = [
        pd.Series(active_probabilities(s.to_numpy(dtype=float), uniform_share), index=s.index)
        for _, s in scores.groupby(level="dataset", sort=True)
    ]
    return pd.concat(parts) if parts else scores.iloc[:0]


#: :func:`promised_half_width`: the share of the predictions' own spread a labelled estimate
#: keeps (the prediction-powered estimate removes the rest) ...
PROMISE_SPREAD = 0.7
#: ... and the weight of each labelled utterance's count noise beside independent Poisson
#: counts (1); both measured on the shared domains held out at 50 labels (the recalibration
#: explains part of the count noise: 0.5).
PROMISE_OVERDISPERSION = 0.5


def promised_half_width(
    pred_errors: np.ndarray,
    pred_words: np.ndarray,
    present: np.ndarray,
    budget: int,
    level: float = 0.95,
    *,
    probabilities: np.ndarray | None = None,
    spread: float = PROMISE_SPREAD,
    overdispersion: float = PROMISE_OVERDISPERSION,
) -> float:
    """The half-width ``werest sample`` promises for one dataset ((N, S) predictions), before
    any label: the median over its systems of t · √V / mean r̂, with V the variance of the
    mean of n = ``budget`` labelled terms under the sheet's design.

    Each utterance's labelled term is modelled from its predictions: the part of its
    residual the predictions do not remove, ``spread`` (:data:`PROMISE_SPREAD`) times
    ĝᵢ − mean ĝ with ĝ = ê − θ r̂ and θ = Σ ê / Σ r̂, and the count noise of its errors
    (Poisson, overdispersed by κ = ``overdispersion``, :data:`PROMISE_OVERDISPERSION`; the
    same count noise sets the interval's floor, :func:`werest.estimation.ppi.poisson_se`):
    zᵢ² = spread² (ĝᵢ − mean ĝ)² + κ θ r̂ᵢ. A simple random sample (``probabilities``
    None) gives V = (spread² Var(ĝ) + κ θ mean r̂) / n (no finite-population factor: the
    interval has none); draws with replacement at probabilities pᵢ
    (``active``, the Horvitz–Thompson weights 1 / (N pᵢ)) give V = Σ zᵢ² / (N² pᵢ) / n,
    so a design that draws the large residuals more often promises a narrower interval.
    Both constants were measured on the shared domains held out (``werest evaluate
    experiment=few_labels``). Nothing before the labels tells how well the predictions
    follow the truth on this audio: :func:`pilot_half_width` is the promise a first batch
    of labels measures. 0 for a census; NaN without a system."""
    from scipy import stats

    halves = []
    for k in range(pred_errors.shape[1]):
        mine = present[:, k]
        n_frame = int(mine.sum())
        if n_frame < 2:
            continue
        n = min(budget, n_frame)
        if n >= n_frame:
            halves.append(0.0)
            continue
        e, r = pred_errors[mine, k], pred_words[mine, k]
        theta = e.sum() / r.sum()
        residual = e - theta * r
        noise = overdispersion * theta * r
        if probabilities is None:
            variance = (spread**2 * residual.var(ddof=1) + noise.mean()) / n
        else:
            z2 = spread**2 * (residual - residual.mean()) ** 2 + noise
            p = np.asarray(probabilities, dtype=float)[mine]
            p = np.where(np.isfinite(p) & (p > 0), p, np.nan)
            p = np.nan_to_num(p / np.nansum(p), nan=1.0 / n_frame)
            variance = float(np.sum(z2 / (n_frame**2 * p))) / n
        t = stats.t.ppf(0.5 + level / 2, max(n - 1, 1))
        halves.append(float(t * np.sqrt(variance) / r.mean()))
    return float(np.median(halves)) if halves else float("nan")


#: :func:`pilot_half_width`: the labels the prediction-only promise is worth beside a pilot's
#: measured spread (a pilot of this many labels weighs as much as the prior).
PILOT_PRIOR_LABELS = 10


def pilot_half_width(
    se: np.ndarray,
    labelled: int,
    total: int,
    prior: float,
    level: float = 0.95,
    prior_labels: int = PILOT_PRIOR_LABELS,
) -> float:
    """The half-width to expect from ``total`` labels once ``labelled`` of them are in: the
    pilot's own standard errors ``se`` (S,: :attr:`werest.estimation.ppi.Estimates.se`, its
    Poisson floor and unseen-tail term included) scale as 1/√labels, so t · se · √(labelled /
    total), median over the systems, pooled with the prediction-only promise ``prior``
    (:func:`promised_half_width`) as variances weighted by ``labelled`` and
    ``prior_labels`` (:data:`PILOT_PRIOR_LABELS`): a pilot of 10 says as much as the
    predictions alone, one of 40 four times more. What labels narrow depends on how well
    the predictions follow the truth on this audio, which only labels measure: on the shared
    domains held out, a pilot of 10 of 50 labels keeps its promise where the prediction-only
    one cannot (``werest evaluate experiment=few_labels``, docs/few_labels.md)."""
    from scipy import stats

    if total <= 0 or labelled <= 0:
        return prior
    se = np.asarray(se, dtype=float)
    se = se[np.isfinite(se)]
    if not len(se):
        return prior
    measured = float(np.median(stats.t.ppf(0.5 + level / 2, max(total - 1, 1)) * se))
    measured *= np.sqrt(labelled / total)
    if not np.isfinite(prior):
        return measured
    weight = labelled / (labelled + prior_labels)
    return float(np.sqrt(weight * measured**2 + (1 - weight) * prior**2))


# --------------------------------------------------------------------------- the draw


def next_sheet(labels: pd.DataFrame | None) -> int:
    """The number of the sheet about to be drawn (its ``sheet`` column, and its generator's
    seed): 0 without labels, else one past the highest sheet number of ``labels``
    (:func:`werest.estimation.labels.read_labels`: the number each sheet records, or a sheet
    without one its place in the list)."""
    return 0 if labels is None else int(labels["sheet"].max()) + 1


def recorded_order(drawn: np.ndarray, n_utterances: int) -> np.ndarray:
    """A sheet's ``draw_order`` cells from its draws in the order they were made (``drawn``:
    utterance positions, one per draw): per utterance, the 0-based indices of its draws,
    joined with ``|`` ("" for an utterance not drawn)."""
    drawn = np.asarray(drawn, dtype=int)
    by_utterance = np.argsort(drawn, kind="stable")  # each utterance's draws in draw order
    starts = np.searchsorted(drawn[by_utterance], np.arange(n_utterances + 1))
    return np.array(
        [
            ORDER_SEPARATOR.join(map(str, by_utterance[start:stop]))
            for start, stop in pairwise(starts)
        ],
        dtype=object,
    )


def dataset_rng(seed: int, dataset: str) -> np.random.Generator:
    """The generator of one dataset's draw: ``default_rng([seed, h])`` with ``h`` the first
    8 bytes of the BLAKE2b hash of the dataset's name (stable across runs and machines,
    unlike Python's ``hash``)."""
    digest = hashlib.blake2b(str(dataset).encode("utf-8"), digest_size=8).digest()
    return np.random.default_rng([int(seed), int.from_bytes(digest, "little")])


def draw_sample(
    utterances: pd.DataFrame,
    budget: int,
    strategy: str = "random",
    seed: int = 0,
    scores: pd.Series | None = None,
    uniform_share: float = 0.5,
    strata: int = 4,
    sheet_number: int = 0,
) -> pd.DataFrame:
    """Draw ``budget`` utterances per dataset for a person to transcribe: the labelling sheet.

    Parameters
    ----------
    utterances : one row per ``(dataset, utt_id)`` (:func:`utterance_list`), optionally with
        ``audio`` and ``duration``.
    budget : utterances (``random``, ``stratified``) or draws (``active``) per dataset.
    strategy : ``random``, ``stratified`` or ``active`` (module docstring).
    seed : a whole number >= 0; with the dataset's name it seeds each dataset's draw.
    scores : indexed by ``(dataset, utt_id)``: :func:`mean_predicted_wer` for
        ``stratified``, :func:`labelling_scores` for ``active`` (ignored by ``random``).
        An utterance without a score is a stratum of its own (``stratified``) or takes its
        dataset's median score (``active``).
    uniform_share : ``active``: the share ``u`` in (0, 1] of each draw's probability spread
        evenly (``p_i >= u / N``); 1 is a with-replacement simple random sample.
    strata : ``stratified``: the most score groups; never more than the budget (with a
        group for the unscored utterances counted), so every group gets at least one.
    sheet_number : how many sheets are labelled already (``werest sample labels=…``): each
        sheet after the first draws from its own generator, so it is independent of the
        earlier ones drawn with the same ``seed`` (the same generator would redraw the
        first sheet's utterances, and the sheets together would not be one design).

    Returns
    -------
    The sheet (its columns: the module docstring), ``sheet`` its ``sheet_number``.

    Raises
    ------
    ConfigError : a bad budget, strategy, seed, uniform_share or strata, or no scores for
        ``stratified``/``active``.
    InputError : no utterances.
    """
    budget, seed, strata = check_design(budget, strategy, seed, uniform_share, strata)
    if strategy != "random" and scores is None:
        raise ConfigError(f"strategy={strategy} needs per-utterance scores")
    parts = []
    for dataset, group in _drawable(utterances, scores).groupby("dataset", sort=True):
        rng = dataset_rng(seed, f"{dataset}#{sheet_number}" if sheet_number else str(dataset))
        group = group.reset_index(drop=True)
        parts.append(_dataset_draw(group, budget, strategy, uniform_share, strata, rng))
    sheet = pd.concat(parts, ignore_index=True)
    sheet["strategy"] = strategy
    sheet["uniform_share"] = uniform_share if strategy == "active" else np.nan
    return as_sheet(sheet, budget, sheet_number)


def _drawable(utterances: pd.DataFrame, scores: pd.Series | None) -> pd.DataFrame:
    """The utterances to draw from, in ``utt_id`` order, with ``audio`` and ``duration``
    (empty where the input has none) and their ``score`` when there are scores; InputError
    for none, or for an utterance listed twice."""
    if len(utterances) == 0:
        raise InputError("the table has no rows: no utterance to draw")
    frame = utterances.copy()
    for column in ("audio", "duration"):
        if column not in frame.columns:
            frame[column] = pd.NA if column == "audio" else np.nan
    frame = frame.sort_values(UTTERANCE, kind="stable").reset_index(drop=True)
    if frame.duplicated(UTTERANCE).any():
        first = frame.loc[frame.duplicated(UTTERANCE), UTTERANCE].iloc[0].tolist()
        raise InputError(f"utterance {tuple(first)} is listed twice: one row per utterance")
    if scores is not None:
        index = pd.MultiIndex.from_frame(frame[UTTERANCE])
        frame["score"] = pd.to_numeric(scores.reindex(index), errors="coerce").to_numpy(float)
    return frame


def _dataset_draw(
    group: pd.DataFrame,
    budget: int,
    strategy: str,
    uniform_share: float,
    strata: int,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """One dataset's draw by ``strategy`` (a census where the budget covers it): the rows of
    ``group`` drawn at least once, with their design columns (:func:`_design`) and the
    dataset's ``n_utterances``."""
    if budget >= len(group):
        design = _census(len(group), rng)
    elif strategy == "random":
        design = _random(len(group), budget, rng)
    elif strategy == "stratified":
        design = _stratified(group["score"].to_numpy(float), budget, strata, rng)
    else:
        design = _active(group["score"].to_numpy(float), budget, uniform_share, rng)
    chosen = design["draws"] > 0
    part = group.loc[chosen, [*UTTERANCE, "audio", "duration"]].reset_index(drop=True)
    for column, values in design.items():
        part[column] = np.asarray(values)[chosen]
    part["n_utterances"] = len(group)
    return part


def as_sheet(rows: pd.DataFrame, budget: int, sheet_number: int = 0) -> pd.DataFrame:
    """Drawn rows (``dataset, utt_id, strategy, draws, expected_draws, draw_order, ...``) as a
    labelling sheet: :data:`SHEET_COLUMNS`, the references empty, ``sheet`` the sheet's
    number (:func:`next_sheet`), the design columns a strategy does not use empty."""
    sheet = rows.copy()
    sheet["reference"] = ""
    sheet["budget"] = budget
    sheet["sheet"] = int(sheet_number)
    for column in ("audio", "leader", "rivals", "draw_order"):
        if column not in sheet:
            sheet[column] = ""
    for column in ("duration", "stratum", "uniform_share", "inclusion_probability"):
        if column not in sheet:
            sheet[column] = np.nan
    sheet["stratum"] = sheet["stratum"].astype("Int64")
    sheet["draws"] = sheet["draws"].astype(int)
    return sheet[SHEET_COLUMNS].sort_values(UTTERANCE, kind="stable").reset_index(drop=True)


def check_design(
    budget: int, strategy: str, seed: int = 0, uniform_share: float = 0.5, strata: int = 4
) -> tuple[int, int, int]:
    """Check :func:`draw_sample`'s settings (the CLI's schema has already typed them); returns
    ``(budget, seed, strata)`` as ints.

    Raises
    ------
    ConfigError : naming the setting: ``budget`` or ``strata`` not a whole number >= 1,
        ``seed`` not a whole number >= 0, an unknown ``strategy``, ``uniform_share`` outside
        (0, 1].
    """
    for name, value, minimum in (("budget", budget, 1), ("seed", seed, 0), ("strata", strata, 1)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
            raise ConfigError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    if strategy not in STRATEGIES:
        raise ConfigError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    if not isinstance(uniform_share, int | float) or not 0 < uniform_share <= 1:
        raise ConfigError(f"uniform_share must be in (0, 1], got {uniform_share!r}")
    return int(budget), int(seed), int(strata)


def _design(
    draws: np.ndarray,
    expected: np.ndarray,
    inclusion: np.ndarray,
    selection: np.ndarray,
    drawn: np.ndarray,
    stratum: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """A dataset's design columns; ``drawn``: the utterances' positions in draw order (one
    per draw), for ``draw_order``."""
    n = len(draws)
    return {
        "draws": draws,
        "expected_draws": expected,
        "inclusion_probability": inclusion,
        "selection_probability": selection,
        "stratum": stratum if stratum is not None else np.full(n, np.nan),
        "draw_order": recorded_order(drawn, n),
    }


def _census(n_utterances: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    ones = np.ones(n_utterances)
    order = rng.permutation(n_utterances)  # nothing is drawn: an order to read them in
    return _design(ones.astype(int), ones, ones, ones / n_utterances, order)


def _random(n_utterances: int, budget: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    draws = np.zeros(n_utterances, dtype=int)
    drawn = rng.choice(n_utterances, size=budget, replace=False)  # in the order drawn
    draws[drawn] = 1
    share = np.full(n_utterances, budget / n_utterances)
    return _design(draws, share, share, share / budget, drawn)


def _stratified(
    scores: np.ndarray, budget: int, strata: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    labels = stratum_labels(scores, budget, strata)
    sizes = np.bincount(labels)
    allocation = allocate(sizes, budget)
    draws = np.zeros(len(scores), dtype=int)
    drawn = []
    for stratum, (size, n) in enumerate(zip(sizes, allocation, strict=True)):
        members = np.flatnonzero(labels == stratum)
        drawn.append(members[rng.choice(size, size=n, replace=False)])
        draws[drawn[-1]] = 1
    share = (allocation / sizes)[labels]
    return _design(draws, share, share, share / budget, np.concatenate(drawn), labels + 1.0)


def stratum_labels(scores: np.ndarray, budget: int, strata: int) -> np.ndarray:
    """Stratum of each utterance (0-based, utterances in ``utt_id`` order): up to ``strata``
    equal-count groups by score rank (ties in ``utt_id`` order; group sizes differ by at most
    one), the unscored (NaN) utterances in a last group of their own. There are never more
    groups than ``budget``: a budget of 1 is one group (a simple random sample)."""
    scored = np.isfinite(scores)
    n_scored = int(scored.sum())
    most = min(strata, budget)
    labels = np.zeros(len(scores), dtype=int)
    if n_scored == 0 or (n_scored < len(scores) and most < 2):
        return labels  # one group
    groups = min(most - (n_scored < len(scores)), n_scored)
    positions = np.flatnonzero(scored)
    order = positions[np.argsort(scores[scored], kind="stable")]  # ties: utt_id order
    labels[order] = np.arange(n_scored) * groups // n_scored
    labels[~scored] = groups
    return labels


def allocate(sizes: np.ndarray, budget: int) -> np.ndarray:
    """Proportional allocation of ``budget`` over strata of ``sizes`` by largest remainder,
    then at least one per stratum (a stratum at 0 takes one from the stratum most above its
    quota). Needs ``len(sizes) <= budget < sizes.sum()``; no stratum gets more than its
    size."""
    sizes = np.asarray(sizes, dtype=int)
    quotas = budget * sizes / sizes.sum()
    allocation = np.floor(quotas).astype(int)
    left = budget - int(allocation.sum())
    by_remainder = np.argsort(-(quotas - allocation), kind="stable")
    allocation[by_remainder[:left]] += 1
    for stratum in np.flatnonzero(allocation == 0):
        surplus = np.where(allocation > 1, allocation - quotas, -np.inf)
        donor = int(np.argmax(surplus))
        allocation[donor] -= 1
        allocation[stratum] += 1
    return allocation


def active_probabilities(scores: np.ndarray, uniform_share: float) -> np.ndarray:
    """Per-draw probabilities ``p_i = u / N + (1 - u) s_i / Σ s`` (``u = uniform_share``); a
    missing score takes the median of the others (all missing, or all zero: ``p_i = 1/N``).
    They sum to 1 and each is at least ``u / N``."""
    scores = np.asarray(scores, dtype=float)
    n = len(scores)
    known = np.isfinite(scores)
    fill = float(np.median(scores[known])) if known.any() else 1.0
    s = np.clip(np.where(known, scores, fill), 0.0, None)
    shape = s / s.sum() if s.sum() > 0 else np.full(n, 1.0 / n)
    p = uniform_share / n + (1.0 - uniform_share) * shape
    return p / p.sum()


def _active(
    scores: np.ndarray, budget: int, uniform_share: float, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    p = active_probabilities(scores, uniform_share)
    draws = rng.multinomial(budget, p)
    # the counts in a uniformly random order: distributed as draws made one at a time
    drawn = rng.permutation(np.repeat(np.arange(len(p)), draws))
    return _design(draws, budget * p, 1.0 - (1.0 - p) ** budget, p, drawn)
