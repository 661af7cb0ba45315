"""Reports of the four-case evaluation: CSV, a readable markdown file and PNG plots.

:func:`write_four_case_reports` writes, in ``output_dir``:

* ``<name>.csv``: every cell (:data:`werest.evaluation.four_cases.CSV_COLUMNS`; WERs as fractions);
* ``<name>.md``: the accuracy bar, one table per case, the ranking agreement, the ablation,
  the experiment's settings and the training times (WERs in points);
* ``<name>_scatter.png``: predicted vs actual utterance WER, one panel per case;
* ``<name>_bars.png``: true WER vs aWER per dataset and system.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from werest.evaluation.four_cases import (
    ABLATION,
    CASES,
    CSV_COLUMNS,
    MEAN_FOLD,
    RAW_PWER,
    TRAIN_MEAN,
    WEREST,
    FourCaseResult,
)
from werest.formatting import markdown_table, number, percent
from werest.io import atomic_path, save_figure, write_csv, write_text

log = logging.getLogger(__name__)

BAR_CELL_ERROR = 0.05
BAR_MEDIAN_ERROR = 0.025
MAIN_METHODS = (WEREST, RAW_PWER, TRAIN_MEAN)


def bar_cells(cells: pd.DataFrame) -> pd.DataFrame:
    """Case 1/2 cells with werest and raw_pwer side by side and whether each bar holds.

    Returns
    -------
    One row per (case, eval_system, dataset): ``mae``, ``raw_mae``, ``wer``, ``awer``,
    ``abs_corpus_error``, ``mae_below_raw`` and ``corpus_within_5``.
    """
    iid = cells[cells["case"].isin([1, 2])]
    keys = ["case", "fold", "eval_system", "dataset"]
    ours = iid[iid["method"] == WEREST].set_index(keys)
    raw = iid[iid["method"] == RAW_PWER].set_index(keys)
    table = ours[["n", "mae", "wer", "awer", "abs_corpus_error"]].join(
        raw[["mae", "awer"]].rename(columns={"mae": "raw_mae", "awer": "raw_awer"})
    )
    table["mae_below_raw"] = table["mae"] < table["raw_mae"]
    table["corpus_within_5"] = table["abs_corpus_error"] <= BAR_CELL_ERROR
    return table.reset_index().sort_values(["case", "dataset", "eval_system"])


def bar_summary(cells: pd.DataFrame) -> dict[str, object]:
    """How many case 1/2 cells hold each bar, and the median/max corpus error."""
    table = bar_cells(cells)
    median = float(table["abs_corpus_error"].median()) if len(table) else float("nan")
    return {
        "cells": len(table),
        "mae_below_raw": int(table["mae_below_raw"].sum()),
        "corpus_within_5": int(table["corpus_within_5"].sum()),
        "median_error": median,
        "max_error": float(table["abs_corpus_error"].max()) if len(table) else float("nan"),
        "median_within_2.5": bool(median <= BAR_MEDIAN_ERROR),
    }


def format_bar_table(cells: pd.DataFrame) -> str:
    """The accuracy bar as plain text (for the terminal)."""
    view = _bar_view(bar_cells(cells), markdown=False)
    summary = bar_summary(cells)
    return (
        view.to_string(index=False) + f"\nmedian |err| {percent(summary['median_error'])} pts "
        f"(bar 2.5: {_yes_no(summary['median_within_2.5'])}); "
        f"max {percent(summary['max_error'])} pts"
    )


def _yes_no(value: bool) -> str:
    return "yes" if bool(value) else "NO"


# The bar table's columns: (column of bar_cells, how it is shown, terminal label, Markdown
# label); a None label leaves the column out there.
_BAR_COLUMNS = (
    ("case", None, "case", "case"),
    ("eval_system", None, "system", "system"),
    ("dataset", None, "dataset", "dataset"),
    ("n", None, "n", "n"),
    ("mae", number, "MAE", "werest MAE"),
    ("raw_mae", number, "raw MAE", "raw_pwer MAE"),
    ("wer", percent, "WER %", "WER %"),
    ("awer", percent, "aWER %", "werest aWER %"),
    ("raw_awer", percent, None, "raw_pwer aWER %"),
    ("abs_corpus_error", percent, "|err| pts", "abs corpus error (pts)"),
    ("mae_below_raw", _yes_no, "MAE<raw", "MAE < raw"),
    ("corpus_within_5", _yes_no, "|err|<=5", "error ≤ 5"),
)


def _bar_view(table: pd.DataFrame, *, markdown: bool) -> pd.DataFrame:
    """The bar cells as display strings, labelled for Markdown or for the terminal."""
    columns = {}
    for source, shown, terminal, long in _BAR_COLUMNS:
        label = long if markdown else terminal
        if label is not None:
            columns[label] = table[source].map(shown) if shown else table[source]
    return pd.DataFrame(columns)


def bar_section(cells: pd.DataFrame) -> str:
    """Markdown: the accuracy bar on the case 1/2 cells."""
    summary = bar_summary(cells)
    view = _bar_view(bar_cells(cells), markdown=True)
    return "\n".join(
        [
            "## The accuracy bar (cases 1 and 2)",
            "",
            "Per cell: werest's utterance MAE below raw pWER's, and the corpus error "
            "|aWER − WER| at most 5 WER points; over all case 1/2 cells the median error at "
            "most 2.5 points.",
            "",
            markdown_table(view),
            "",
            f"MAE below raw pWER in {summary['mae_below_raw']} of {summary['cells']} cells; "
            f"corpus error ≤ 5 points in {summary['corpus_within_5']} of {summary['cells']}; "
            f"median {percent(summary['median_error'])} points "
            f"({'holds' if summary['median_within_2.5'] else 'misses'} the 2.5 bar), "
            f"max {percent(summary['max_error'])} points.",
        ]
    )


def case_table(cells: pd.DataFrame, case: int, methods: Sequence[str] = MAIN_METHODS) -> str:
    """Markdown: one case's cells with each method's MAE, aWER and corpus error."""
    subset = cells[(cells["case"] == case) & cells["method"].isin(methods)]
    if case in (3, 4):
        subset = subset[subset["fold"] == MEAN_FOLD]
    if subset.empty:
        return "(no cell: this case does not occur in the experiment)"
    keys = ["eval_system", "dataset"]
    first = subset[subset["method"] == methods[0]].set_index(keys)
    view = pd.DataFrame({"n": first["n"], "WER %": first["wer"].map(percent)}, index=first.index)
    for method in methods:
        rows = subset[subset["method"] == method].set_index(keys)
        view[f"{method} MAE"] = rows["mae"].map(number)
        view[f"{method} aWER %"] = rows["awer"].map(percent)
        view[f"{method} err"] = rows["abs_corpus_error"].map(percent)
    view[f"{methods[0]} pearson"] = first["pearson"].map(number)
    view[f"{methods[0]} spearman"] = first["spearman"].map(number)
    view = view.reset_index().rename(columns={"eval_system": "system"})
    return markdown_table(view.sort_values(["dataset", "system"]))


def per_fold_table(cells: pd.DataFrame, case: int) -> str:
    """Markdown: werest vs raw pWER per fold for a wild case (3 or 4)."""
    subset = cells[(cells["case"] == case) & (cells["fold"] != MEAN_FOLD)]
    ours = subset[subset["method"] == WEREST].set_index(["fold", "eval_system", "dataset"])
    raw = subset[subset["method"] == RAW_PWER].set_index(["fold", "eval_system", "dataset"])
    if ours.empty:
        return ""
    view = pd.DataFrame(
        {
            "n": ours["n"],
            "WER %": ours["wer"].map(percent),
            "werest MAE": ours["mae"].map(number),
            "raw_pwer MAE": raw["mae"].map(number),
            "werest aWER %": ours["awer"].map(percent),
            "werest err": ours["abs_corpus_error"].map(percent),
            "raw_pwer err": raw["abs_corpus_error"].map(percent),
        }
    ).reset_index()
    view = view.rename(columns={"fold": "fold (held-out B)", "eval_system": "system"})
    return markdown_table(view)


def cases_section(cells: pd.DataFrame) -> str:
    """Markdown: one table per case."""
    parts = ["## The four cases", ""]
    parts.append(
        "WER, aWER and errors in WER points; MAE and correlations on utterance WER (fractions). "
        "`err` = |aWER − WER|. Cases 3 and 4 are evaluated by every fold's model; their main "
        "tables show the mean over folds of each metric (so `err` there is the mean per-fold "
        "error, not |mean aWER − WER|); the per-fold cells follow each table."
    )
    for case, title in CASES.items():
        parts += ["", f"### Case {case}: {title}", "", case_table(cells, case)]
        if case in (3, 4):
            folds = per_fold_table(cells, case)
            if folds:
                parts += ["", "<details><summary>per fold</summary>", "", folds, "", "</details>"]
    return "\n".join(parts)


def ranking_section(rankings: pd.DataFrame) -> str:
    """Markdown: agreement between systems ranked by aWER and by WER, per dataset."""
    if rankings.empty:
        return "## Ranking agreement\n\n(no dataset with systems to rank)"
    benchmark = rankings["fold"] == rankings["dataset"]
    shown = rankings[
        rankings["method"].isin([WEREST, RAW_PWER]) & (benchmark | (rankings["fold"] == MEAN_FOLD))
    ]
    view = pd.DataFrame(
        {
            "dataset": shown["dataset"],
            "method": shown["method"],
            "cases": shown["cases"],
            "systems": shown["n_systems"],
            "spearman": shown["spearman"].map(number),
            "kendall": shown["kendall"].map(number),
            "by WER (best first)": shown["systems_by_wer"],
            "by aWER": shown["systems_by_awer"],
            "note": shown["note"],
        }
    ).sort_values(["dataset", "method"])
    return "\n".join(
        [
            "## Ranking agreement",
            "",
            "Spearman and Kendall correlation between the systems ranked by aWER and by true "
            "WER on each dataset (only with at least 3 systems). Held-out B datasets: the fold "
            "that held them out; W datasets: aWER averaged over the folds' models. "
            "`train_mean` gives every system the same aWER and is left out.",
            "",
            markdown_table(view),
        ]
    )


def ablation_summary(cells: pd.DataFrame) -> pd.DataFrame:
    """Per case and method (ablation sets and the main methods): mean MAE and the median and
    max |corpus error| over the per-fold cells."""
    per_fold = cells[cells["fold"] != MEAN_FOLD]
    shown = per_fold[(per_fold["group"] == ABLATION) | per_fold["method"].isin(MAIN_METHODS)]
    summary = (
        shown.groupby(["case", "method", "model"], sort=False)
        .agg(
            cells=("mae", "size"),
            mean_mae=("mae", "mean"),
            median_error=("abs_corpus_error", "median"),
            max_error=("abs_corpus_error", "max"),
        )
        .reset_index()
    )
    order = [*MAIN_METHODS, *dict.fromkeys(shown.loc[shown["group"] == ABLATION, "method"])]
    rank = summary["method"].map({name: i for i, name in enumerate(order)})
    return summary.assign(_rank=rank).sort_values(["case", "_rank"]).drop(columns="_rank")


def ablation_section(cells: pd.DataFrame, cfg: Mapping | None) -> str:
    """Markdown: the feature-set ablation."""
    summary = ablation_summary(cells)
    view = pd.DataFrame(
        {
            "case": summary["case"],
            "method": summary["method"],
            "model": summary["model"],
            "cells": summary["cells"],
            "mean MAE": summary["mean_mae"].map(number),
            "median err (pts)": summary["median_error"].map(percent),
            "max err (pts)": summary["max_error"].map(percent),
        }
    )
    model = ""
    if cfg is not None and cfg.get("ablation") and cfg["ablation"].get("feature_sets"):
        sets = cfg["ablation"]["feature_sets"]
        ablation_model = cfg["ablation"].get("model") or cfg["model"]
        model = (
            f"The ablation rows use {_model_description(ablation_model)}"
            " for every feature set (monotonic constraints restricted to each set's features). "
            "Feature sets: "
            + "; ".join(f"**{name}** = {', '.join(cols)}" for name, cols in sets.items())
            + "."
        )
    return "\n".join(
        [
            "## Ablation",
            "",
            "Mean utterance MAE and the median/max |aWER − WER| (points) over the per-fold "
            "cells of each case (cases 3/4: every fold's model counts as a cell). " + model,
            "",
            markdown_table(view),
        ]
    )


def _model_description(model: Mapping) -> str:
    """``StackedWerRegressor`` of hgb with grids … as a short phrase."""
    target = str(model.get("_target_", "?")).rsplit(".", 1)[-1]
    models = model.get("models")
    return f"`{target}`" + (f" of {', '.join(models)}" if models else "")


def config_section(result: FourCaseResult, cfg: Mapping | None) -> str:
    """Markdown: who trains and where, and why."""
    protocol = result.protocol
    lines = [
        "## The experiment",
        "",
        f"- source system S: `{protocol.source_system}`",
        f"- target systems T: {', '.join(f'`{t}`' for t in protocol.target_systems)}",
        f"- benchmark datasets B (left out one at a time): "
        f"{', '.join(f'`{d}`' for d in protocol.benchmark_datasets)}",
        f"- wild datasets W (never used for ranking or training): "
        f"{', '.join(f'`{d}`' for d in protocol.wild_datasets) or 'none'}",
        f"- case 4 also evaluates systems of W that no B dataset has: "
        f"{'yes' if protocol.unseen_wild_targets else 'no'}",
    ]
    if cfg is not None:
        lines += [
            f"- model (`werest`): {_model_description(cfg['model'])} on features "
            f"`{cfg['features'].get('name')}` ({len(cfg['features']['columns'])} columns)",
            f"- normaliser: `{cfg['normaliser']}`; seed {cfg['seed']}; n_jobs {cfg['n_jobs']}",
        ]
    if protocol.rationale:
        lines += ["", "Why these choices:", "", protocol.rationale.strip()]
    return "\n".join(lines)


def timing_section(result: FourCaseResult) -> str:
    """Markdown: training seconds per fold and method, and the run's total."""
    timings = result.timings
    if timings.empty:
        return "## Training time\n\n(no training)"
    learned = timings[timings["model"] != ""]
    wide = learned.pivot_table(
        index=["method", "model"], columns="fold", values="seconds", aggfunc="sum", sort=False
    )
    wide["total"] = wide.sum(axis=1)
    view = wide.round(1).reset_index()
    rows = learned.groupby("fold")["train_rows"].first()
    lines = [
        "## Training time",
        "",
        "Seconds to fit each learned method per fold (grid search and stacking included), "
        "on this machine; training rows per fold: "
        + ", ".join(f"{fold}: {n}" for fold, n in rows.items())
        + ".",
        "",
        markdown_table(view),
        "",
        f"Whole run: {result.seconds.get('total', result.seconds.get('evaluate', 0)):.0f} s "
        f"(loading, labels, features, {len(rows)} folds, metrics and reports).",
    ]
    stacked = timings[(timings["method"] == WEREST) & (timings["inner_cv"] != "")]
    if not stacked.empty:
        view = stacked[["fold", "train_rows", "inner_cv"]].rename(
            columns={
                "fold": "fold (held-out B)",
                "inner_cv": "base model: inner-CV MAE (weight in the blend)",
            }
        )
        lines += [
            "",
            "The `werest` model per fold: each base model's grouped inner cross-validation MAE "
            "on B∖{b} (folds = datasets) and its weight under the non-negative ridge.",
            "",
            markdown_table(view),
        ]
    return "\n".join(lines)


def four_case_markdown(result: FourCaseResult, cfg: Mapping | None, name: str) -> str:
    """The whole markdown report."""
    command = "werest evaluate experiment=four_cases"
    header = [
        f"# Four-case evaluation: {name}",
        "",
        f"Written by `{command}` (werest.evaluation.four_cases, werest.report.reports). Regressor "
        "trained on the "
        "source system's rows of all but one benchmark dataset (leave one dataset out); "
        "evaluated on the four cases of Waheed et al. (2025). Learned corpus estimates weight "
        "utterances by the proxy's word count (`proxy_words`, ≥ 1); "
        "`raw_pwer`'s corpus estimate is the corpus pWER (Σ errors against the proxy / Σ proxy "
        "words); `train_mean` predicts the mean training label everywhere.",
        "",
        f"Plots: `{name}_scatter.png` (predicted vs actual utterance WER per case, werest; "
        f"cases 3/4 pool every fold's predictions), `{name}_bars.png` (WER vs aWER per dataset "
        "and system; W datasets: mean over folds).",
    ]
    sections = [
        "\n".join(header),
        bar_section(result.cells),
        cases_section(result.cells),
        ranking_section(result.rankings),
        ablation_section(result.cells, cfg),
        config_section(result, cfg),
        timing_section(result),
    ]
    return "\n\n".join(sections) + "\n"


def scatter_plot(result: FourCaseResult, path: Path, method: str = WEREST) -> Path:
    """Predicted vs actual utterance WER, one hexbin panel per case."""
    from matplotlib.figure import Figure

    predictions = result.predictions
    fig = Figure(figsize=(16, 4.2))
    axes = fig.subplots(1, 4, sharex=True, sharey=True)
    for axis, (case, title) in zip(axes, CASES.items(), strict=True):
        rows = predictions[predictions["case"] == case]
        axis.set_title(f"case {case}: {title}", fontsize=9)
        axis.plot([0, 1.2], [0, 1.2], color="grey", linewidth=0.8)
        if rows.empty:
            axis.text(0.6, 0.6, "no cell", ha="center")
            continue
        actual = np.clip(rows["wer"].to_numpy(dtype=float), 0, 1.2)
        predicted = np.clip(rows[f"pred:{method}"].to_numpy(dtype=float), 0, 1.2)
        axis.hexbin(
            actual,
            predicted,
            gridsize=30,
            bins="log",
            mincnt=1,
            cmap="viridis",
            extent=(0, 1.2, 0, 1.2),
        )
        axis.set_xlabel(f"actual utterance WER (n={len(rows)})")
    axes[0].set_ylabel(f"predicted ({method})")
    fig.tight_layout()
    return save_figure(fig, path)


def bars_plot(result: FourCaseResult, path: Path) -> Path:
    """True WER vs werest and raw-pWER aWER per dataset and system."""
    from matplotlib.figure import Figure

    cells = result.cells
    shown = cells[(cells["fold"] == cells["dataset"]) | (cells["fold"] == MEAN_FOLD)]
    datasets = list(dict.fromkeys(shown["dataset"]))
    fig = Figure(figsize=(4 * max(1, len(datasets)), 4))
    axes = fig.subplots(1, max(1, len(datasets)), squeeze=False)
    for axis, dataset in zip(axes[0], datasets, strict=False):
        rows = shown[shown["dataset"] == dataset]
        systems = sorted(rows["eval_system"].unique())
        x = np.arange(len(systems))
        truth = rows[rows["method"] == WEREST].set_index("eval_system")["wer"]
        series = [("WER", truth)] + [
            (f"aWER {m}", rows[rows["method"] == m].set_index("eval_system")["awer"])
            for m in (WEREST, RAW_PWER)
        ]
        for i, (label, values) in enumerate(series):
            axis.bar(
                x + (i - 1) * 0.27, 100 * values.reindex(systems).to_numpy(), 0.27, label=label
            )
        axis.set_xticks(x, systems, rotation=30, fontsize=8)
        axis.set_title(dataset, fontsize=9)
    axes[0][0].set_ylabel("WER %")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=3, fontsize=8)
    fig.tight_layout(rect=(0, 0, 1, 0.9))
    return save_figure(fig, path)


def write_four_case_reports(
    result: FourCaseResult, cfg: Mapping | None, output_dir: str | Path, *, name: str
) -> list[Path]:
    """Write ``<name>.csv``, ``<name>.md`` and the two plots in ``output_dir``.

    Returns
    -------
    The written paths.
    """
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    csv_path = output_dir / f"{name}.csv"
    with atomic_path(csv_path) as tmp:
        write_csv(result.cells[CSV_COLUMNS], tmp)
    md_path = output_dir / f"{name}.md"
    write_text(four_case_markdown(result, cfg, name), md_path)
    paths = [
        csv_path,
        md_path,
        scatter_plot(result, output_dir / f"{name}_scatter.png"),
        bars_plot(result, output_dir / f"{name}_bars.png"),
    ]
    log.info("wrote %s", ", ".join(str(p) for p in paths))
    return paths
