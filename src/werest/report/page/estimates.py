"""The Ranking tab's first chart: each system's estimated macro WER with its 95 % interval,
against its true macro WER where references exist."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from werest.report.page.board import has_truth, interval
from werest.report.page.markup import short
from werest.report.page.plots import EST_COLOUR, GRID, MISS_COLOUR, chart, error_bar


@dataclass(frozen=True)
class Estimates:
    """Each system's estimated macro WER (%) and its 95 % interval, as the chart draws them:
    the error bar's reach above (``plus``) and below (``minus``) the estimate, 0 where the
    interval is missing, and the interval as hover text."""

    names: np.ndarray
    est: np.ndarray
    low: np.ndarray
    high: np.ndarray
    has_interval: np.ndarray
    interval_text: list[str]
    plus: np.ndarray
    minus: np.ndarray

    @classmethod
    def of(cls, board: pd.DataFrame) -> Estimates:
        est = 100 * board["est_wer"].to_numpy(dtype=float)
        low, high = (100 * v for v in interval(board))
        has_interval = np.isfinite(low) & np.isfinite(high)
        interval_text = [
            f"[{lo:.2f}, {hi:.2f}] %" if ok else "none"
            for lo, hi, ok in zip(low, high, has_interval, strict=True)
        ]
        return cls(
            names=board["system"].astype(str).to_numpy(),
            est=est,
            low=low,
            high=high,
            has_interval=has_interval,
            interval_text=interval_text,
            plus=np.where(has_interval, high - est, 0.0),
            minus=np.where(has_interval, est - low, 0.0),
        )


def plot_estimate_vs_truth(board: pd.DataFrame) -> str:
    """Each system's estimated macro WER with its 95 % interval (error bars) against its
    true macro WER (both over the system's own datasets), and the line y = x; hover names
    the system. Without truth: the estimates with their intervals, best first."""
    estimates = Estimates.of(board)
    if not has_truth(board):
        return _estimates_only(board, estimates)
    return _against_truth(board, estimates)


def _estimates_only(board: pd.DataFrame, e: Estimates) -> str:
    """The estimates with their intervals, one row per system, best first."""
    import plotly.graph_objects as go

    fig = go.Figure()
    y = [short(n) for n in e.names]
    fig.add_trace(
        go.Scatter(
            x=e.est,
            y=y,
            mode="markers",
            marker={"color": EST_COLOUR, "size": 9},
            error_x=error_bar(e.plus, e.minus, EST_COLOUR, 1.5, 4),
            customdata=np.column_stack([e.names, e.interval_text]),
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


def _against_truth(board: pd.DataFrame, e: Estimates) -> str:
    """The estimates against the truth, the line y = x, and the dots whose interval misses
    the truth in another colour."""
    import plotly.graph_objects as go

    true = 100 * board["true_wer"].to_numpy(dtype=float)
    holds = e.has_interval & (e.low <= true) & (true <= e.high)
    top = float(np.nanmax(np.concatenate([e.high[e.has_interval], e.est, true]))) * 1.05 + 0.5
    fig = go.Figure()
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
    _truth_dots(fig, board, e, true, holds)
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


def _truth_dots(fig, board: pd.DataFrame, e: Estimates, true: np.ndarray, holds: np.ndarray):
    """One trace of the systems whose interval holds the truth, one of those it misses."""
    import plotly.graph_objects as go

    t_low = 100 * board["true_ci_low"].to_numpy(dtype=float)
    t_high = 100 * board["true_ci_high"].to_numpy(dtype=float)
    custom = np.column_stack(
        [
            e.names,
            e.interval_text,
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
                y=e.est[mask],
                mode="markers",
                marker={"color": colour, "size": 9, "line": {"color": "#ffffff", "width": 1}},
                error_y=error_bar(e.plus[mask], e.minus[mask], colour, 1.2, 3),
                customdata=custom[mask],
                name=label,
                hovertemplate="<b>%{customdata[0]}</b><br>estimate %{y:.2f} %"
                "<br>95 % interval %{customdata[1]}<br>true %{x:.2f} % "
                "(CI %{customdata[2]})<br>datasets: %{customdata[3]}<extra></extra>",
            )
        )
