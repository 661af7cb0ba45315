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
from werest.estimation.labels import prediction_rows
from werest.estimation.ppi import METHODS, DatasetFrame, dataset_frames, estimate_draws, quantile
from werest.estimation.sampling import STRATEGIES, active_probabilities, labelling_scores
from werest.evaluation.lodo import cross_conformal
from werest.features.agreement import STATUS_OK
from werest.ingest.table import KEY
from werest.model.intervals import ConformalInterval

log = logging.getLogger(__name__)


#: A strategy only this experiment has: ``active`` with scores from the *true* residuals
#: (√ mean over systems of (e − ê)², + 0.5), the best any score of the predictions could do.
ORACLE = "oracle"


@dataclass(frozen=True)
class FewLabelSettings:
    """``few_labels:`` of ``werest evaluate experiment=few_labels``.

    Parameters
    ----------
    budgets : labels per dataset to draw.
    n_draws : how many times each budget is drawn per dataset and strategy.
    strategies : ``random`` and/or ``active`` (as ``werest sample``), and ``oracle``
        (:data:`ORACLE`: the ceiling of active sampling).
    uniform_share : ``active``'s share of uniform probability (its lower bound).
    level : the intervals' coverage.
    n_resamples : bootstrap resamples per estimate.
    seed : the draws' seed.
    recalibrate : as ``werest estimate``'s ``few_labels.recalibrate``.
    """

    budgets: tuple[int, ...] = (25, 50, 100, 200)
    n_draws: int = 200
    strategies: tuple[str, ...] = ("random", "active")
    uniform_share: float = 0.5
    level: float = 0.95
    n_resamples: int = 500
    seed: int = 0
    recalibrate: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "budgets", tuple(int(b) for b in self.budgets))
        object.__setattr__(self, "strategies", tuple(str(s) for s in self.strategies))
        unknown = sorted(set(self.strategies) - {*STRATEGIES, ORACLE})
        if unknown:
            raise ValueError(f"few_labels.strategies: unknown {unknown[0]!r} ({STRATEGIES})")


def frames_from_heldout(utterances: pd.DataFrame) -> dict[str, DatasetFrame]:
    """:class:`werest.estimation.ppi.DatasetFrame` per dataset from
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
                for draw in range(settings.n_draws):
                    if strategy == "random":
                        picked = rng.choice(frame.n, budget, replace=False)
                    else:  # active and oracle: with replacement, as werest sample draws
                        picked = rng.choice(frame.n, budget, replace=True, p=probs[strategy])
                    weight = 1.0 / (frame.n * probs[strategy][picked])
                    draws = (
                        frame.recalibrated_draws(picked, weight, seed=draw)
                        if settings.recalibrate
                        else frame.draws(picked, weight, pop)
                    )
                    est = estimate_draws(
                        draws,
                        method="bootstrap",
                        level=settings.level,
                        n_resamples=settings.n_resamples,
                        seed=int(rng.integers(2**31)),
                    )
                    rows.append(
                        _rows(est, truth, settings.level, budget).assign(
                            dataset=dataset, strategy=strategy, draw=draw
                        )
                    )
    out = pd.concat(rows, ignore_index=True)
    out["domain"] = out["dataset"].map(domains)
    return out


def _rows(est, truth: np.ndarray, level: float, budget: int) -> pd.DataFrame:
    """Every estimator × interval method of one draw (long form)."""
    parts = []
    alpha = (1 - level) / 2
    q = {method: quantile(method, level, budget) for method in ("normal", "t")}
    for estimator, point, se, boot in (
        ("ppi", est.ppi, est.se, est.boot),
        ("classical", est.classical, est.se_classical, est.boot_classical),
    ):
        for method in METHODS:
            if method == "bootstrap":
                low, high = np.nanquantile(boot, [alpha, 1 - alpha], axis=0)
            else:
                low, high = point - q[method] * se, point + q[method] * se
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
                        "lam": est.lam if estimator == "ppi" else 0.0,
                        "n_labelled": est.n_labelled,
                    }
                )
            )
    return pd.concat(parts, ignore_index=True)


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
        pop, truth = frame.population(), frame.truth()
        for k, system in enumerate(frame.systems):
            awer = pop["e"][k] / max(pop["r"][k], 1.0)
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


def summarise_draws(draws: pd.DataFrame) -> pd.DataFrame:
    """Per (strategy, budget, estimator, method, domain): mean |d| in points, coverage, mean
    width in points, and the draws' mean λ."""
    frame = draws.assign(
        abs_error=(draws["estimate"] - draws["wer"]).abs() * 100,
        covered=(draws["wer"] >= draws["low"]) & (draws["wer"] <= draws["high"]),
        width=(draws["high"] - draws["low"]) * 100,
    )
    keys = ["strategy", "budget", "estimator", "method", "domain"]
    grouped = frame.groupby(keys, sort=True)
    return grouped.agg(
        cells=("system", "size"),
        mean_abs_error=("abs_error", "mean"),
        coverage=("covered", "mean"),
        mean_width=("width", "mean"),
        mean_lambda=("lam", "mean"),
    ).reset_index()


def overall(per_domain: pd.DataFrame, zero: pd.DataFrame) -> pd.DataFrame:
    """Per (strategy, budget, estimator, method): the mean over domains (each domain weighing
    the same), the worst domain's |d| and the lowest domain coverage; zero-label rows added."""
    keys = ["strategy", "budget", "estimator", "method"]
    rows = []
    for key, group in per_domain.groupby(keys, sort=True):
        worst = group.loc[group["mean_abs_error"].idxmax()]
        rows.append(
            dict(
                zip(keys, key, strict=True),
                domains=len(group),
                mean_abs_error=group["mean_abs_error"].mean(),
                worst_domain=worst["domain"],
                worst_abs_error=worst["mean_abs_error"],
                coverage=group["coverage"].mean(),
                min_coverage=group["coverage"].min(),
                min_coverage_domain=group.loc[group["coverage"].idxmin(), "domain"],
                mean_width=group["mean_width"].mean(),
            )
        )
    zero_domains = zero_domain_summary(zero)
    rows.append(
        {
            "strategy": "none",
            "budget": 0,
            "estimator": "zero_label",
            "method": "conformal",
            "domains": len(zero_domains),
            "mean_abs_error": zero_domains["mean_abs_error"].mean(),
            "worst_domain": zero_domains.loc[zero_domains["mean_abs_error"].idxmax(), "domain"],
            "worst_abs_error": zero_domains["mean_abs_error"].max(),
            "coverage": zero_domains["coverage"].mean(),
            "min_coverage": zero_domains["coverage"].min(),
            "min_coverage_domain": zero_domains.loc[zero_domains["coverage"].idxmin(), "domain"],
            "mean_width": zero_domains["mean_width"].mean(),
        }
    )
    return pd.DataFrame(rows)


def zero_domain_summary(zero: pd.DataFrame) -> pd.DataFrame:
    """Per domain: the zero-label estimate's mean |d| (points), coverage and width."""
    frame = zero.assign(
        abs_error=(zero["awer"] - zero["wer"]).abs() * 100,
        width=(zero["interval_high"] - zero["interval_low"]) * 100,
    )
    return (
        frame.groupby("domain", sort=True)
        .agg(
            cells=("system", "size"),
            mean_abs_error=("abs_error", "mean"),
            coverage=("covered", "mean"),
            mean_width=("width", "mean"),
        )
        .reset_index()
    )


def bars(table: pd.DataFrame, budget: int = 50, method: str = "t") -> dict[str, object]:
    """Issue 24's bars at ``budget`` with interval ``method``: every domain's coverage ≥ 90 %,
    PPI |d| ≤ 0.6 × classical, active ≤ 0.85 × random (PPI)."""

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
    out: dict[str, object] = {"budget": budget, "method": method}
    if ppi is not None and classical is not None:
        out["ppi_over_classical"] = ppi["mean_abs_error"] / classical["mean_abs_error"]
        out["min_domain_coverage_random"] = ppi["min_coverage"]
    if ppi is not None and active is not None:
        out["active_over_random"] = active["mean_abs_error"] / ppi["mean_abs_error"]
        out["min_domain_coverage_active"] = active["min_coverage"]
    oracle = pick(ORACLE, "ppi")
    if ppi is not None and oracle is not None:
        out["oracle_over_random"] = oracle["mean_abs_error"] / ppi["mean_abs_error"]
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


def evaluate_few_labels(
    utterances: pd.DataFrame, settings: FewLabelSettings, interval: ConformalInterval
) -> FewLabelResult:
    """Draw, estimate and summarise (``utterances``:
    :attr:`werest.evaluation.lodo.LodoResult.utterances`)."""
    frames = frames_from_heldout(utterances)
    domains = domain_map(utterances)
    scores = labelling_scores(utterances.assign(status=STATUS_OK))
    draws = simulate(frames, domains, settings, scores)
    per_domain = summarise_draws(draws)
    zero = zero_label_cells(frames, domains, interval)
    table = overall(per_domain, zero)
    checks = [bars(table, 50, method) for method in METHODS]
    return FewLabelResult(per_domain, table, zero, checks, settings, {})
