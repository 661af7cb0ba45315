"""The page's plotly pieces: its colours, the options of every chart, a figure as a
``<div>`` with a fixed id (:func:`chart`), and plotly.js to inline once."""

from __future__ import annotations

import html

EST_COLOUR = "#2f6fb0"
TRUE_COLOUR = "#222222"
MISS_COLOUR = "#d9730d"
FRONT_COLOUR = "#2e8b57"
GRID = "#e5e9ee"


#: plotly's options for every chart: no logo, no editing tools that need a server.
PLOT_CONFIG = {
    "displaylogo": False,
    "responsive": True,
    "modeBarButtonsToRemove": ["select2d", "lasso2d", "autoScale2d", "toggleSpikelines"],
    "toImageButtonOptions": {"format": "svg"},
}


def chart(fig, div_id: str, height: int, caption: str) -> str:
    """A Plotly figure as a ``<div>`` with the fixed id ``div_id`` and the script that draws
    it (plotly.js itself is in the page's head, once), then its caption."""
    fig.update_layout(
        height=height,
        template="plotly_white",
        font={"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 13},
        hoverlabel={"font_size": 13},
        autosize=True,
    )
    markup = fig.to_html(
        full_html=False,
        include_plotlyjs=False,
        div_id=div_id,
        config=PLOT_CONFIG,
        default_width="100%",
        default_height=f"{height}px",
    )
    return f'<div class="plot">{markup}</div><p class="caption">{html.escape(caption)}</p>'


def plotly_js() -> str:
    """plotly.js, to be inlined once in the page's head (the page fetches nothing)."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def error_bar(plus, minus, colour: str, thickness: float, width: int) -> dict:
    """A plotly error bar reaching ``plus`` above and ``minus`` below each point."""
    return {
        "type": "data",
        "array": plus,
        "arrayminus": minus,
        "color": colour,
        "thickness": thickness,
        "width": width,
    }
