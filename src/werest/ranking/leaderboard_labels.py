"""``werest leaderboard … labels=L``: the leaderboard's per-dataset estimates of labelled
datasets become prediction-powered (:mod:`werest.estimation.labels`), the macro over datasets
too, and neighbouring systems get prediction-powered paired differences."""

from __future__ import annotations

import numpy as np
import pandas as pd

from werest.estimation.corpus import labelled_scores
from werest.estimation.labels import (
    LabelSettings,
    dataset_estimates,
    distinct_labels,
    enough_labels,
    ppi_fields,
    prediction_rows,
)
from werest.estimation.ppi import (
    interval_centre,
    paired_se,
    quantile,
    verdict,
)
from werest.ranking.leaderboard import Leaderboard, common_ground, estimated, neighbour_tests
from werest.ranking.leaderboard import labelled as labelled_rows
from werest.stats import Bootstrap, rank_agreement
from werest.text.normalise import Normaliser
from werest.text.scoring import utterance_order


def label_leaderboard(
    result: Leaderboard,
    table: pd.DataFrame,
    labels: pd.DataFrame,
    normaliser: Normaliser,
    settings: LabelSettings,
    boot: Bootstrap,
) -> None:
    """``werest leaderboard labels=…``: the per-dataset estimates of labelled datasets become
    prediction-powered, the ranking follows them, and each neighbour pair gets its paired
    prediction-powered difference with its interval
    (:class:`werest.ranking.leaderboard.Leaderboard`, updated in place).

    A system's macro estimate is the mean of its per-dataset ones; its interval is the
    percentile interval of the mean of the datasets' bootstrap resamples when every dataset
    it has is labelled (``method`` ``ppi``), the label-free CI when none is (``zero_label``),
    and none when only some are (``mixed``). The neighbours' verdict says "A better" only
    where the paired interval of A − B lies below 0. When no dataset reaches
    ``min_labels``, everything stays zero-label (the warnings say so), the neighbour tests too.
    """
    rows = result.utterances
    estimates = _dataset_estimates(rows, table, labels, normaliser, settings, boot)
    per_dataset, labelled, warnings = labelled_datasets(result.datasets, estimates, settings)
    macro = MacroEstimates(estimates, labelled, settings)
    board = common_ground(labelled_board(result.board, per_dataset, macro), per_dataset)
    board["n_labelled"] = board["n_labelled"].astype(int)
    if any(labelled.values()):
        pairs = neighbour_tests(board, estimated(rows), labelled_rows(rows), boot)
        verdicts = [macro.pair(a, b) for a, b in zip(pairs["better"], pairs["worse"], strict=True)]
        pairs = pd.concat([pairs, pd.DataFrame(verdicts, index=pairs.index)], axis=1)
    else:  # no dataset reached few_labels.min_labels: every estimate, so the order, is the
        # zero-label one, and so are its neighbour tests (with their calibrated intervals)
        pairs = result.pairs
    result.board, result.datasets, result.pairs = board, per_dataset, pairs
    if "true_wer_all" in board:
        result.agreement = rank_agreement(
            board.set_index("system")["est_wer_all"], board.set_index("system")["true_wer_all"]
        )
    result.warnings = [*result.warnings, *warnings]


def _dataset_estimates(
    rows: pd.DataFrame,
    table: pd.DataFrame,
    labels: pd.DataFrame,
    normaliser: Normaliser,
    settings: LabelSettings,
    boot: Bootstrap,
) -> dict:
    """:func:`werest.estimation.labels.dataset_estimates` of the leaderboard's estimated rows
    (``rows``: its per-row frame, utterances named by their hash) with ``labels``."""
    ordered = labels.assign(utt_id=utterance_order(labels))
    scores = labelled_scores(table, distinct_labels(labels), normaliser)
    scores = scores.assign(utt_id=utterance_order(scores))
    done = estimated(rows).assign(utt_id=lambda f: f["_order"])
    done = done.astype({"dataset": str, "system": str})
    return dataset_estimates(prediction_rows(done, scores), ordered, settings, seed=boot.seed)


def labelled_datasets(
    datasets: pd.DataFrame, estimates: dict, settings: LabelSettings
) -> tuple[pd.DataFrame, dict[str, dict[str, int]], list[dict]]:
    """The per-dataset table with the prediction-powered estimate of each (dataset, system)
    of enough labels (``method`` ``ppi``; else ``zero_label``, the estimate kept), the
    systems so estimated per dataset (their columns in the dataset's estimate) and the
    warnings of the datasets without enough labels."""
    per_dataset = datasets.copy()
    per_dataset["zero_label_wer"] = per_dataset["est_wer"]
    per_dataset["method"] = "zero_label"
    per_dataset["n_labelled"] = 0
    # the labels' own columns exist whether or not a dataset reaches few_labels.min_labels
    # (the reports read them beside ``method``; NaN where the zero-label estimate is kept)
    per_dataset["classical_wer"] = np.nan
    per_dataset["effective_labels"] = np.nan
    labelled: dict[str, dict[str, int]] = {}  # dataset -> {system: its column}, if ppi
    warnings: list[dict] = []
    for dataset, (_, est) in estimates.items():
        enough = enough_labels(dataset, est, settings, warnings)
        labelled[dataset] = {system: k for k, system in enumerate(est.systems) if enough[k]}
        for k, system in enumerate(est.systems):
            at = (per_dataset["dataset"] == dataset) & (per_dataset["system"] == system)
            per_dataset.loc[at, "n_labelled"] = int(est.n_labelled[k])
            if not enough[k]:
                continue
            fields = ppi_fields(est, k, settings)
            per_dataset.loc[at, "method"] = "ppi"
            per_dataset.loc[at, "est_wer"] = fields["estimated_wer"]
            for name in ("interval_low", "interval_high", "classical_wer", "effective_labels"):
                per_dataset.loc[at, name] = fields[name]
    return per_dataset, labelled, warnings


def labelled_board(
    board: pd.DataFrame, per_dataset: pd.DataFrame, macro: MacroEstimates
) -> pd.DataFrame:
    """The leaderboard's rows with each system's macro estimate over its datasets' (from
    :func:`labelled_datasets`): its ``method`` (``ppi``, ``zero_label`` or ``mixed``), labels
    and, with ``ppi``, the labels' interval (none when ``mixed``)."""
    board = board.copy()
    for i, system in board["system"].items():
        mine = per_dataset[per_dataset["system"] == system]
        methods = set(mine["method"])
        board.loc[i, "n_labelled"] = int(mine["n_labelled"].sum())
        board.loc[i, "method"] = methods.pop() if len(methods) == 1 else "mixed"
        board.loc[i, "est_wer"] = mine["est_wer"].mean()
        if board.loc[i, "method"] == "ppi":  # the labels' interval is the one to read
            _, low, high = macro.interval(list(mine["dataset"]), system)
            board.loc[i, ["est_ci_low", "interval_low"]] = low
            board.loc[i, ["est_ci_high", "interval_high"]] = high
        elif board.loc[i, "method"] == "mixed":
            columns = ["est_ci_low", "est_ci_high", "interval_low", "interval_high"]
            board.loc[i, columns] = np.nan
    return board


class MacroEstimates:
    """Macro averages over datasets of prediction-powered estimates and their intervals.

    A system's macro estimate is the mean of its datasets' θ̂; the datasets' labels are
    independent, so its standard error is √(Σ se²) / D (the ``t`` or ``normal`` interval,
    with the fewest labels' degrees of freedom), or, with bootstrap estimates, the
    percentile interval of the mean of the datasets' resamples. A pair's difference is
    paired within each dataset (:func:`werest.estimation.ppi.paired_se`)."""

    def __init__(self, estimates: dict, labelled: dict[str, dict[str, int]], settings) -> None:
        self.estimates, self.labelled, self.settings = estimates, labelled, settings
        self.alpha = (1 - settings.level) / 2
        self.pair_se = {
            dataset: paired_se(draws, est) for dataset, (draws, est) in estimates.items()
        }

    def _columns(self, datasets: list[str], *systems: str) -> list[tuple[str, list[int]]] | None:
        """Each dataset with the systems' columns; None unless all are labelled in all."""
        out = []
        for dataset in datasets:
            columns = self.labelled.get(dataset, {})
            if any(system not in columns for system in systems):
                return None
            out.append((dataset, [columns[system] for system in systems]))
        return out or None

    def _interval(self, parts, point, centre, se, replicates) -> tuple[float, float, float]:
        """(point, low, high): the interval around the unbiased ``centre``, the reported
        (shrunk) ``point`` kept inside it."""
        if replicates is not None:
            low, high = np.nanquantile(replicates, [self.alpha, 1 - self.alpha])
        else:
            m = min(self.estimates[dataset][0].m for dataset, _ in parts)
            q = quantile(self.settings.interval, self.settings.level, m)
            low, high = centre - q * se, centre + q * se
        return float(np.clip(point, low, high)), float(low), float(high)

    def interval(self, datasets: list[str], system: str) -> tuple[float, float, float]:
        """(macro θ̂, low, high) of ``system`` over ``datasets`` (all labelled)."""
        parts = self._columns(datasets, system)
        ests = [self.estimates[dataset][1] for dataset, _ in parts]
        point = np.mean([e.ppi[k] for e, (_, (k,)) in zip(ests, parts, strict=True)])
        centre = np.mean([interval_centre(e)[k] for e, (_, (k,)) in zip(ests, parts, strict=True)])
        se = np.sqrt(sum(e.se[k] ** 2 for e, (_, (k,)) in zip(ests, parts, strict=True)))
        boot = [
            e.boot[:, k] for e, (_, (k,)) in zip(ests, parts, strict=True) if e.boot is not None
        ]
        replicates = np.mean(boot, axis=0) if len(boot) == len(parts) else None
        return self._interval(parts, point, centre, se / len(parts), replicates)

    def pair(self, better: str, worse: str) -> dict:
        """The prediction-powered A − B (macro over the datasets both have, when both are
        labelled in all of them) with its paired interval and verdict."""
        datasets = sorted(self.labelled)
        parts = self._columns(
            [d for d in datasets if better in self._all(d) and worse in self._all(d)], better, worse
        )
        if parts is None:
            return {"ppi_delta": np.nan, "ppi_low": np.nan, "ppi_high": np.nan, "verdict": ""}
        diffs, centres, variances, boot = [], [], [], []
        for dataset, (a, b) in parts:
            est = self.estimates[dataset][1]
            diffs.append(est.ppi[a] - est.ppi[b])
            centres.append(interval_centre(est)[a] - interval_centre(est)[b])
            variances.append(self.pair_se[dataset][a, b] ** 2)
            if est.boot is not None:
                boot.append(est.boot[:, a] - est.boot[:, b])
        replicates = np.mean(boot, axis=0) if len(boot) == len(parts) else None
        point, low, high = self._interval(
            parts,
            np.mean(diffs),
            np.mean(centres),
            np.sqrt(sum(variances)) / len(parts),
            replicates,
        )
        return {"ppi_delta": point, "ppi_low": low, "ppi_high": high, "verdict": verdict(low, high)}

    def _all(self, dataset: str) -> list[str]:
        return self.estimates[dataset][1].systems
