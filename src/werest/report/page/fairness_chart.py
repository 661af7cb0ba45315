"""The Fairness tab's charts: per category, each group's WER relative to its system's, from
the label-free and the true audit."""

from __future__ import annotations

import html
from collections.abc import Mapping

import numpy as np
import pandas as pd

from werest.report.page.markup import short
from werest.report.page.plots import EST_COLOUR, GRID, TRUE_COLOUR, chart, error_bar

#: The most groups a category's fairness chart shows (the largest; all are in the CSV).
MAX_GROUPS = 20


def group_effects(fairness: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Per (category, group, source): how much higher the group's predicted WER is than its
    system's WER, in percent (100·(WER_g / WER − 1) of each (dataset, system) audit, WER the
    audit's corpus WER), summarised over the audits: median, quartiles, range and count."""
    groups, summary = fairness["groups"], fairness["summary"]
    rows = []
    for source in ("est", "true"):
        mine = groups[groups["source"] == source]
        if mine.empty or f"{source}_wer" not in summary:
            continue
        wer = summary.set_index(["dataset", "system"])[f"{source}_wer"]
        overall = wer.reindex(pd.MultiIndex.from_frame(mine[["dataset", "system"]])).to_numpy()
        with np.errstate(divide="ignore", invalid="ignore"):  # a WER of 0: no effect
            effect = 100 * (mine["predicted_wer"].to_numpy(dtype=float) / overall - 1)
        frame = mine.assign(effect=effect)
        frame = frame[np.isfinite(frame["effect"])]
        for (category, group), g in frame.groupby(["category", "group"], sort=False):
            rows.append(
                {
                    "category": category,
                    "group": group,
                    "source": source,
                    "audits": len(g),
                    "utterances": int(g["n"].sum()),
                    "median": float(g["effect"].median()),
                    "q25": float(g["effect"].quantile(0.25)),
                    "q75": float(g["effect"].quantile(0.75)),
                    "min": float(g["effect"].min()),
                    "max": float(g["effect"].max()),
                }
            )
    return pd.DataFrame(rows)


def plot_fairness(fairness: Mapping[str, pd.DataFrame]) -> str:
    """One chart per category: each group's effect (:func:`group_effects`), its median over
    the audited (dataset, system) pairs with the interquartile range as the error bar, from
    the label-free and (with references) the true audit side by side."""
    if "groups" not in fairness or fairness["groups"].empty:
        return ""
    effects = group_effects(fairness)
    if effects.empty:
        return ""
    return "".join(
        _category_chart(effects[effects["category"] == category], category, index)
        for index, category in enumerate(dict.fromkeys(effects["category"]))
    )


def _category_chart(rows: pd.DataFrame, category, index: int) -> str:
    """The chart of one category's groups (its largest :data:`MAX_GROUPS`)."""
    import plotly.graph_objects as go

    sizes = rows.groupby("group")["utterances"].max().sort_values(ascending=False)
    shown = list(sizes.index[:MAX_GROUPS])
    fig = go.Figure()
    for source, colour, label, offset in (
        ("true", TRUE_COLOUR, "from true WER", -0.17),
        ("est", EST_COLOUR, "label-free (estimated)", 0.17),
    ):
        mine = rows[(rows["source"] == source) & rows["group"].isin(shown)]
        if mine.empty:
            continue
        mine = mine.set_index("group").reindex(shown).dropna(subset=["median"])
        position = np.array([shown.index(g) for g in mine.index], dtype=float) + offset
        fig.add_trace(_group_dots(mine, position, category, source, colour, label))
    fig.add_vline(x=0, line={"color": "#888888", "width": 1, "dash": "dash"})
    _category_axes(fig, shown, category)
    more = len(sizes) - len(shown)
    return chart(
        fig,
        f"plot-fairness-{index}",
        140 + 30 * len(shown),
        f"{category}: each group's predicted WER relative to its system's WER on the "
        "same dataset (+20 % = a fifth more errors than the system's average), the "
        "median over every audited (dataset, system) with the middle half of them as "
        "the bar; left of the dashed line = fewer errors than average."
        + (
            f" The {len(shown)} largest of {len(sizes)} groups; all are in fairness_groups.csv."
            if more
            else ""
        ),
    )


def _group_dots(mine: pd.DataFrame, position: np.ndarray, category, source, colour, label):
    """One audit's (``source``'s) groups: the median effect at ``position``, the middle half
    as the error bar, the numbers in the hover."""
    import plotly.graph_objects as go

    return go.Scatter(
        x=mine["median"],
        y=position,
        mode="markers",
        marker={
            "color": colour,
            "size": 9,
            "symbol": "diamond" if source == "true" else "circle",
        },
        error_x=error_bar(
            mine["q75"] - mine["median"], mine["median"] - mine["q25"], colour, 1.5, 3
        ),
        name=label,
        customdata=np.column_stack(
            [
                [str(g) for g in mine.index],
                mine["q25"],
                mine["q75"],
                mine["min"],
                mine["max"],
                mine["audits"].astype(int),
                mine["utterances"].astype(int),
            ]
        ),
        hovertemplate="<b>%{customdata[0]}</b> ("
        + html.escape(str(category))
        + ", "
        + label
        + ")<br>median %{x:+.1f} % vs the system's WER"
        "<br>middle half %{customdata[1]:+.1f} … %{customdata[2]:+.1f} %"
        "<br>range %{customdata[3]:+.1f} … %{customdata[4]:+.1f} %"
        "<br>%{customdata[5]} audits, %{customdata[6]} utterances<extra></extra>",
    )


def _category_axes(fig, shown: list, category) -> None:
    """The groups down the side (largest first), the effect in % across, the title."""
    fig.update_yaxes(
        tickvals=list(range(len(shown))),
        ticktext=[html.escape(short(g, 26)) for g in shown],
        autorange="reversed",
        automargin=True,
        gridcolor=GRID,
    )
    fig.update_xaxes(
        title="group WER vs the system's WER, % (median over audits; bar: middle half)",
        ticksuffix=" %",
        gridcolor=GRID,
        zeroline=False,
    )
    fig.update_layout(
        title={"text": html.escape(str(category)), "x": 0, "font": {"size": 15}},
        margin={"l": 10, "r": 20, "t": 60, "b": 50},
        legend={"orientation": "h", "x": 1, "xanchor": "right", "y": 1.0, "yanchor": "bottom"},
    )
