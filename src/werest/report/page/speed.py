"""The Ranking tab's speed/accuracy chart: the ranking's macro WER against RTFx, with the
Pareto front."""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np
import pandas as pd

from werest.report.page.board import has_timings, has_truth, ranking_column
from werest.report.page.markup import pct, short
from werest.report.page.plots import EST_COLOUR, FRONT_COLOUR, GRID, TRUE_COLOUR, chart


def _log_ticks(low: float, high: float) -> tuple[list[float], list[str]]:
    """Plain tick labels for a log axis (1, 2, 5, 10, 20, 50...): no 6×10⁰."""
    ticks = []
    for exponent in range(int(np.floor(np.log10(low))) - 1, int(np.ceil(np.log10(high))) + 2):
        for m in (1, 2, 5):
            value = m * 10.0**exponent
            if low / 1.5 <= value <= high * 1.5:
                ticks.append(value)
    if len(ticks) > 12:  # a wide range: powers of ten only
        ticks = [t for t in ticks if np.isclose(10 ** np.round(np.log10(t)), t)]
    return ticks, [f"{t:g}" for t in ticks]


def pareto_front(rtfx: np.ndarray, wer: np.ndarray) -> np.ndarray:
    """Whether each system is on the speed/accuracy Pareto front: no other system is both
    at least as fast (RTFx) and more accurate (lower WER), or as accurate and faster."""
    front = np.zeros(len(rtfx), dtype=bool)
    for i in range(len(rtfx)):
        if not (np.isfinite(rtfx[i]) and np.isfinite(wer[i])):
            continue
        better = (rtfx >= rtfx[i]) & (wer <= wer[i]) & ((rtfx > rtfx[i]) | (wer < wer[i]))
        front[i] = not better.any()
    return front


@dataclass(frozen=True)
class Timed:
    """The systems with timings, as the chart draws them: RTFx, the ranking's macro WER (%,
    its ``column``), the truth (% or NaN), whether each is on the Pareto front, and the hover
    data."""

    rtfx: np.ndarray
    wer: np.ndarray
    true: np.ndarray
    names: np.ndarray
    front: np.ndarray
    custom: np.ndarray
    column: str
    has_truth: bool

    @classmethod
    def of(cls, board: pd.DataFrame) -> Timed:
        timed = board[np.isfinite(board["rtfx"].to_numpy(dtype=float))].reset_index(drop=True)
        rtfx = timed["rtfx"].to_numpy(dtype=float)
        column = ranking_column(timed)
        wer = 100 * timed[column].to_numpy(dtype=float)
        names = timed["system"].astype(str).to_numpy()
        front = pareto_front(rtfx, wer)
        true_column = ranking_column(timed, "true")
        true = (
            100 * timed[true_column].to_numpy(dtype=float)
            if has_truth(timed)
            else np.full(len(timed), np.nan)
        )
        custom = np.column_stack(
            [
                names,
                [pct(v) for v in timed["est_wer"]],
                [pct(v) for v in true / 100],
                timed["datasets"].astype(str).to_numpy(),
                ["yes" if f else "no" for f in front],
            ]
        )
        return cls(rtfx, wer, true, names, front, custom, column, has_truth(timed))

    @property
    def over_all(self) -> bool:
        """Whether the WER is the macro over all datasets (common ground)."""
        return self.column.endswith("_all")


def plot_wer_vs_rtfx(board: pd.DataFrame) -> str:
    """The speed/accuracy view: the ranking's macro WER against RTFx (log axis), the Pareto
    front drawn and its systems named; "" without timings."""
    import plotly.graph_objects as go

    if not has_timings(board):
        return ""
    timed = Timed.of(board)
    fig = go.Figure()
    order = np.argsort(timed.rtfx[timed.front])
    fig.add_trace(
        go.Scatter(
            x=timed.rtfx[timed.front][order],
            y=timed.wer[timed.front][order],
            mode="lines",
            line={"color": FRONT_COLOUR, "width": 2, "shape": "vh"},
            name="Pareto front (estimated)",
            hoverinfo="skip",
        )
    )
    _dots(fig, timed)
    _front_names(fig, timed)
    _axes(fig, timed)
    return chart(
        fig,
        "plot-wer-vs-rtfx",
        520,
        "Speed against accuracy: each dot is a system, its estimated macro WER (the ranking's) "
        "against its RTFx. Green: the Pareto front, the systems no other system beats on both "
        "(faster and at least as accurate); the best trade-offs lie on it. "
        + ("Diamonds: the true WER. " if timed.has_truth else "")
        + "Hover a dot for the system.",
    )


def _dots(fig, timed: Timed) -> None:
    """The true WER (diamonds, with references), then the estimates off and on the front."""
    import plotly.graph_objects as go

    hover = (
        "<b>%{customdata[0]}</b><br>RTFx %{x:.1f}<br>est. WER %{y:.2f} %"
        + (" (all datasets)<br>own datasets: %{customdata[1]}" if timed.over_all else "")
        + ("<br>true WER %{customdata[2]}" if timed.has_truth else "")
        + "<br>datasets: %{customdata[3]}<br>Pareto front: %{customdata[4]}<extra></extra>"
    )
    if timed.has_truth:
        fig.add_trace(
            go.Scatter(
                x=timed.rtfx,
                y=timed.true,
                mode="markers",
                marker={"symbol": "diamond-open", "color": TRUE_COLOUR, "size": 8},
                name="true WER",
                customdata=timed.custom,
                hovertemplate="<b>%{customdata[0]}</b><br>RTFx %{x:.1f}<br>true WER %{y:.2f} %"
                "<extra></extra>",
            )
        )
    for mask, colour, size, label in (
        (~timed.front, EST_COLOUR, 9, "estimated WER"),
        (timed.front, FRONT_COLOUR, 12, "estimated WER, on the Pareto front"),
    ):
        if not mask.any():
            continue
        fig.add_trace(
            go.Scatter(
                x=timed.rtfx[mask],
                y=timed.wer[mask],
                mode="markers",
                marker={"color": colour, "size": size, "line": {"color": "#ffffff", "width": 1}},
                name=label,
                customdata=timed.custom[mask],
                hovertemplate=hover,
            )
        )


def _front_names(fig, timed: Timed) -> None:
    """The name of each system on the front, beside its dot."""
    front = timed.front
    for x, y, name in zip(timed.rtfx[front], timed.wer[front], timed.names[front], strict=True):
        fig.add_annotation(
            x=np.log10(x),
            y=y,
            text=html.escape(short(name, 24)),
            showarrow=False,
            xanchor="left",
            yanchor="bottom",
            xshift=6,
            yshift=2,
            font={"size": 11, "color": FRONT_COLOUR},
        )


def _axes(fig, timed: Timed) -> None:
    """RTFx on a log axis with plain ticks, the WER from zero, the legend on top."""
    ticks, labels = _log_ticks(float(timed.rtfx.min()), float(timed.rtfx.max()))
    fig.update_xaxes(
        type="log",
        title="RTFx (audio seconds per processing second, log scale; right = faster)",
        tickvals=ticks,
        ticktext=labels,
        gridcolor=GRID,
    )
    fig.update_yaxes(
        title="macro WER %" + (" (all datasets)" if timed.over_all else ""),
        rangemode="tozero",
        gridcolor=GRID,
    )
    fig.update_layout(
        margin={"l": 60, "r": 30, "t": 40, "b": 50},
        legend={"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"},
    )
