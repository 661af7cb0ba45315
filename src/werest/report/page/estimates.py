"""The Ranking tab's first chart: each system's estimated macro WER with its 95 % interval,
against its true macro WER where references exist."""

from __future__ import annotations

import numpy as np
import pandas as pd

from werest.report.page.board import has_truth, interval
from werest.report.page.markup import short
from werest.report.page.plots import EST_COLOUR, GRID, MISS_COLOUR, chart


def plot_estimate_vs_truth(board: pd.DataFrame) -> str:
    """Each system's estimated macro WER with its 95 % interval (error bars) against its
    true macro WER (both over the system's own datasets), and the line y = x; hover names
    the system. Without truth: the estimates with their intervals, best first."""
    import plotly.graph_objects as go

    est = 100 * board["est_wer"].to_numpy(dtype=float)
    low, high = (100 * v for v in interval(board))
    names = board["system"].astype(str).to_numpy()
    has_interval = np.isfinite(low) & np.isfinite(high)
    interval_text = [
        f"[{lo:.2f}, {hi:.2f}] %" if ok else "none"
        for lo, hi, ok in zip(low, high, has_interval, strict=True)
    ]
    plus = np.where(has_interval, high - est, 0.0)
    minus = np.where(has_interval, est - low, 0.0)
    fig = go.Figure()
    if not has_truth(board):
        y = [short(n) for n in names]
        fig.add_trace(
            go.Scatter(
                x=est,
                y=y,
                mode="markers",
                marker={"color": EST_COLOUR, "size": 9},
                error_x={
                    "type": "data",
                    "array": plus,
                    "arrayminus": minus,
                    "color": EST_COLOUR,
                    "thickness": 1.5,
                    "width": 4,
                },
                customdata=np.column_stack([names, interval_text]),
                hovertemplate="<b>%{customdata[0]}</b><br>estimate %{x:.2f} %"
                "<br>95 % interval %{customdata[1]}<extra></extra>",
                showlegend=False,
            )
        )
        fig.update_yaxes(autorange="reversed", type="category", automargin=True)
        fig.update_xaxes(
            title="estimated macro WER % (95 % interval)", rangemode="tozero", gridcolor=GRID
        )
        fig.update_layout(margin={"l": 10, "r": 20, "t": 20, "b": 50})
        return chart(
            fig,
            "plot-estimates",
            130 + 26 * len(board),
            "Estimated macro WER of each system with its 95 % interval (the model's error "
            "included), best first. Hover for the full name and numbers.",
        )
    true = 100 * board["true_wer"].to_numpy(dtype=float)
    t_low = 100 * board["true_ci_low"].to_numpy(dtype=float)
    t_high = 100 * board["true_ci_high"].to_numpy(dtype=float)
    holds = has_interval & (low <= true) & (true <= high)
    top = float(np.nanmax(np.concatenate([high[has_interval], est, true]))) * 1.05 + 0.5
    fig.add_trace(
        go.Scatter(
            x=[0, top],
            y=[0, top],
            mode="lines",
            line={"color": "#888888", "dash": "dash", "width": 1},
            name="estimate = truth (y = x)",
            hoverinfo="skip",
        )
    )
    custom = np.column_stack(
        [
            names,
            interval_text,
            [f"[{a:.2f}, {b:.2f}] %" for a, b in zip(t_low, t_high, strict=True)],
            board["datasets"].astype(str).to_numpy(),
        ]
    )
    for mask, colour, label in (
        (holds, EST_COLOUR, "interval holds the true WER"),
        (~holds, MISS_COLOUR, "interval misses the true WER"),
    ):
        if not mask.any():
            continue
        fig.add_trace(
            go.Scatter(
                x=true[mask],
                y=est[mask],
                mode="markers",
                marker={"color": colour, "size": 9, "line": {"color": "#ffffff", "width": 1}},
                error_y={
                    "type": "data",
                    "array": plus[mask],
                    "arrayminus": minus[mask],
                    "color": colour,
                    "thickness": 1.2,
                    "width": 3,
                },
                customdata=custom[mask],
                name=label,
                hovertemplate="<b>%{customdata[0]}</b><br>estimate %{y:.2f} %"
                "<br>95 % interval %{customdata[1]}<br>true %{x:.2f} % "
                "(CI %{customdata[2]})<br>datasets: %{customdata[3]}<extra></extra>",
            )
        )
    fig.update_xaxes(title="true macro WER %", range=[0, top], gridcolor=GRID, zeroline=False)
    fig.update_yaxes(
        title="estimated macro WER % (95 % interval)",
        range=[0, top],
        gridcolor=GRID,
        zeroline=False,
    )
    fig.update_layout(
        margin={"l": 60, "r": 20, "t": 40, "b": 50},
        legend={"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"},
        hovermode="closest",
    )
    return chart(
        fig,
        "plot-estimate-vs-truth",
        600,
        "Each dot is a system: its estimated macro WER (over the datasets it was run on) "
        "with its 95 % interval as the error bar, against its true macro WER over the same "
        "datasets; dashed: y = x (estimate = truth). Orange: the interval misses the truth. "
        "Hover a dot for the system and its numbers; drag to zoom, double-click to reset.",
    )
