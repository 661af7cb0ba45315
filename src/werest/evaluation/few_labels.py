"""``werest evaluate experiment=few_labels``: prediction-powered WER from a few labels, measured
on domains the model never saw.

Every shared domain is held out in turn (:func:`werest.evaluation.lodo.evaluate_lodo`, estimated as
``werest estimate`` estimates for a user), which gives the model's per-utterance predictions on
data it was not trained on, with the truth. For each budget n and each sampling strategy, n
utterances of each dataset are drawn many times, as ``werest sample`` draws them, and every
system's corpus WER is estimated from the draws three ways:

* ``ppi``: prediction-powered (:mod:`werest.estimation.ppi`);
* ``classical``: the labelled draws alone (Σ w e / Σ w r);
* ``zero_label``: no label at all (the model's estimate with its cross-conformal interval).

Per domain and overall it reports mean |estimate − truth| in points, the worst domain, the
95 % interval's coverage and mean width, for each interval method of :mod:`werest.estimation.ppi`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd

from werest import logs
from werest.columns import KEY
from werest.estimation.labels import LabelSettings, prediction_rows
from werest.estimation.ppi import (
    METHODS,
    DatasetDraws,
    estimate_draws,
    quantile,
)
from werest.estimation.ppi_frames import DatasetFrame, dataset_frames
from werest.estimation.sampling import (
    ACTIVE_FLOOR,
    STRATEGIES,
    active_probabilities,
    labelling_scores,
    pilot_half_width,
    promised_half_width,
)
from werest.evaluation.few_labels_summary import (
    DRAW_HOLDS,
    PROMISE_FACTOR,
    best_system,
    overall,
    promise_ratios,
    summarise_draws,
    zero_domain_summary,
    zero_label_errors,
)
from werest.evaluation.lodo_summary import cross_conformal
from werest.evaluation.settings import BUDGETS
from werest.evaluation.stress import (
    LOOP_WORDS,
    STRESS_DOMAIN,
    STRESS_DOMAINS,
    STRESS_MIN_UTTERANCES,
    TAIL_DOMAIN,
    stressed_frames,
    tail_frames,
)
from werest.features.agreement import STATUS_OK
from werest.model.intervals import ConformalInterval

# the stress copies (werest.evaluation.stress) and the draws' summaries
# (werest.evaluation.few_labels_summary) are importable from here too, as before they moved
__all__ = [
    "BUDGETS",
    "DRAW_HOLDS",
    "LOOP_WORDS",
    "ORACLE",
    "PROMISE_FACTOR",
    "STRESS_DOMAIN",
    "STRESS_DOMAINS",
    "STRESS_MIN_UTTERANCES",
    "TAIL_DOMAIN",
    "FewLabelResult",
    "FewLabelSettings",
    "bars",
    "best_system",
    "domain_map",
    "evaluate_few_labels",
    "frame_scores",
    "frames_from_heldout",
    "labelled_draws",
    "oracle_scores",
    "overall",
    "pilot_promise",
    "promise_ratios",
    "simulate",
    "stressed_frames",
    "summarise_draws",
    "tail_frames",
    "zero_domain_summary",
    "zero_label_cells",
    "zero_label_errors",
]

log = logging.getLogger(__name__)


#: A strategy only this experiment has: ``active`` with scores from the *true* residuals
#: (√ mean over systems of (e − ê)², + 0.5), the best any score of the predictions could do.
ORACLE = "oracle"


@dataclass(frozen=True)
class FewLabelSettings:
    """``few_labels:`` of ``werest evaluate experiment=few_labels``.

    Parameters
    ----------
    budgets : labels per dataset to draw (10: where too few starts).
    n_draws : how many times each budget is drawn per dataset and strategy.
    strategies : ``random`` and/or ``active`` (as ``werest sample``), and ``oracle``
        (:data:`ORACLE`: the ceiling of active sampling).
    uniform_share : ``active``'s share of uniform probability (its lower bound).
    level : the intervals' coverage.
    n_resamples : bootstrap resamples per estimate.
    seed : the draws' seed.
    recalibrate : as ``werest estimate``'s ``few_labels.recalibrate``.
    stress : the share of each dataset's utterances made catastrophic in its heavy-tail
        stress copy (:func:`stressed_frames`; 0: no stress set).
    tail : the share of each dataset's utterances in its long-tail stress copy
        (:func:`tail_frames`; 0: none) ...
    tail_errors : ... and the share of the hallucinating systems' errors they carry.
    pilot : the first labels of each draw taken as a pilot: the promise ``werest sample
        labels=`` makes from them for the whole budget (:func:`pilot_promise`; 0: none).
    """

    budgets: tuple[int, ...] = BUDGETS
    n_draws: int = 200
    strategies: tuple[str, ...] = ("random", "active")
    uniform_share: float = 0.5
    level: float = 0.95
    n_resamples: int = 500
    seed: int = 0
    recalibrate: bool = True
    stress: float = 0.0
    tail: float = 0.0
    tail_errors: float = 0.3
    pilot: int = 20

    def __post_init__(self) -> None:
        object.__setattr__(self, "budgets", tuple(int(b) for b in self.budgets))
        object.__setattr__(self, "strategies", tuple(str(s) for s in self.strategies))
        unknown = sorted(set(self.strategies) - {*STRATEGIES, ORACLE})
        if unknown:
            raise ValueError(f"few_labels.strategies: unknown {unknown[0]!r} ({STRATEGIES})")


def frame_scores(frame: DatasetFrame) -> pd.Series:
    """``werest sample``'s active scores (:func:`werest.estimation.sampling.labelling_scores`)
    of a frame's utterances, from its predictions: √ mean over systems of
    (ê + floor·n)², indexed by (dataset, utt_id)."""
    terms = (frame.pred_errors + ACTIVE_FLOOR * np.maximum(frame.pred_words, 1.0)) ** 2
    count = np.maximum(frame.present.sum(axis=1), 1)
    values = np.sqrt(np.where(frame.present, terms, 0.0).sum(axis=1) / count)
    index = pd.MultiIndex.from_arrays(
        [[frame.dataset] * frame.n, frame.utterances], names=["dataset", "utt_id"]
    )
    return pd.Series(values, index=index, name="score")


def frames_from_heldout(utterances: pd.DataFrame) -> dict[str, DatasetFrame]:
    """:class:`werest.estimation.ppi_frames.DatasetFrame` per dataset from
    :attr:`werest.evaluation.lodo.LodoResult.utterances`
    (every row labelled): predictions weighted as the corpus estimate weighs them."""
    truth = utterances[[*KEY, "word_errors", "ref_words"]]
    return dataset_frames(prediction_rows(utterances.assign(status=STATUS_OK), truth))


def simulate(
    frames: dict[str, DatasetFrame],
    domains: dict[str, str],
    settings: FewLabelSettings,
    scores: pd.Series,
) -> pd.DataFrame:
    """One row per (domain, dataset, system, strategy, budget, draw, estimator, method): the
    estimate, its interval and the truth. ``scores``: ``werest sample``'s active scores
    (:func:`werest.estimation.sampling.labelling_scores`) by (dataset, utt_id)."""
    rows = []
    rng = np.random.default_rng(settings.seed)
    work = [(ds, f) for ds, f in frames.items() if f.n >= 2]
    for dataset, frame in logs.track(work, desc="evaluate (datasets)", unit="dataset"):
        rows += _simulate_dataset(dataset, frame, settings, scores, rng)
    out = pd.concat(rows, ignore_index=True)
    out["domain"] = out["dataset"].map(domains)
    return out


def _simulate_dataset(
    dataset: str,
    frame: DatasetFrame,
    settings: FewLabelSettings,
    scores: pd.Series,
    rng: np.random.Generator,
) -> list[pd.DataFrame]:
    """:func:`simulate`'s rows of one dataset: each strategy's draws of each budget smaller
    than the dataset, from ``rng``."""
    rows = []
    truth = frame.truth()
    pop = frame.population()
    probs = {
        "random": np.full(frame.n, 1.0 / frame.n),
        "active": active_probabilities(
            scores.loc[dataset].reindex(frame.utterances).to_numpy(dtype=float),
            settings.uniform_share,
        ),
        ORACLE: active_probabilities(oracle_scores(frame), settings.uniform_share),
    }
    for strategy in settings.strategies:
        for budget in settings.budgets:
            if budget >= frame.n:
                continue
            promise = promised_half_width(
                frame.pred_errors,
                frame.pred_words,
                frame.present,
                budget,
                settings.level,
                probabilities=None if strategy == "random" else probs[strategy],
            )
            for draw in range(settings.n_draws):
                if strategy == "random":
                    picked = rng.choice(frame.n, budget, replace=False)
                else:  # active and oracle: with replacement, as werest sample draws
                    picked = rng.choice(frame.n, budget, replace=True, p=probs[strategy])
                weight = 1.0 / (frame.n * probs[strategy][picked])
                draws = labelled_draws(frame, picked, weight, settings, draw, pop)
                est = estimate_draws(
                    draws,
                    shared_lambda=LabelSettings().shared_lambda,
                    method="bootstrap",
                    level=settings.level,
                    n_resamples=settings.n_resamples,
                    seed=int(rng.integers(2**31)),
                )
                pilot = pilot_promise(frame, picked, weight, budget, promise, settings, draw)
                rows.append(
                    _rows(est, truth, settings.level, budget).assign(
                        dataset=dataset,
                        strategy=strategy,
                        draw=draw,
                        promise=promise,
                        pilot_promise=pilot,
                    )
                )
    return rows


def labelled_draws(
    frame: DatasetFrame,
    rows: np.ndarray,
    weight: np.ndarray,
    settings: FewLabelSettings,
    seed: int,
    pop: dict | None = None,
) -> DatasetDraws:
    """The draws ``rows`` (weights ``weight``) as ``werest estimate labels=`` reads them:
    recalibrated on themselves with ``settings.recalibrate``, else as drawn (``pop``: the
    frame's population sums, computed when None)."""
    if settings.recalibrate:
        return frame.recalibrated_draws(rows, weight, seed=seed)
    return frame.draws(rows, weight, pop)


def pilot_promise(
    frame: DatasetFrame,
    picked: np.ndarray,
    weight: np.ndarray,
    budget: int,
    prior: float,
    settings: FewLabelSettings,
    seed: int,
) -> float:
    """The promise ``werest sample labels=pilot budget=n − pilot`` makes for ``budget`` labels
    once the first ``settings.pilot`` of the draw are in (the user's first sheet; the rest is
    the next one, drawn as the first was): :func:`werest.estimation.sampling.pilot_half_width`
    of the pilot's own t interval. NaN when the budget is no larger than the pilot."""
    size = settings.pilot
    if not 0 < size < budget:
        return float("nan")
    draws = labelled_draws(frame, picked[:size], weight[:size], settings, seed)
    est = estimate_draws(
        draws, shared_lambda=LabelSettings().shared_lambda, method="t", level=settings.level
    )
    return pilot_half_width(est.se, size, budget, prior, settings.level)


def _rows(est, truth: np.ndarray, level: float, budget: int) -> pd.DataFrame:
    """Every estimator × interval method of one draw (long form). ``ppi`` is what
    ``werest estimate`` reports (the unbiased point, ``few_labels.shrink=false``),
    ``ppi_shrunk`` the point shrunk toward the zero-label estimate inside the same interval
    (:func:`werest.estimation.ppi.shrink`, ``few_labels.shrink=true``)."""
    parts = []
    alpha = (1 - level) / 2
    q = {method: quantile(method, level, budget) for method in ("normal", "t")}
    reported, other = (est.ppi, est.unshrunk) if LabelSettings().shrink else (est.unshrunk, est.ppi)
    for estimator, point, centre, se, boot in (
        ("ppi", reported, est.unshrunk, est.se, est.boot),
        (
            "ppi_shrunk" if not LabelSettings().shrink else "ppi_unshrunk",
            other,
            est.unshrunk,
            est.se,
            est.boot,
        ),
        ("classical", est.classical, est.classical, est.se_classical, est.boot_classical),
    ):
        for method in METHODS:
            if method == "bootstrap":
                low, high = np.nanquantile(boot, [alpha, 1 - alpha], axis=0)
            else:
                low, high = centre - q[method] * se, centre + q[method] * se
            point = np.clip(point, low, high) if estimator.startswith("ppi") else point
            parts.append(
                pd.DataFrame(
                    {
                        "system": est.systems,
                        "budget": budget,
                        "estimator": estimator,
                        "method": method,
                        "estimate": point,
                        "low": low,
                        "high": high,
                        "wer": truth,
                        "lam": est.lam if estimator != "classical" else 0.0,
                        "n_labelled": est.n_labelled,
                    }
                )
            )
    out = pd.concat(parts, ignore_index=True)
    return out[out["n_labelled"] > 0]  # a system absent from every drawn utterance: no estimate


def oracle_scores(frame: DatasetFrame) -> np.ndarray:
    """:data:`ORACLE`'s scores: each utterance's root mean square residual over its systems
    (true minus predicted errors), + 0.5."""
    residual = np.where(frame.present, np.nan_to_num(frame.errors) - frame.pred_errors, 0.0)
    count = np.maximum(frame.present.sum(axis=1), 1)
    return np.sqrt((residual**2).sum(axis=1) / count) + 0.5


def zero_label_cells(
    frames: dict[str, DatasetFrame], domains: dict[str, str], interval: ConformalInterval
) -> pd.DataFrame:
    """The zero-label estimate of every cell with its cross-conformal interval
    (:func:`werest.evaluation.lodo.cross_conformal`, calibrated on the other domains' cells)."""
    rows = []
    for dataset, frame in frames.items():
        zero, truth = frame.zero_label(), frame.truth()
        for k, system in enumerate(frame.systems):
            awer = zero[k]
            rows.append(
                {
                    "domain": domains[dataset],
                    "dataset": dataset,
                    "system": system,
                    "awer": awer,
                    "ci_low": awer,
                    "ci_high": awer,
                    "wer": truth[k],
                }
            )
    return cross_conformal(pd.DataFrame(rows), interval)


def bars(
    table: pd.DataFrame, per_domain: pd.DataFrame, budget: int = 50, method: str = "t"
) -> dict[str, object]:
    """The bars at ``budget`` with interval ``method`` (issue 42): every domain's coverage
    ≥ 90 %, the lowest domain's draws holding ≥ 85 %, the stress sets' (heavy-tail and
    long-tail) draws holding ≥ 85 %, PPI |d| ≤ 0.66 × classical, and ``werest sample``'s
    promise within 1.5× of the realised half-width in ≥ 80 % of the draws of every domain
    (``min_promise_kept_<strategy>`` before any label, ``min_pilot_promise_kept_<strategy>``
    after a pilot of ``few_labels.pilot``). ``per_domain``: :func:`summarise_draws` with
    ``zero_label_error``."""

    out: dict[str, object] = {"budget": budget, "method": method}
    out |= _estimator_bars(table, budget, method)
    at = per_domain[
        (per_domain["budget"] == budget)
        & (per_domain["estimator"] == "ppi")
        & (per_domain["method"] == method)
    ]
    for strategy in ("random", "active"):
        out |= _domain_bars(at[at["strategy"] == strategy], strategy)
    return out


def _estimator_bars(table: pd.DataFrame, budget: int, method: str) -> dict[str, object]:
    """:func:`bars`' ratios of the estimators' mean |d| (PPI over classical, active over
    random, the oracle over random) and the lowest domain coverage of each strategy."""

    def pick(strategy: str, estimator: str) -> pd.Series | None:
        rows = table[
            (table["strategy"] == strategy)
            & (table["budget"] == budget)
            & (table["estimator"] == estimator)
            & (table["method"] == method)
        ]
        return rows.iloc[0] if len(rows) else None

    ppi, classical, active = (
        pick("random", "ppi"),
        pick("random", "classical"),
        pick("active", "ppi"),
    )
    out: dict[str, object] = {}
    if ppi is not None and classical is not None:
        out["ppi_over_classical"] = ppi["mean_abs_error"] / classical["mean_abs_error"]
        out["min_domain_coverage_random"] = ppi["min_coverage"]
    active_classical = pick("active", "classical")
    if active is not None and active_classical is not None:
        out["active_over_classical"] = active["mean_abs_error"] / active_classical["mean_abs_error"]
    if ppi is not None and active is not None:
        out["active_over_random"] = active["mean_abs_error"] / ppi["mean_abs_error"]
        out["min_domain_coverage_active"] = active["min_coverage"]
    oracle = pick(ORACLE, "ppi")
    if ppi is not None and oracle is not None:
        out["oracle_over_random"] = oracle["mean_abs_error"] / ppi["mean_abs_error"]
    return out


def _domain_bars(rows: pd.DataFrame, strategy: str) -> dict[str, object]:
    """:func:`bars`' figures of one strategy's PPI domains (``rows``): the real domains'
    lowest share of draws holding, largest excess over the zero-label error and lowest share
    of promises kept; the stress sets' coverage and draws holding."""
    out: dict[str, object] = {}
    real = rows[~rows["domain"].isin(STRESS_DOMAINS)]
    if len(real):
        out[f"min_draws_holding_{strategy}"] = real["draws_holding"].min()
        excess = real["mean_abs_error"] - real["zero_label_error"]
        out[f"excess_over_zero_label_{strategy}"] = excess.max()
        out[f"excess_domain_{strategy}"] = real.loc[excess.idxmax(), "domain"]
        for name in ("promise", "pilot_promise"):
            kept = real.get(f"{name}_kept")
            if kept is not None and kept.notna().any():
                out[f"min_{name}_kept_{strategy}"] = kept.min()
                out[f"{name}_domain_{strategy}"] = real.loc[kept.idxmin(), "domain"]
    for prefix, domain in (("stress", STRESS_DOMAIN), ("tail", TAIL_DOMAIN)):
        stress = rows[rows["domain"] == domain]
        if len(stress):
            out[f"{prefix}_coverage_{strategy}"] = stress["coverage"].iloc[0]
            out[f"{prefix}_draws_holding_{strategy}"] = stress["draws_holding"].iloc[0]
    return out


def domain_map(utterances: pd.DataFrame) -> dict[str, str]:
    """dataset → domain of the held-out rows."""
    pairs = utterances.drop_duplicates("dataset")
    return dict(zip(pairs["dataset"].astype(str), pairs["domain"].astype(str), strict=True))


@dataclass
class FewLabelResult:
    """What ``experiment=few_labels`` measured (see the module docstring)."""

    per_domain: pd.DataFrame
    overall: pd.DataFrame
    zero_label: pd.DataFrame
    bars: list[dict]
    settings: FewLabelSettings
    seconds: dict[str, float]
    best: pd.DataFrame | None = None

    @property
    def frames(self) -> dict[str, pd.DataFrame]:
        """The tables its report writes, by file suffix (``<name>_<suffix>.csv``)."""
        return {"domains": self.per_domain, "overall": self.overall, "zero_label": self.zero_label}


def evaluate_few_labels(
    utterances: pd.DataFrame, settings: FewLabelSettings, interval: ConformalInterval
) -> FewLabelResult:
    """Draw, estimate and summarise (``utterances``:
    :attr:`werest.evaluation.lodo.LodoResult.utterances`)."""
    frames = frames_from_heldout(utterances)
    domains = domain_map(utterances)
    scores = labelling_scores(utterances.assign(status=STATUS_OK))
    real_frames = dict(frames)
    if settings.stress > 0:
        stressed = stressed_frames(real_frames, settings.stress, settings.seed)
        frames |= stressed
        domains |= dict.fromkeys(stressed, STRESS_DOMAIN)
        scores = pd.concat([scores, *(frame_scores(f) for f in stressed.values())])
    if settings.tail > 0:
        tailed = tail_frames(real_frames, settings.tail, settings.tail_errors, settings.seed)
        frames |= tailed
        domains |= dict.fromkeys(tailed, TAIL_DOMAIN)
        scores = pd.concat([scores, *(frame_scores(f) for f in tailed.values())])
    draws = simulate(frames, domains, settings, scores)
    per_domain = summarise_draws(draws)
    per_domain = per_domain.merge(
        zero_label_errors(frames, domains, settings.budgets), on=["budget", "domain"], how="left"
    )
    real = {name: frame for name, frame in frames.items() if domains[name] not in STRESS_DOMAINS}
    zero = zero_label_cells(real, domains, interval)
    table = overall(per_domain[~per_domain["domain"].isin(STRESS_DOMAINS)], zero)
    checks = [bars(table, per_domain, 50, method) for method in METHODS]
    real_draws = draws[~draws["domain"].isin(STRESS_DOMAINS)]
    return FewLabelResult(
        per_domain, table, zero, checks, settings, {}, best_system(real_draws, budget=50)
    )
