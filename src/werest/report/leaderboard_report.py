"""The leaderboard as people read it: the console block, the Markdown report, the chart, and
the readable views of its tables that the report and the web page (:mod:`werest.report.webpage`)
share.

:func:`werest.partition.leaderboard.build` computes; this module only formats what it returns.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from werest.estimation.guards import format_warnings
from werest.formatting import markdown_table, number, p_value, percent, percent_interval, plural
from werest.io import save_figure
from werest.ranking.board import Leaderboard
from werest.report.leaderboard_decision import decision_markdown


def board_view(board: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard as display strings (WER in %)."""
    view = pd.DataFrame(
        {
            "rank": board["rank"],
            "system": board["system"],
            "datasets": board["datasets"],
            "utts": board["utterances"],
            "est. WER %": board["est_wer"].map(percent),
            "95% interval": [
                percent_interval(lo, hi) if pd.notna(lo) else ""
                for lo, hi in zip(
                    board.get("interval_low", board["est_ci_low"]),
                    board.get("interval_high", board["est_ci_high"]),
                    strict=True,
                )
            ],
            "sampling CI": [
                percent_interval(lo, hi) if pd.notna(lo) else ""
                for lo, hi in zip(board["est_ci_low"], board["est_ci_high"], strict=True)
            ],
        }
    )
    if "filled_cells" in board and (board["filled_cells"] > 0).any():  # common ground
        view.insert(4, "est. WER % (all datasets)", board["est_wer_all"].map(percent))
        view.insert(5, "filled cells", board["filled_cells"])
        if "true_wer_all" in board:
            view["true WER % (all datasets)"] = board["true_wer_all"].map(percent)
    if "method" in board:  # labels= (werest.ranking.leaderboard_labels.label_leaderboard)
        view["method"] = board["method"]
        view["labels"] = board["n_labelled"]
    if "true_wer" in board:
        view["true WER %"] = board["true_wer"].map(percent)
        view["true 95% CI"] = [
            percent_interval(lo, hi)
            for lo, hi in zip(board["true_ci_low"], board["true_ci_high"], strict=True)
        ]
        view["true rank"] = board["true_rank"].astype(str)
    if "rtfx" in board:
        view["RTFx"] = board["rtfx"].map(lambda v: number(v, 1))
        view["latency p50 s"] = board["latency_p50"].map(lambda v: number(v, 3))
        view["latency p95 s"] = board["latency_p95"].map(lambda v: number(v, 3))
        view["RTF≤1 %"] = board["rtf_le_1"].map(percent)
    for column, label in (("est_faas", "FAAS est"), ("true_faas", "FAAS true")):
        if column in board:
            view[label] = board[column].map(lambda v: number(v, 2))
    return view


def pairs_view(pairs: pd.DataFrame) -> pd.DataFrame:
    """Neighbour tests as display strings; with labels, the prediction-powered A − B and its
    paired interval, and the verdict, instead of the label-free test."""
    view = pd.DataFrame({"A (ranked above)": pairs["better"], "B": pairs["worse"]})
    if "verdict" in pairs:
        view["A − B pts (labels)"] = (100 * pairs["ppi_delta"]).map(lambda v: number(v, 2))
        view["95% interval"] = [
            percent_interval(lo, hi)
            for lo, hi in zip(pairs["ppi_low"], pairs["ppi_high"], strict=True)
        ]
        view["verdict"] = pairs["verdict"].map(lambda v: _VERDICT.get(v, v))
    else:  # zero labels: the interval calibrated on differences, never the bootstrap's p
        view["est. A − B pts"] = (100 * pairs["est_diff"]).map(lambda v: number(v, 2))
        view["95% interval"] = [
            percent_interval(lo, hi)
            for lo, hi in zip(pairs["est_low"], pairs["est_high"], strict=True)
        ]
        view["verdict"] = pairs["est_verdict"].map(lambda v: _VERDICT.get(v, v))
    if "true_p_value" in pairs:
        view["true Δ = A − B pts"] = (100 * pairs["true_delta"]).map(lambda v: number(v, 2))
        view["true p"] = pairs["true_p_value"].map(p_value)
        view["true d (A − B)"] = pairs["true_cohens_d"].map(lambda v: number(v, 2))
    return view


#: How a neighbour pair's verdict reads (A is ranked above B).
_VERDICT = {
    "A better": "A is better than B",
    "B better": "B is better than A",
    "not separable": "not separable",
}


def fairness_view(summary: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and system: overall score, WER and FAAS, true beside estimated."""
    view = summary[["dataset", "system"]].copy()
    for label in ("true", "est"):
        if f"{label}_overall" in summary:
            view[f"{label} overall"] = summary[f"{label}_overall"].map(lambda v: number(v, 1))
            view[f"{label} WER %"] = summary[f"{label}_wer"].map(percent)
            view[f"{label} FAAS"] = summary[f"{label}_faas"].map(lambda v: number(v, 2))
    return view


def comparison_view(comparison: pd.DataFrame) -> pd.DataFrame:
    """Per category: true vs estimated scores and tests, and what differs."""
    view = comparison[["dataset", "system", "category"]].copy()
    for label in ("true", "est"):
        view[f"{label} score"] = comparison[f"{label}_score"].map(lambda v: number(v, 1))
        view[f"{label} p"] = comparison[f"{label}_p"].map(p_value)
        view[f"{label} adjusted"] = comparison[f"{label}_adjusted"].map(lambda v: number(v, 1))
        view[f"{label} worst"] = comparison[f"{label}_worst"]
    view["group τ"] = comparison["group_kendall"].map(lambda v: number(v, 2))
    view["disagreement"] = comparison["disagreement"].replace("", "none")
    return view


def agreement_line(agreement: dict) -> str:
    if not agreement:
        return "No references: the true ranking is unknown."
    return (
        f"Estimated vs true ranking ({plural(agreement['n_systems'], 'system')}): Spearman ρ = "
        f"{number(agreement['spearman'], 3)}, Kendall τ = {number(agreement['kendall'], 3)}."
    )


def contender_lines(datasets: pd.DataFrame) -> list[str]:
    """Per dataset, the systems that may be the best (:func:`werest.estimation.shortlist.
    shortlist` of its estimates): one line each, a single name only when the list has one."""
    from werest.estimation.shortlist import shortlist

    records = datasets.rename(columns={"est_wer": "estimated_wer"}).to_dict("records")
    lines = []
    for dataset, systems in shortlist(records).items():
        said = (
            f"{systems[0]} (the only contender)"
            if len(systems) == 1
            else f"{len(systems)} contenders: {', '.join(systems)}"
        )
        lines.append(f"{dataset}: {said}")
    return lines


#: what the contender lines are, for a reader
CONTENDERS_HEAD = (
    "Which system is best (no label can name it; these may be: label to decide with "
    "werest sample strategy=winner, docs/winner.md):"
)


def format_board(result: Leaderboard) -> str:
    """The printed summary: the contenders, ranking, agreement, neighbour tests, fairness
    (with ``labels=``, the command prints the decision above it, instead of the contenders)."""
    contenders = (f"  {line}" for line in contender_lines(result.datasets))
    lead = [] if result.decisions else [CONTENDERS_HEAD, *contenders, ""]
    parts = [
        *lead,
        board_view(result.board).to_string(index=False),
        "",
        agreement_line(result.agreement),
        "",
        "Neighbours (A − B on the labelled utterances, paired 95 % interval):"
        if "verdict" in result.pairs
        else "Neighbours (estimated A − B, 95 % interval calibrated leave one domain out on "
        "differences; a verdict only where it excludes 0):",
        pairs_view(result.pairs).to_string(index=False),
    ]
    if "summary" in result.fairness:
        parts += [
            "",
            "Fairness audit (FAAS = 10·log10(overall score / WER as a fraction)):",
            fairness_view(result.fairness["summary"]).to_string(index=False),
        ]
    return "\n".join(parts)


def markdown_report(result: Leaderboard) -> str:
    """leaderboard.md: every table of the run."""
    contenders = [
        "## Which system is best",
        "",
        CONTENDERS_HEAD,
        "",
        *(f"- {line}" for line in contender_lines(result.datasets)),
        "",
    ]
    lines = [
        "# Leaderboard",
        "",
        # labels=: the decision leads (werest.report.leaderboard_decision)
        *(decision_markdown(result.decisions, result.rounds, result.label_notes) or contenders),
        "## Ranking",
        "",
        "Ranked by the macro average over datasets of the corpus WER estimate Σ(pred·n̂)/Σn̂ "
        "(prediction-powered where `method` says ppi). The 95 % interval includes the "
        "model's own error on new domains (or is the labels' interval); the sampling CI is a "
        "percentile bootstrap over utterances: sampling noise only.",
        "",
        markdown_table(board_view(result.board)),
        "",
        agreement_line(result.agreement),
        "",
        *warnings_markdown(result.warnings),
        "## Neighbours in the ranking",
        "",
        "Paired bootstrap on the utterances both systems transcribed (the same resample "
        "for both): p = share of resamples where A's WER is not lower than B's; Δ = A − B "
        "in points; d = Cohen's d of utterance WERs, A − B over the pooled SD: the sign of "
        "Δ (negative = A lower; a mean of utterance WERs, so where A and B are close it can "
        "differ in sign from Δ, a difference of corpus WERs). The "
        "estimated columns test the estimates, not the truth: an error the model makes on "
        "every system is invisible to them.",
        "",
        markdown_table(pairs_view(result.pairs)),
        "",
        "## Per dataset",
        "",
        markdown_table(dataset_view(result.datasets)),
        "",
        "## Utterance-level statistics",
        "",
        markdown_table(descriptive_view(result.descriptive)),
    ]
    lines += _fairness_markdown(result.fairness)
    return "\n".join(lines) + "\n"


def warnings_markdown(warnings: list[dict]) -> list[str]:
    """The guards' warnings (:mod:`werest.estimation.guards`) as a Markdown list, as the console
    shows
    them, so a reader of the file sees what the person at the console saw."""
    if not warnings:
        return []
    return [
        "**Warnings**",
        "",
        *(f"- {line}" for line in format_warnings(warnings).splitlines()),
        "",
    ]


def dataset_view(frame: pd.DataFrame) -> pd.DataFrame:
    view = frame[["dataset", "system", "n"]].copy()
    view["est. WER %"] = frame["est_wer"].map(percent)
    if "method" in frame:  # labels=: the prediction-powered interval and its labels
        view["method"] = frame["method"]
        view["labels"] = frame["n_labelled"]
        view["95% interval"] = [
            percent_interval(lo, hi) if m == "ppi" else ""
            for lo, hi, m in zip(
                frame["interval_low"], frame["interval_high"], frame["method"], strict=True
            )
        ]
        view["labels only %"] = [
            percent(v) if m == "ppi" else ""
            for v, m in zip(frame["classical_wer"], frame["method"], strict=True)
        ]
    if "true_wer" in frame:
        view["true WER %"] = frame["true_wer"].map(percent)
    return view


def descriptive_view(frame: pd.DataFrame) -> pd.DataFrame:
    view = frame[["system", "measure", "n"]].copy()
    for column in (
        "mean",
        "sd",
        "min",
        "max",
        "ci_low",
        "ci_high",
        "p50",
        "p95",
        "rtfx",
        "rtf_le_1",
        "throughput",
    ):
        if column in frame:
            view[column] = frame[column].map(number)
    return view


def _fairness_markdown(fairness: dict[str, pd.DataFrame]) -> list[str]:
    if "summary" not in fairness:
        return []
    lines = [
        "",
        "## Fairness audit",
        "",
        "ASR-FAIRBENCH method (werest.evaluation.fairness): Poisson model of utterance errors with "
        "offset log(words) (a GLM, or with fairness.model=glmm the published GLMM with a "
        "per-speaker random intercept and its LRT; each category's test is in "
        "fairness_categories.csv); FAAS = 10·log10(overall score / WER as a fraction). `est` "
        "uses the estimated error count pred·n̂ and length n̂.",
        "",
        markdown_table(fairness_view(fairness["summary"])),
    ]
    if "comparison" in fairness:
        lines += [
            "",
            "### True vs estimated, per category",
            "",
            markdown_table(comparison_view(fairness["comparison"])),
        ]
    groups = fairness["groups"].copy()
    groups["predicted WER %"] = groups["predicted_wer"].map(percent)
    groups["raw score"] = groups["raw_score"].map(lambda v: number(v, 1))
    groups["share"] = groups["share"].map(lambda v: number(v, 3))
    lines += [
        "",
        "### Groups",
        "",
        markdown_table(
            groups[
                [
                    "dataset",
                    "system",
                    "source",
                    "category",
                    "group",
                    "n",
                    "share",
                    "predicted WER %",
                    "raw score",
                ]
            ]
        ),
    ]
    return lines


def plot_board(board: pd.DataFrame, path: Path) -> None:
    """A bar chart of estimated macro WER with CI error bars (true WER as markers)."""
    from matplotlib.figure import Figure

    y = np.arange(len(board))
    est = 100 * board["est_wer"].to_numpy(dtype=float)
    low, high = (
        ("interval_low", "interval_high")
        if "interval_low" in board
        else (
            "est_ci_low",
            "est_ci_high",
        )
    )
    errors = np.vstack(
        [
            est - 100 * board[low].to_numpy(dtype=float),
            100 * board[high].to_numpy(dtype=float) - est,
        ]
    )
    fig = Figure(figsize=(7, 0.6 * len(board) + 2.0))
    ax = fig.subplots()
    ax.barh(
        y,
        est,
        xerr=np.nan_to_num(errors),
        color="#7aa6c2",
        capsize=4,
        label="estimated (95 % interval)",
    )
    if "true_wer" in board:
        ax.plot(100 * board["true_wer"].to_numpy(dtype=float), y, "kD", label="true")
    ax.set_yticks(y, board["system"])
    ax.invert_yaxis()
    ax.set_xlabel("macro-average WER %")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2, frameon=False)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
