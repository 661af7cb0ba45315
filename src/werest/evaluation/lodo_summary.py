"""The cells of ``werest evaluate experiment=lodo``, measured: each cell's conformal interval
and each pair's interval of differences calibrated on the *other* domains only (cross-conformal:
the coverage of a new domain), coverage per bin of aWER, the figures per held-out domain and
over every cell, and the winner table (what a user reads first: is the best system first?).
The cells themselves: :mod:`werest.evaluation.lodo`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from werest.model.intervals import (
    DEFAULT_INTERVAL,
    ConformalInterval,
    bin_of,
    calibrated_interval,
    calibration_from_cells,
    cell_pairs,
    pair_calibration,
    pair_interval,
)


def cross_conformal(
    cells: pd.DataFrame, interval: ConformalInterval = DEFAULT_INTERVAL
) -> pd.DataFrame:
    """Each cell's conformal interval calibrated on the *other* domains' cells only
    (:func:`werest.model.intervals.calibration_from_cells`: Mondrian bins of aWER), so the coverage
    measured is that of a new domain."""
    cells = cells.copy()
    cells["interval_low"] = cells["interval_high"] = np.nan
    for domain in cells["domain"].unique():
        held = (cells["domain"] == domain).to_numpy()
        calibration = calibration_from_cells(cells[~held], interval)
        low, high = calibrated_interval(
            cells.loc[held, "awer"],
            calibration,
            cells.loc[held, "ci_low"],
            cells.loc[held, "ci_high"],
        )
        cells.loc[held, "interval_low"], cells.loc[held, "interval_high"] = low, high
    cells["bin"] = bin_of(cells["awer"], interval.bins)
    cells["covered"] = (cells["wer"] >= cells["interval_low"]) & (
        cells["wer"] <= cells["interval_high"]
    )
    cells["interval_width"] = cells["interval_high"] - cells["interval_low"]
    return cells


def bin_summary(cells: pd.DataFrame, interval: ConformalInterval) -> pd.DataFrame:
    """Coverage and mean width per Mondrian bin of aWER (``cells`` from :func:`cross_conformal`)."""
    edges = [0.0, *interval.bins, float("inf")]
    rows = []
    for index, group in cells.groupby("bin", sort=True):
        low, high = edges[int(index)], edges[int(index) + 1]
        rows.append(
            {
                "aWER bin": f"{low:.0%}–{high:.0%}" if np.isfinite(high) else f"≥ {low:.0%}",
                "cells": len(group),
                "coverage": float(group["covered"].mean()),
                "mean_width": float(group["interval_width"].mean()),
                "mean_abs_error": float(group["abs_error"].mean()),
            }
        )
    return pd.DataFrame(rows)


def _spearman(group: pd.DataFrame, column: str) -> float:
    if group["system"].nunique() < 3:
        return float("nan")
    return float(stats.spearmanr(group[column], group["wer"])[0])


def domain_summary(cells: pd.DataFrame) -> pd.DataFrame:
    """Per held-out domain: corpus errors (werest and raw pWER), Spearman, MAE, coverage."""
    rows = []
    for domain, group in cells.groupby("domain", sort=True):
        spearman = [
            (_spearman(g, "awer"), _spearman(g, "pwer")) for _, g in group.groupby("dataset")
        ]
        rows.append(
            {
                "domain": domain,
                "datasets": group["dataset"].nunique(),
                "systems": group["system"].nunique(),
                **_figures(group),
                "spearman": np.nanmean([s[0] for s in spearman]) if spearman else np.nan,
                "spearman_raw": np.nanmean([s[1] for s in spearman]) if spearman else np.nan,
            }
        )
    frame = pd.DataFrame(rows)
    frame["beats_raw"] = frame["mean_abs_error"] < frame["mean_abs_error_raw"]
    frame["excess_over_raw"] = frame["mean_abs_error"] - frame["mean_abs_error_raw"]
    return frame


#: Pairs of systems whose true WERs differ by less than this are not counted as ordered.
ORDER_MARGIN = 0.02


def pairwise_order(cells: pd.DataFrame, column: str, margin: float = ORDER_MARGIN) -> float:
    """The share of the pairs of systems on one dataset whose true WERs differ by at least
    ``margin`` that ``column`` puts in the true order (a tie counts half); NaN without pairs."""
    right = total = 0.0
    for _, group in cells.groupby(["domain", "dataset"]):
        truth = group["wer"].to_numpy(dtype=float)
        estimate = group[column].to_numpy(dtype=float)
        upper = np.triu_indices(len(truth), k=1)
        true_gap = (truth[:, None] - truth[None, :])[upper]
        est_gap = (estimate[:, None] - estimate[None, :])[upper]
        counted = np.abs(true_gap) >= margin
        agree = np.sign(true_gap[counted]) * np.sign(est_gap[counted])
        right += float((agree > 0).sum() + 0.5 * (agree == 0).sum())
        total += float(counted.sum())
    return right / total if total else float("nan")


def _figures(group: pd.DataFrame) -> dict:
    weight = group["n_scored"].to_numpy(dtype=float)
    return {
        "cells": len(group),
        "mean_abs_error": float(group["abs_error"].mean()),
        "max_abs_error": float(group["abs_error"].max()),
        "mean_abs_error_raw": float(group["abs_error_raw"].mean()),
        "max_abs_error_raw": float(group["abs_error_raw"].max()),
        "mean_error": float(group["error"].mean()),
        "mae": float(np.average(group["mae"], weights=weight)),
        "mae_raw": float(np.average(group["mae_raw"], weights=weight)),
        "coverage": float(group["covered"].mean()),
        "mean_width": float(group["interval_width"].mean()),
        "mean_ci_width": float((group["ci_high"] - group["ci_low"]).mean()),
    }


#: Pairs whose true WERs differ by at least this should get a verdict (issue 34's bar).
VERDICT_MARGIN = 0.05


def cross_conformal_pairs(cells: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Every pair of systems of each held-out dataset (:func:`werest.model.intervals.cell_pairs`)
    with its zero-label interval of differences calibrated on the *other* domains' pairs only
    (:func:`werest.model.intervals.pair_calibration`): ``low``, ``high``, ``covered``,
    ``width``, ``verdict`` (the interval excludes 0) and ``right`` (the verdict's sign is the
    truth's)."""
    pairs = cell_pairs(cells)
    pairs["low"] = pairs["high"] = np.nan
    for domain in pairs["domain"].unique():
        held = (pairs["domain"] == domain).to_numpy()
        calibration = {"pair": pair_calibration(cells[cells["domain"] != domain], level)}
        low, high = pair_interval(
            pairs.loc[held, "est_delta"],
            pairs.loc[held, "awer_a"],
            pairs.loc[held, "awer_b"],
            calibration,
        )
        pairs.loc[held, "low"], pairs.loc[held, "high"] = low, high
    truth = pairs["true_delta"]
    pairs["covered"] = (truth >= pairs["low"]) & (truth <= pairs["high"])
    pairs["width"] = pairs["high"] - pairs["low"]
    pairs["verdict"] = (pairs["low"] > 0) | (pairs["high"] < 0)
    pairs["right"] = pairs["verdict"] & (np.sign(pairs["est_delta"]) == np.sign(truth))
    return pairs


def winner_summary(cells: pd.DataFrame, pairs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per held-out dataset with at least 3 systems: what a user reads first. The truly best
    system's ``best_error`` (aWER − WER) and raw pWER's, whether werest (and raw pWER) rank it
    first, whether the true top two are in the true order, their true and estimated gap, and
    the dataset's pair intervals (:func:`cross_conformal_pairs`): coverage, mean width, and
    the share of pairs at least :data:`VERDICT_MARGIN` apart that get a verdict."""
    pairs = cross_conformal_pairs(cells) if pairs is None else pairs
    rows = []
    for (domain, dataset), group in cells.groupby(["domain", "dataset"], sort=True):
        if group["system"].nunique() < 3:
            continue
        group = group.sort_values(["wer", "system"])
        best, second = group.iloc[0], group.iloc[1]
        mine = pairs[pairs["dataset"] == dataset]
        apart = mine[mine["true_delta"].abs() >= VERDICT_MARGIN]
        rows.append(
            {
                "domain": domain,
                "dataset": dataset,
                "systems": len(group),
                "best": best["system"],
                "best_wer": best["wer"],
                "best_awer": best["awer"],
                "best_error": best["awer"] - best["wer"],
                "best_error_raw": best["pwer"] - best["wer"],
                "first": group["awer"].idxmin() == best.name,
                "first_raw": group["pwer"].idxmin() == best.name,
                "top_two_order": best["awer"] < second["awer"],
                "top_two_order_raw": best["pwer"] < second["pwer"],
                "true_gap": second["wer"] - best["wer"],
                "est_gap": second["awer"] - best["awer"],
                "pair_coverage": float(mine["covered"].mean()) if len(mine) else np.nan,
                "pair_width": float(mine["width"].mean()) if len(mine) else np.nan,
                "pairs_apart": len(apart),
                "verdicts_apart": int(apart["verdict"].sum()),
                "wrong_verdicts": int((mine["verdict"] & ~mine["right"]).sum()),
            }
        )
    return pd.DataFrame(rows)


def winner_overall(winners: pd.DataFrame, pairs: pd.DataFrame) -> dict:
    """The winner table's figures over its datasets, and the pair intervals' over every pair."""
    apart = pairs[pairs["true_delta"].abs() >= VERDICT_MARGIN]
    return {
        "datasets": len(winners),
        "best_bias": float(winners["best_error"].mean()),
        "best_abs_error": float(winners["best_error"].abs().mean()),
        "best_bias_raw": float(winners["best_error_raw"].mean()),
        "best_first": float(winners["first"].mean()),
        "best_first_raw": float(winners["first_raw"].mean()),
        "top_two_order": float(winners["top_two_order"].mean()),
        "top_two_order_raw": float(winners["top_two_order_raw"].mean()),
        "median_true_gap": float(winners["true_gap"].median()),
        "median_est_gap": float(winners["est_gap"].median()),
        "pairs": len(pairs),
        "pair_coverage": float(pairs["covered"].mean()),
        "pair_coverage_domains": float(pairs.groupby("domain")["covered"].mean().mean()),
        "pair_width": float(pairs["width"].mean()),
        "pairs_apart": len(apart),
        "verdict_share_apart": float(apart["verdict"].mean()) if len(apart) else float("nan"),
        "wrong_verdicts": int((pairs["verdict"] & ~pairs["right"]).sum()),
    }


def overall_summary(cells: pd.DataFrame) -> dict:
    """Every cell together, plus the share of domains where werest beats raw pWER."""
    domains = domain_summary(cells)
    with_ranks = domains[domains["systems"] >= 3]
    return {
        **_figures(cells),
        "domains": len(domains),
        "domains_beating_raw": int(domains["beats_raw"].sum()),
        "mean_spearman": float(with_ranks["spearman"].mean()),
        "mean_spearman_raw": float(with_ranks["spearman_raw"].mean()),
        "domain_mean_abs_error": float(domains["mean_abs_error"].mean()),
        "worst_excess_over_raw": float(domains["excess_over_raw"].max()),
        "pairwise_order": pairwise_order(cells, "awer"),
        "pairwise_order_raw": pairwise_order(cells, "pwer"),
    }
