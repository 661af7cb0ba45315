"""``werest evaluate experiment=lodo``: leave one *domain* out, estimated as a user would.

For each held-out domain (a group of datasets: ``data.domains``), the model is trained on every
other domain exactly as ``werest train`` trains (ranking, features, balanced sample, fit), and
every system of the held-out domain is then estimated exactly as ``werest estimate`` estimates
for a user (:func:`werest.estimation.estimate.choose_ranking`: by default the systems' label-free
order,
whatever their names; then
:func:`werest.estimation.estimate.estimate_utterances` and
:func:`werest.estimation.estimate.summarise`).

Per (domain, dataset, system) cell it records the true corpus WER, werest's estimate with its
bootstrap CI, raw pWER against the same proxies (the corpus pWER), the utterance MAE of both,
and a conformal interval (:mod:`werest.model.intervals`: Mondrian bins of the estimate, signed
quantiles of (WER − aWER) / (aWER + offset)) calibrated on the cells of the *other* domains only
(each domain weighing the same), so the coverage measured is that of a new domain
(cross-conformal). :func:`calibration_from_cells` turns all cells into the calibration a
shipped model carries (``werest train calibration=…``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from werest import logs
from werest.errors import ConfigError
from werest.estimation.estimate import (
    STATUS_OK,
    choose_ranking,
    estimate_utterances,
    predict_features,
    summarise,
)
from werest.evaluation.settings import LodoSettings
from werest.features.agreement import PANEL_SIZE, pairwise_agreement
from werest.features.inputs import build_features
from werest.features.proxy import Ranking, choose_proxies, rank_on
from werest.ingest.table import KEY
from werest.model.files import Models
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
from werest.model.training import (
    TrainingOptions,
    build_regressor,
    domain_of,
    fit_model,
    prepare_training_rows,
    training_frame,
)
from werest.text import Normaliser
from werest.text.scoring import utterance_labels

log = logging.getLogger(__name__)


@dataclass
class LodoResult:
    """What a leave-one-domain-out run measured.

    Attributes
    ----------
    cells : one row per (domain, dataset, system): ``wer``, ``awer``, ``pwer`` (raw corpus
        pWER), their absolute errors, utterance MAEs, bootstrap CI, conformal interval.
    domains : one row per held-out domain: mean/max corpus errors, Spearman, MAE, coverage.
    overall : the same figures over every cell.
    timings : per fold: training rows and seconds.
    interval : the interval the cells were given (its Mondrian bins).
    utterances : every held-out labelled target row (key, ``domain``, ``proxy``,
        ``predicted_wer``, ``pwer``, ``proxy_words``, ``word_errors``, ``ref_words``): the
        model's predictions on a domain it never saw, with the truth
        (``werest evaluate experiment=few_labels`` draws labelled samples from them).
    """

    cells: pd.DataFrame
    domains: pd.DataFrame
    overall: dict
    timings: pd.DataFrame
    seconds: dict[str, float] = field(default_factory=dict)
    interval: ConformalInterval = DEFAULT_INTERVAL
    utterances: pd.DataFrame | None = None


def evaluate_lodo(
    table: pd.DataFrame,
    data: Mapping,
    features: list[str],
    model: Mapping,
    options: TrainingOptions = TrainingOptions(),
    lodo: LodoSettings = LodoSettings(),
    *,
    n_resamples: int = 200,
    labels: pd.DataFrame | None = None,
    pairs: pd.DataFrame | None = None,
    as_user: bool = True,
) -> LodoResult:
    """Leave each domain of ``table`` out in turn; see the module docstring.

    Parameters
    ----------
    table : labelled transcripts of several domains.
    data : the data config (``domains``, ``max_rows_per_domain``) training uses.
    features, model : the feature columns and the ``conf/model`` config to fit.
    options : how each fold's training rows are built and fitted, as ``werest train`` does
        (normaliser, two-system views, the proxies, seed, workers); the seed also seeds the
        cells' bootstrap of ``n_resamples`` resamples.
    lodo : the domains held out (default: every domain with two or more systems), the
        conformal interval and the held-out systems' panel (:class:`LodoSettings`).
    labels, pairs : :func:`werest.model.training.utterance_labels` and
        :func:`werest.features.agreement.pairwise_agreement` of ``table``, when already
        computed (ablations reuse them).
    as_user : estimate the held-out domain with ``werest estimate``'s own code
        (:func:`werest.estimation.estimate.estimate_utterances`, which aligns the held-out
        hypotheses again); False builds the same features from ``pairs`` (same functions,
        faster; for ablations).
    """
    normaliser, n_jobs, seed = options.normaliser, options.n_jobs, options.seed
    table = table.assign(domain=domain_of(table["dataset"], data.get("domains")).to_numpy())
    if labels is None:
        labels = utterance_labels(table, normaliser, n_jobs)
    if pairs is None:
        start = time.perf_counter()
        pairs = pairwise_agreement(table, normaliser=normaliser, n_jobs=n_jobs)
        log.info("aligned %d system pairs in %.0f s", len(pairs), time.perf_counter() - start)
    dataset_domain = table.drop_duplicates("dataset").set_index("dataset")["domain"]
    pairs = pairs.assign(domain=pairs["dataset"].map(dataset_domain).to_numpy())
    candidates = [name for name, rows in table.groupby("domain") if rows["system"].nunique() >= 2]
    folds = lodo.held_out or candidates
    unknown = sorted(set(folds) - set(candidates))
    if unknown:
        raise ConfigError(f"held-out domain {unknown[0]!r} is not a multi-system domain here")
    cells, timings, utterances = [], [], []
    for domain in logs.track(folds, desc="evaluate (held-out domains)", unit="domain"):
        fold_start = time.perf_counter()
        ranking, frame = fold_training_rows(
            table,
            domain,
            options,
            labels=labels,
            pairs=pairs,
            input_features=features,
            domains=data.get("domains"),
        )
        frame = prepare_training_rows(frame, data, seed=seed)
        fitted = fit_model(
            frame, features, build_regressor(model), normaliser=normaliser, ranking=ranking
        )
        fit_seconds = time.perf_counter() - fold_start
        held_cells, held_rows = _held_out_cells(
            table[table["domain"] == domain].drop(columns="domain"),
            fitted,
            labels,
            pairs=None if as_user else pairs[pairs["domain"] == domain],
            panel=lodo.panel,
            normaliser=normaliser,
            n_resamples=n_resamples,
            seed=seed,
            n_jobs=n_jobs,
        )
        cells.append(held_cells.assign(domain=domain))
        utterances.append(held_rows[HELD_OUT_COLUMNS].assign(domain=domain))
        timings.append(
            {
                "domain": domain,
                "train_rows": len(frame),
                "fit_seconds": round(fit_seconds, 1),
                "seconds": round(time.perf_counter() - fold_start, 1),
            }
        )
        log.info("fold %s: %s", domain, timings[-1])
    interval = lodo.interval
    all_cells = cross_conformal(pd.concat(cells, ignore_index=True), interval)
    return LodoResult(
        cells=all_cells,
        domains=domain_summary(all_cells),
        overall=overall_summary(all_cells),
        timings=pd.DataFrame(timings),
        interval=interval,
        utterances=pd.concat(utterances, ignore_index=True),
    )


def fold_training_rows(
    table: pd.DataFrame,
    domain: str,
    options: TrainingOptions = TrainingOptions(),
    *,
    labels: pd.DataFrame,
    pairs: pd.DataFrame,
    input_features: Sequence[str] = (),
    domains: Mapping | None = None,
) -> tuple[Ranking, pd.DataFrame]:
    """The fold that holds ``domain`` out: the systems ranked on the other domains' labels, and
    those domains' training rows (:func:`werest.model.training.training_frame` as ``options``
    say, aligned pairs taken from ``pairs``). ``table`` and ``pairs`` have a ``domain``
    column."""
    train_table = table[table["domain"] != domain]
    ranking = rank_on(train_table, options.normaliser, labels=labels)
    frame = training_frame(
        train_table,
        ranking,
        normaliser=options.normaliser,
        labels=labels,
        two_system_views=options.two_system_views,
        pairs=pairs[pairs["domain"] != domain],
        input_features=input_features,
        proxy_choice=options.proxies,
        domains=domains,
    )
    return ranking, frame


#: The columns of :attr:`LodoResult.utterances` (besides ``domain``).
HELD_OUT_COLUMNS = [
    *KEY, "proxy", "predicted_wer", "pwer", "proxy_words", "word_errors", "ref_words"
]  # fmt: skip


def _held_out_cells(
    table: pd.DataFrame,
    fitted,
    labels: pd.DataFrame,
    *,
    pairs: pd.DataFrame | None,
    normaliser: Normaliser,
    n_resamples: int,
    seed: int,
    n_jobs: int,
    panel: int | None = PANEL_SIZE,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Estimate every system of a held-out domain as ``werest estimate`` would (with
    ``panel``); score it: (its cells, its labelled estimated rows)."""
    models = Models(fitted)
    ranking = choose_ranking(models, table)
    if pairs is None:
        utterances = estimate_utterances(
            table,
            models,
            sorted(table["system"].unique()),
            ranking=ranking,
            n_jobs=n_jobs,
            panel_size=panel,
        )
    else:
        proxies = choose_proxies(table, ranking)
        features = build_features(
            table, proxies, normaliser=normaliser, input_features=fitted.feature_names, pairs=pairs
        )
        utterances = predict_features(features, models)
    records = pd.DataFrame(
        summarise(
            utterances,
            table,
            normaliser=normaliser,
            n_resamples=n_resamples,
            seed=seed,
        )
    )
    done = utterances[utterances["status"] == STATUS_OK].merge(
        labels[[*KEY, "wer", "word_errors", "ref_words"]], on=KEY, how="inner"
    )
    done = done[done["wer"].notna()]
    raw = done.assign(
        proxy_errors=done[["pwer_sub", "pwer_del", "pwer_ins"]].sum(axis=1),
        abs_err=(done["predicted_wer"] - done["wer"]).abs(),
        abs_err_raw=(done["pwer"] - done["wer"]).abs(),
    )
    grouped = raw.groupby(["dataset", "system"])
    per_cell = pd.DataFrame(
        {
            "pwer": grouped["proxy_errors"].sum() / grouped["proxy_words"].sum().clip(lower=1),
            "mae": grouped["abs_err"].mean(),
            "mae_raw": grouped["abs_err_raw"].mean(),
            "n_scored": grouped.size(),
        }
    ).reset_index()
    cells = records.merge(per_cell, on=["dataset", "system"], how="inner")
    cells = cells.rename(columns={"estimated_wer": "awer"})
    cells["error"] = cells["awer"] - cells["wer"]
    cells["abs_error"] = cells["error"].abs()
    cells["abs_error_raw"] = (cells["pwer"] - cells["wer"]).abs()
    return cells[cells["wer"].notna()], done


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
