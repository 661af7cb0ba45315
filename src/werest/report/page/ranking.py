"""The Ranking tab: the leaderboard table (one row per system, one WER column per dataset),
the details table, and the tab that lays them out with the charts."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from werest.formatting import missing, number, percent, percent_interval, plural
from werest.report.page.board import common_ground, has_timings, has_truth, interval, ranking_column
from werest.report.page.estimates import plot_estimate_vs_truth
from werest.report.page.markup import Cell, html_table, links, pct, pct_cell
from werest.report.page.speed import plot_wer_vs_rtfx

if TYPE_CHECKING:
    from werest.ranking.board import Leaderboard


def _dataset_labels(datasets: Sequence[str]) -> dict[str, str]:
    """Column headers for datasets: a prefix every dataset shares (``mubench-``) dropped."""
    names = [str(d) for d in datasets]
    prefix = ""
    if len(names) > 1:
        common = names[0]
        for name in names[1:]:
            while not name.startswith(common):
                common = common[:-1]
        prefix = common[: common.rfind("-") + 1] if "-" in common else ""
    return {n: (n[len(prefix) :] or n) for n in names}


#: table columns and their header titles
Columns = tuple[dict[str, list], dict[str, str]]


def ranking_view(result: Leaderboard) -> tuple[pd.DataFrame, dict[str, str], dict[str, str]]:
    """The ranking table as the page shows it: (cells, header titles, header classes).

    One row per system in ranking order: its rank, name, coverage (datasets run on, of all),
    the macro WER the ranking follows with the 95 % interval, the truth where references
    exist, RTFx and FAAS where measured, then one WER column per dataset, in percent."""
    board = result.board
    datasets = sorted(result.datasets["dataset"].astype(str).unique())
    cells = result.datasets.assign(dataset=result.datasets["dataset"].astype(str)).set_index(
        ["system", "dataset"]
    )
    view: dict[str, list] = {}
    titles: dict[str, str] = {}
    view["rank"] = [Cell(str(r), sort=float(r)) for r in board["rank"]]
    view["system"] = [Cell(str(s), title=str(s)) for s in board["system"]]
    view["datasets"] = _coverage(board, datasets, cells)
    titles["datasets"] = "How many of the datasets each system was run on"
    for columns, more_titles in (_estimate_columns(board), _truth_and_speed_columns(board)):
        view |= columns
        titles |= more_titles
    columns, more_titles, classes = _dataset_columns(board, datasets, cells)
    view |= columns
    titles |= more_titles
    return pd.DataFrame(view), titles, classes


def _coverage(board: pd.DataFrame, datasets: list[str], cells: pd.DataFrame) -> list[Cell]:
    """Per system, how many of the datasets it was run on, naming them in the title."""
    covered = []
    for system, count in zip(board["system"], board["datasets"], strict=True):
        have = [d for d in datasets if (system, d) in cells.index]
        lacking = [d for d in datasets if d not in have]
        title = f"run on {', '.join(have)}" + (
            f"; not run on {', '.join(lacking)} (filled for the ranking)" if lacking else ""
        )
        covered.append(Cell(f"{count}/{len(datasets)}", sort=float(count), title=title))
    return covered


def _estimate_columns(board: pd.DataFrame) -> Columns:
    """The macro WER the ranking follows (on common ground, the own-datasets macro beside
    it), its 95 % interval, and with labels the method and how many labels."""
    view: dict[str, list] = {}
    titles: dict[str, str] = {}
    if common_ground(board):
        view["est. WER % (all datasets)"] = [pct_cell(v) for v in board["est_wer_all"]]
        titles["est. WER % (all datasets)"] = (
            "The ranking's number: the macro WER over every dataset, the cells of datasets "
            "a system was not run on filled by the dataset × system fit"
        )
        view["est. WER % (own datasets)"] = [pct_cell(v) for v in board["est_wer"]]
        titles["est. WER % (own datasets)"] = "The macro WER over the datasets the system has"
    else:
        view["est. WER %"] = [pct_cell(v) for v in board["est_wer"]]
        titles["est. WER %"] = "Estimated macro WER: the mean over the datasets"
    low, high = interval(board)
    view["95% interval"] = [
        Cell(percent_interval(lo, hi), sort=float(lo)) if np.isfinite(lo) else Cell("—")
        for lo, hi in zip(low, high, strict=True)
    ]
    titles["95% interval"] = (
        "The 95 % interval of the estimate over the system's own datasets, the model's own "
        "error included (see Metrics)"
    )
    if "method" in board:
        view["method"] = list(board["method"].astype(str))
        view["labels"] = [Cell(str(int(v)), sort=float(v)) for v in board["n_labelled"]]
        titles["labels"] = "Transcribed utterances the prediction-powered estimate rests on"
    return view, titles


def _truth_and_speed_columns(board: pd.DataFrame) -> Columns:
    """The true macro WER and rank where references exist, RTFx where timed, and FAAS where
    audited."""
    view: dict[str, list] = {}
    titles: dict[str, str] = {}
    if has_truth(board):
        column = "true WER % (all datasets)" if common_ground(board) else "true WER %"
        view[column] = [pct_cell(v) for v in board[ranking_column(board, "true")]]
        titles[column] = "The true macro WER from the references, averaged like the estimate"
        view["true rank"] = [
            Cell(str(r), sort=float(r)) if not missing(r) else Cell("—") for r in board["true_rank"]
        ]
    if has_timings(board):
        view["RTFx"] = _number_cells(board["rtfx"])
        titles["RTFx"] = "Inverse real-time factor: audio seconds per processing second"
    for column, label in (("est_faas", "FAAS est"), ("true_faas", "FAAS true")):
        if column in board and board[column].notna().any():
            view[label] = _number_cells(board[column])
            titles[label] = (
                "Fairness-adjusted ASR score (see Metrics); higher = fairer and more accurate"
            )
    return view, titles


def _number_cells(values: pd.Series) -> list[Cell]:
    """Numbers with one decimal, sorting as numbers; ``—`` where missing."""
    return [Cell(number(v, 1), sort=float(v)) if not missing(v) else Cell("—") for v in values]


def _dataset_columns(
    board: pd.DataFrame, datasets: list[str], cells: pd.DataFrame
) -> tuple[dict[str, list], dict[str, str], dict[str, str]]:
    """One column per dataset (its WER % for each system, ``—`` where not run), with its
    header title and class."""
    labels = _dataset_labels(datasets)
    view: dict[str, list] = {}
    titles: dict[str, str] = {}
    classes: dict[str, str] = {}
    for dataset in datasets:
        header = labels[dataset]
        view[header] = [_dataset_cell(cells, system, dataset) for system in board["system"]]
        titles[header] = f"{dataset}: estimated WER %"
        classes[header] = "ds"
    return view, titles, classes


def _dataset_cell(cells: pd.DataFrame, system, dataset: str) -> Cell:
    """A system's WER % on a dataset, its utterances and true WER in the title."""
    if (system, dataset) not in cells.index:
        return Cell("—", sort=float("nan"), title=f"{system} was not run on {dataset}")
    row = cells.loc[(system, dataset)]
    title = f"{system} on {dataset}: {plural(int(row['n']), 'utterance')}"
    if "true_wer" in row and not missing(row["true_wer"]):
        title += f", true WER {pct(row['true_wer'])}"
    return pct_cell(row["est_wer"], title=title)


def details_view(board: pd.DataFrame) -> pd.DataFrame:
    """Per system, every macro the board holds: own datasets and (common ground) all."""
    ground = common_ground(board)
    low, high = interval(board)
    view = {
        "rank": board["rank"].astype(str),
        "system": board["system"].astype(str),
        "datasets": board["datasets"].astype(str),
        "utterances": board["utterances"].astype(str),
        "est. WER % own datasets": board["est_wer"].map(percent),
        "95% interval": [
            percent_interval(lo, hi) if np.isfinite(lo) else ""
            for lo, hi in zip(low, high, strict=True)
        ],
        "sampling CI": [
            percent_interval(lo, hi) if pd.notna(lo) else ""
            for lo, hi in zip(board["est_ci_low"], board["est_ci_high"], strict=True)
        ],
    }
    if ground:
        view["filled cells"] = board["filled_cells"].astype(str)
        view["est. WER % all datasets"] = board["est_wer_all"].map(percent)
    if has_truth(board):
        view["true WER % own datasets"] = board["true_wer"].map(percent)
        view["true 95% CI"] = [
            percent_interval(lo, hi)
            for lo, hi in zip(board["true_ci_low"], board["true_ci_high"], strict=True)
        ]
        if ground and "true_wer_all" in board:
            view["true WER % all datasets"] = board["true_wer_all"].map(percent)
    return pd.DataFrame(view)


def ranking_tab(result: Leaderboard, agreement: str | None) -> str:
    """The Ranking tab; ``agreement`` is the line on the rank agreement
    (:func:`werest.report.leaderboard_report.agreement_line`), None without one."""
    board = result.board
    labelled = "method" in board
    ground = common_ground(board)
    view, titles, classes = ranking_view(result)
    intro = (
        "Systems ranked by their estimated macro-average WER (each dataset weighs the same), "
        + (
            "prediction-powered where a system's datasets have labels (the labels column says "
            "how many transcribed utterances each number rests on; zero_label rows use none)"
            if labelled
            else "estimated without references"
        )
        + ". "
        + (
            "Not every system was run on every dataset (the datasets column): the ranking "
            "follows each system's macro over <b>all</b> datasets, the missing cells filled by "
            "a dataset × system fit (—: not run); the own-datasets column is its macro over "
            "the datasets it has. "
            if ground
            else ""
        )
        + "The dataset columns give each dataset's WER %. Click a column header to sort; hover "
        "a cell for more."
    )
    parts = [
        f'<p class="note">{intro}</p>',
        html_table(view, "ranking", header_titles=titles, header_class=classes),
    ]
    if agreement is not None:
        parts.append(f'<p class="note">{html.escape(agreement)}</p>')
    parts += [
        f'<p class="note warning">warning: {html.escape(w["dataset"])}: '
        f"{html.escape(w['message'])}</p>"
        for w in result.warnings
    ]
    parts.append("<h3>Estimate against truth</h3>" if has_truth(board) else "<h3>Estimates</h3>")
    parts.append(plot_estimate_vs_truth(board))
    if has_timings(board):
        parts += ["<h3>Speed and accuracy</h3>", plot_wer_vs_rtfx(board)]
    parts += [
        "<h3>Per system, in detail</h3>",
        '<p class="note">The macro WER over the system\'s own datasets with its 95 % '
        "interval and its sampling CI (sampling noise only, too narrow to hold the true WER)"
        + ("; the filled cells and the macro over all datasets" if ground else "")
        + ("; the truth likewise" if has_truth(board) else "")
        + ". Full data: "
        + links(["leaderboard.csv", "datasets.csv"])
        + ".</p>",
        html_table(details_view(board), "details"),
    ]
    return "".join(parts)
