"""The summaries of ``werest evaluate experiment=few_labels``' draws: per domain and
overall, the estimators' mean |estimate − truth|, their intervals' coverage and width, the
share of draws that hold, ``werest sample``'s promises against the realised widths, the
zero-label estimate beside them, and how often the true best system is estimated best.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from werest.estimation.ppi_frames import DatasetFrame

#: A draw "holds" when its intervals cover at least this share of the dataset's systems.
DRAW_HOLDS = 0.8


def summarise_draws(draws: pd.DataFrame) -> pd.DataFrame:
    """Per (strategy, budget, estimator, method, domain): mean |d| in points, coverage, mean
    width in points, the draws' mean λ, and ``draws_holding``: the share of the draws (one
    labelled sample of one dataset, serving all its systems, as a user draws it) whose
    intervals cover at least :data:`DRAW_HOLDS` of the dataset's systems, and
    ``worst_draw_coverage``, the lowest share of systems any one draw covered."""
    frame = draws.assign(
        abs_error=(draws["estimate"] - draws["wer"]).abs() * 100,
        covered=(draws["wer"] >= draws["low"]) & (draws["wer"] <= draws["high"]),
        width=(draws["high"] - draws["low"]) * 100,
    )
    keys = ["strategy", "budget", "estimator", "method", "domain"]
    per_draw = (
        frame.groupby([*keys, "dataset", "draw"], sort=True)["covered"].mean().rename("share")
    )
    by_draw = per_draw.reset_index().groupby(keys, sort=True)["share"]
    grouped = frame.groupby(keys, sort=True)
    summary = grouped.agg(
        cells=("system", "size"),
        mean_abs_error=("abs_error", "mean"),
        coverage=("covered", "mean"),
        mean_width=("width", "mean"),
        mean_lambda=("lam", "mean"),
    )
    summary["draws_holding"] = by_draw.apply(lambda share: float((share >= DRAW_HOLDS).mean()))
    summary["worst_draw_coverage"] = by_draw.min()
    for name in ("promise", "pilot_promise"):
        if name not in frame:
            continue
        by_ratio = promise_ratios(frame, keys, name).groupby(keys, sort=True)
        summary[f"{name}_kept"] = by_ratio.apply(
            lambda r: (
                float(((r <= PROMISE_FACTOR) & (r >= 1 / PROMISE_FACTOR)).mean())
                if r.notna().any()
                else np.nan
            )
        )
        summary[f"{name}_ratio"] = by_ratio.median()
    return summary.reset_index()


#: ``werest sample``'s promise is kept when it is within this factor of the realised width.
PROMISE_FACTOR = 1.5


def promise_ratios(frame: pd.DataFrame, keys: list[str], name: str = "promise") -> pd.Series:
    """Per draw (``keys`` + dataset, draw): the promised half-width (column ``name``:
    ``promise`` before any label, ``pilot_promise`` after the pilot) over the realised one,
    the median over the dataset's systems of each interval's half-width, as ``werest
    sample``'s promise is the median over the systems (points as fractions; NaN where
    nothing was promised)."""
    half = (frame["high"] - frame["low"]) / 2
    per = frame.assign(half=half).groupby([*keys, "dataset", "draw"], sort=True)
    realised = per["half"].median()
    promise = per[name].first()
    with np.errstate(divide="ignore", invalid="ignore"):
        return (promise / realised).rename("ratio")


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
                draws_holding=group["draws_holding"].mean(),
                min_draws_holding=group["draws_holding"].min(),
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


def zero_label_errors(
    frames: dict[str, DatasetFrame], domains: dict[str, str], budgets: tuple[int, ...]
) -> pd.DataFrame:
    """Per (budget, domain): the zero-label estimate's mean |d| in points over the
    (dataset, system) cells the budget's draws estimate (datasets of more utterances than
    the budget), the stress set's included: the figure shown beside each row."""
    cells = [
        (budget, domains[name], 100 * abs(z - t))
        for budget in budgets
        for name, frame in frames.items()
        if frame.n > budget
        for z, t in zip(frame.zero_label(), frame.truth(), strict=True)
    ]
    table = pd.DataFrame(cells, columns=["budget", "domain", "zero_label_error"])
    return table.groupby(["budget", "domain"], as_index=False)["zero_label_error"].mean()


def best_system(draws: pd.DataFrame, *, budget: int, method: str = "t") -> pd.DataFrame:
    """Per strategy and estimator, over the draws of ``budget`` labels of the datasets with
    at least 3 systems: the true best system's mean bias (estimate − truth, points), and the
    share of draws whose lowest estimate is the true best (each dataset weighing the same)."""
    rows = draws[(draws["budget"] == budget) & (draws["method"] == method)]
    systems = rows.groupby("dataset")["system"].nunique()
    rows = rows[rows["dataset"].isin(systems[systems >= 3].index)]
    out = []
    for (strategy, estimator), mine in rows.groupby(["strategy", "estimator"], sort=True):
        per = []
        for dataset, draw in mine.groupby(["dataset", "draw"], sort=False):
            best = draw.loc[draw["wer"].idxmin()]
            first = draw.loc[draw["estimate"].idxmin(), "system"]
            per.append(
                {
                    "dataset": dataset[0],
                    "bias": 100 * (best["estimate"] - best["wer"]),
                    "first": first == best["system"],
                }
            )
        per = pd.DataFrame(per).groupby("dataset")[["bias", "first"]].mean()
        out.append(
            {
                "strategy": strategy,
                "estimator": estimator,
                "datasets": len(per),
                "best_bias": float(per["bias"].mean()),
                "ranks_best_first": float(per["first"].mean()),
            }
        )
    return pd.DataFrame(out)
