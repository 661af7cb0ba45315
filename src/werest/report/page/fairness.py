"""The Fairness tab: the group-effect charts, FAAS per system, and per-category summaries of
the audits and of where the label-free audit differs from the true one."""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

import pandas as pd

from werest.formatting import number
from werest.report.page.fairness_chart import plot_fairness
from werest.report.page.markup import Cell, html_table, links, pct_cell

if TYPE_CHECKING:
    from werest.ranking.board import Leaderboard


def _most_common(values: pd.Series) -> str:
    counts = values.dropna().astype(str).value_counts()
    if counts.empty:
        return ""
    return f"{counts.index[0]} ({counts.iloc[0]}/{len(values)})"


def fairness_system_view(board: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """Per system, in ranking order: audits, mean overall score and FAAS (true, estimated)."""
    rows = []
    for system in board["system"]:
        mine = summary[summary["system"] == system]
        if mine.empty:
            continue
        row = {"system": system, "audited datasets": str(len(mine))}
        for label, name in (("true", "true"), ("est", "est.")):
            if f"{label}_overall" in mine:
                row[f"{name} WER %"] = pct_cell(mine[f"{label}_wer"].mean())
                overall = mine[f"{label}_overall"].mean()
                row[f"{name} overall score"] = Cell(number(overall, 1), sort=float(overall))
                faas = mine[f"{label}_faas"].mean()
                row[f"{name} FAAS"] = Cell(number(faas, 1), sort=float(faas))
        rows.append(row)
    return pd.DataFrame(rows)


def fairness_category_view(categories: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Per category and source: how many audits found a significant disparity, the median
    scores, and the group most often worst."""
    rows = []
    for (category, source), g in categories.groupby(["category", "source"], sort=False):
        audited = g[g["audited"].astype(bool)]
        rows.append(
            {
                "category": category,
                "from": "true WER" if source == "true" else "estimated",
                "audits": str(len(g)),
                "groups (median)": number(float(g["groups"].median()), 0),
                f"significant (p < {alpha:g})": f"{int((audited['p_value'] < alpha).sum())}"
                f"/{len(audited)}",
                "median score": number(float(audited["category_score"].median()), 1),
                "median adjusted": number(float(audited["adjusted_score"].median()), 1),
            }
        )
    return pd.DataFrame(rows)


def fairness_agreement_view(comparison: pd.DataFrame) -> pd.DataFrame:
    """Per category: how often the label-free audit reaches the true audit's conclusions."""
    rows = []
    for category, g in comparison.groupby("category", sort=False):
        n = len(g)
        same = g["disagreement"].fillna("").astype(str)
        rows.append(
            {
                "category": category,
                "audits": str(n),
                "same significance": f"{int((~same.str.contains('significance')).sum())}/{n}",
                "same worst group": f"{int((g['true_worst'] == g['est_worst']).sum())}/{n}",
                "same best group": f"{int((g['true_best'] == g['est_best']).sum())}/{n}",
                "group order τ (median)": number(float(g["group_kendall"].median()), 2),
                "worst group (true)": _most_common(g["true_worst"]),
                "worst group (est.)": _most_common(g["est_worst"]),
            }
        )
    return pd.DataFrame(rows)


def tests_used(categories: pd.DataFrame) -> str:
    """The tests the audits used, once each per source (a dispersion-scaled LRT's φ̂ given
    as its range over the audits)."""
    pattern = re.compile(r"φ̂ = ([0-9.]+)")
    parts = []
    for source, g in categories.groupby("source", sort=False):
        tests = g.loc[g["test"].astype(str) != "none", "test"].astype(str)
        kinds: dict[str, list[float]] = {}
        for test in tests:
            kinds.setdefault(pattern.sub("φ̂ = …", test), []).extend(
                float(v) for v in pattern.findall(test)
            )
        names = []
        for kind, phis in kinds.items():
            if phis:
                low, high = min(phis), max(phis)
                span = f"{low:.2f}" if low == high else f"{low:.2f}–{high:.2f}"
                kind = kind.replace("φ̂ = …", f"φ̂ = {span}")
            names.append(kind)
        label = "true WER" if source == "true" else "estimated"
        parts.append(f"{label}: {', '.join(names) or 'none'}")
    return "; ".join(parts)


def fairness_tab(result: Leaderboard, alpha: float) -> str:
    fairness = result.fairness
    summary = fairness["summary"]
    files = [f"fairness_{name}.csv" for name in ("summary", "groups", "categories", "comparison")]
    files = [f for f in files if f.removeprefix("fairness_").removesuffix(".csv") in fairness]
    parts = [
        '<p class="note">The ASR-FAIRBENCH audit of each (dataset, system) with demographic '
        "values"
        + (
            ", from the true WER and from the label-free estimate"
            if "comparison" in fairness
            else ", from the label-free estimate"
        )
        + f" ({len(summary)} audits). Full data: {links(files)}.</p>",
        plot_fairness(fairness),
        "<h3>FAAS per system</h3>",
        '<p class="note">Means over the system\'s audited datasets; the overall fairness score '
        "is 0–100 (100: no disparity), FAAS = 10·log10(overall score / WER as a fraction) "
        "(see Metrics).</p>",
        html_table(fairness_system_view(result.board, summary), "fairness"),
    ]
    categories = fairness.get("categories")
    if categories is not None and not categories.empty:
        parts += [
            "<h3>Per category</h3>",
            html_table(fairness_category_view(categories, alpha), "fairness-categories"),
        ]
    if "comparison" in fairness:
        parts += [
            "<h3>Does the label-free audit reach the true audit's conclusions?</h3>",
            html_table(fairness_agreement_view(fairness["comparison"]), "comparison"),
        ]
    if categories is not None:
        parts.append('<p class="note">Tests used: ' + html.escape(tests_used(categories)) + ".</p>")
    return "".join(parts)
