"""The page's decision with ``labels=``: the header's lead (:func:`decision_lead`, one line
per dataset, above every tab) and the first tab (:func:`decision_tab`): the decision per
dataset, each dataset's certificate round by round (:func:`rounds_chart`) and the table of
the rounds. The readable views are :mod:`werest.report.leaderboard_decision`'s, as
``leaderboard.md`` shows them."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from werest.formatting import number
from werest.report.leaderboard_decision import (
    DECISION_HEAD,
    decision_lines,
    decision_view,
    rounds_view,
)
from werest.report.page.markup import html_table, links
from werest.report.page.plots import EST_COLOUR, GRID, TRUE_COLOUR, chart, error_bar

if TYPE_CHECKING:
    from werest.ranking.board import Leaderboard

#: the charts' grid: two side by side where the page is wide enough, never wider than it
GRID_STYLE = (
    "display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,520px),1fr));gap:0 16px"
)


def decision_lead(result: Leaderboard) -> str:
    """The header's lead with a decision: one line per dataset (the status, the winner or
    the leader, ``regret_bound``, ``may_be_best``, the transcripts) and the notes."""
    items = "".join(f"<li>{html.escape(line)}</li>" for line in decision_lines(result.decisions))
    items += "".join(f"<li>note: {html.escape(note)}</li>" for note in result.label_notes)
    return (
        f'<div class="contenders" id="decision-lead"><p>{html.escape(DECISION_HEAD)}</p>'
        f"<ul>{items}</ul></div>"
    )


def decision_tab(result: Leaderboard) -> str:
    """The first tab with ``labels=``: the decision's table, each dataset's certificate
    against the transcripts round by round, and the rounds' table."""
    parts = [
        '<p class="note">Per dataset: <b>decided</b> (every other system is shown worse than '
        "the winner), <b>good</b> (no other system is shown better than the winner by more than "
        "the margin) or <b>undecided</b> (the leader leads; label more: werest sample "
        "strategy=winner with these sheets in labels=). The regret bound: the leader is at most "
        "this many WER points worse than the best, at level 1 − winner.alpha (95 % by "
        "default), however and whenever you stop. Transcripts: the distinct utterances "
        "transcribed. Full data: " + links(["winner.json", "winner_rounds.csv"]) + ".</p>",
        html_table(decision_view(result.decisions), "decision", sortable=False),
    ]
    notes = [
        f"{entry['dataset']}: {note}"
        for entry in result.decisions
        for note in entry.get("notes", [])
    ]
    if notes:
        parts.append(
            '<ul class="note">'
            + "".join(f"<li>{html.escape(note)}</li>" for note in notes)
            + "</ul>"
        )
    rounds = result.rounds
    if rounds is not None and len(rounds):
        charts = [
            f"<div>{rounds_chart(mine, number)}</div>"
            for number, (_, mine) in enumerate(rounds.groupby("dataset", sort=True))
        ]
        parts += [
            "<h3>Round by round</h3>",
            '<p class="note">After each sheet (sheet k: the sheets numbered k or less), the '
            "certificate (the regret bound) and the runner-up minus the leader with its "
            "confidence sequence, against the transcripts so far; the dashed line is the "
            "margin. One point per sheet.</p>",
            f'<div class="rounds" style="{GRID_STYLE}">{"".join(charts)}</div>',
            html_table(rounds_view(rounds), "rounds"),
        ]
    return "".join(parts)


def rounds_chart(rounds: pd.DataFrame, number: int) -> str:
    """One dataset's decision after each sheet: ``regret_bound`` and the runner-up minus the
    leader (its interval ``low``/``high`` as error bars) against the transcripts used; the
    margin dashed. The chart's id: ``plot-rounds-<number>``."""
    import plotly.graph_objects as go

    dataset = str(rounds["dataset"].iat[0])
    custom = np.column_stack(
        [
            rounds["round"].astype(str),
            rounds["status"].astype(str),
            rounds["leader"].astype(str),
            rounds["runner_up"].fillna("").astype(str),
        ]
    )
    fig = go.Figure([_regret_trace(rounds, custom), _difference_trace(rounds, custom)])
    margin = float(rounds["margin"].iat[-1])
    fig.add_hline(y=margin, line={"color": "#888888", "dash": "dash", "width": 1})
    fig.add_hline(y=0, line={"color": "#bbbbbb", "width": 1})
    fig.update_xaxes(title="transcripts", rangemode="tozero", gridcolor=GRID)
    fig.update_yaxes(title="WER points", gridcolor=GRID, zeroline=False)
    fig.update_layout(
        title={"text": html.escape(dataset), "x": 0.01, "font": {"size": 14}},
        margin={"l": 55, "r": 15, "t": 40, "b": 45},
        legend={"orientation": "h", "x": 0, "y": -0.3, "yanchor": "top"},
        hovermode="closest",
    )
    last = rounds.iloc[-1]
    return chart(
        fig,
        f"plot-rounds-{number}",
        340,
        f"{dataset}: {last['status']} after {int(last['labels_used'])} transcripts "
        f"(margin {margin:.2f} points).",
    )


def _regret_trace(rounds: pd.DataFrame, custom: np.ndarray):
    """The certificate after each sheet, joined by a line."""
    import plotly.graph_objects as go

    return go.Scatter(
        x=rounds["labels_used"].to_numpy(dtype=float),
        y=rounds["regret_bound"].to_numpy(dtype=float),
        mode="lines+markers",
        name="regret bound",
        marker={"color": EST_COLOUR, "size": 9},
        line={"color": EST_COLOUR, "width": 1.5},
        customdata=custom,
        hovertemplate="sheet %{customdata[0]}: %{x} transcripts<br>%{customdata[1]}, "
        "%{customdata[2]} leads<br>regret bound %{y:.2f} pts<extra></extra>",
    )


def _difference_trace(rounds: pd.DataFrame, custom: np.ndarray):
    """The runner-up minus the leader after each sheet, its confidence sequence as error
    bars."""
    import plotly.graph_objects as go

    difference = rounds["difference"].to_numpy(dtype=float)
    low, high = (rounds[c].to_numpy(dtype=float) for c in ("low", "high"))
    return go.Scatter(
        x=rounds["labels_used"].to_numpy(dtype=float),
        y=difference,
        mode="markers",
        name="runner-up − leader",
        marker={"color": TRUE_COLOUR, "size": 7, "symbol": "diamond"},
        error_y=error_bar(
            np.nan_to_num(high - difference), np.nan_to_num(difference - low), TRUE_COLOUR, 1, 4
        ),
        customdata=np.column_stack([custom, list(map(_interval, low, high))]),
        hovertemplate="sheet %{customdata[0]}: %{x} transcripts<br>%{customdata[3]} − "
        "%{customdata[2]}: %{y:.2f} pts %{customdata[4]}<extra></extra>",
    )


def _interval(low: float, high: float) -> str:
    return f"[{number(low, 2)}, {number(high, 2)}]"
