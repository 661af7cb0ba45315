"""The whole page: the head, the header, one tab per view with something to show, the
footer; :func:`render` joins the views and :func:`write_page` writes the file."""

from __future__ import annotations

import html
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from werest.io import write_text
from werest.report.leaderboard_report import (
    CONTENDERS_HEAD,
    agreement_line,
    contender_lines,
    dataset_view,
    pairs_view,
)
from werest.report.page.assets import SCRIPT, STYLE
from werest.report.page.board import has_timings
from werest.report.page.datasets import datasets_tab
from werest.report.page.decision import decision_lead, decision_tab
from werest.report.page.fairness import fairness_tab
from werest.report.page.header import contenders, subtitle
from werest.report.page.latency import latency_tab
from werest.report.page.lid import lid_missing, lid_tab
from werest.report.page.metrics import metrics_tab
from werest.report.page.pairs import pairs_tab
from werest.report.page.plots import plotly_js
from werest.report.page.ranking import ranking_tab

if TYPE_CHECKING:
    from werest.ranking.board import Leaderboard


#: Every tab, in the order shown; a tab is on the page only when it has something to show.
TABS = [
    ("tab-decision", "Which system is best"),
    ("tab-ranking", "Ranking"),
    ("tab-datasets", "Datasets"),
    ("tab-pairs", "Paired tests"),
    ("tab-fairness", "Fairness"),
    ("tab-latency", "Latency"),
    ("tab-lid", "Language ID"),
    ("tab-metrics", "Metrics"),
]


def tabs(result: Leaderboard) -> tuple[list[tuple[str, str]], list[str]]:
    """(the tabs with something to show, why each other tab is not shown)."""
    shown, hidden = [], []
    fairness = "summary" in result.fairness and not result.fairness["summary"].empty
    reasons = {
        "tab-decision": None
        if result.decisions
        else "no labels= (the header's contenders are the zero-label shortlist; werest sample "
        "strategy=winner draws the sheets that decide)",
        "tab-pairs": None if not result.pairs.empty else "fewer than two systems to pair",
        "tab-fairness": None
        if fairness
        else "no demographic column (gender, age, accent) with groups of "
        "fairness.min_group_size utterances to audit",
        "tab-latency": None
        if has_timings(result.board)
        else "no timings (duration with processing_seconds or latency_ms)",
        "tab-lid": None if result.lid is not None else lid_missing(result),
    }
    for tab, label in TABS:
        reason = reasons.get(tab)
        if reason is None:
            shown.append((tab, label))
        else:
            hidden.append(f"{html.escape(label)}: {reason}")
    return shown, hidden


def render(result: Leaderboard, context: Mapping[str, object] | None = None) -> str:
    """The whole page as one HTML string (the same ``result`` gives the same string)."""
    context = dict(context or {})
    alpha = float(context.get("alpha", 0.05))
    shown, hidden = tabs(result)
    builders = {
        "tab-decision": lambda: decision_tab(result),
        "tab-ranking": lambda: ranking_tab(
            result, agreement_line(result.agreement) if result.agreement else None
        ),
        "tab-datasets": lambda: datasets_tab(result.datasets, dataset_view),
        "tab-pairs": lambda: pairs_tab(result.pairs, pairs_view(result.pairs)),
        "tab-fairness": lambda: fairness_tab(result, alpha),
        "tab-latency": lambda: latency_tab(result),
        "tab-lid": lambda: lid_tab(result),
        "tab-metrics": lambda: metrics_tab(context),
    }
    lead = (  # labels=: the decision leads, above every tab
        decision_lead(result)
        if result.decisions
        else contenders(CONTENDERS_HEAD, contender_lines(result.datasets))
    )
    nav = "".join(f'<button data-tab="{tab}">{html.escape(label)}</button>' for tab, label in shown)
    sections = "".join(
        f'<section class="tab" id="{tab}"><h2>{html.escape(label)}</h2>{builders[tab]()}</section>'
        for tab, label in shown
    )
    footer = "<footer>Not shown: " + "; ".join(hidden) + ".</footer>" if hidden else ""
    title = html.escape(str(context.get("title", "werest leaderboard")))
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title}</title><style>{STYLE}</style>"
        f'<script type="text/javascript">{plotly_js()}</script></head><body>'
        f"<header><h1>{title}</h1><p>{html.escape(subtitle(result))}</p>"
        f"{lead}</header>"
        f"<nav>{nav}</nav>"
        '<noscript><p class="note" style="padding:0 24px">JavaScript is off: every tab is '
        "shown below one after the other; the charts need JavaScript, every number is also in "
        "the tables.</p></noscript>"
        f"{sections}{footer}<script>{SCRIPT}</script></body></html>\n"
    )


def write_page(result: Leaderboard, path: Path, context: Mapping[str, object] | None = None):
    """Write ``leaderboard.html`` atomically."""
    write_text(render(result, context), path)
    return path
