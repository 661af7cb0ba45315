"""``leaderboard.html``: the leaderboard as one static, self-contained web page.

The page is what the reference leaderboards publish (the Open ASR Leaderboard's ranking with
one WER column per dataset and RTFx; the ASR fairness leaderboard's FAAS), written as a single
file that works offline: the CSS, the table-sorting/tab script and plotly.js are inline (once,
in the head), every chart is a Plotly figure with a fixed id, and nothing is fetched from a CDN
or a server. The same leaderboard gives the same page, byte for byte. Tabs, each shown only
when it has something to show:

* **Ranking**: the ranking table (common-ground macro WER with its 95 % interval, the true WER
  and rank where references exist, RTFx, FAAS, one WER column per dataset, and how many
  datasets each system was run on), the rank agreement, a full-width chart of the estimate
  against the truth (hover: system, estimate, interval, truth) and the WER-vs-RTFx Pareto
  view (with timings), and a details table per system (own and common-ground macros, CIs);
* **Datasets**: one sortable table per dataset;
* **Paired tests**: the neighbour tests of :func:`werest.ranking.leaderboard.neighbour_tests`;
* **Fairness**: a chart of the group effects per category, FAAS per system, per-category
  summaries of the audits and of where the label-free audit differs from the true one (the
  full tables are the ``fairness_*.csv`` files beside the page, linked);
* **Latency**: per system, RTFx, latency and utterance WER statistics (with timings);
* **Language ID**: accuracy, confidence and confusion (with detected languages);
* **Metrics**: the definition of every number, as computed.

Without JavaScript every tab is shown one after the other (the script only hides tabs) and
every number is in a table, so the page is still complete when scripts are off (only the
charts need them).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from werest.formatting import missing, number, percent, percent_interval, plural
from werest.io import atomic_path

if TYPE_CHECKING:
    from werest.ranking.board import Leaderboard

EST_COLOUR = "#2f6fb0"
TRUE_COLOUR = "#222222"
MISS_COLOUR = "#d9730d"
FRONT_COLOUR = "#2e8b57"
GRID = "#e5e9ee"

STYLE = """
*{box-sizing:border-box}
html,body{overflow-x:hidden}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d1d1f;
background:#fafafa;font-size:14px}
header{background:#1f3b57;color:#fff;padding:14px 24px}
header h1{margin:0 0 4px 0;font-size:22px}
header p{margin:0;font-size:13px;opacity:.9}
nav{display:flex;gap:4px;padding:8px 24px 0 24px;background:#e9eef3;flex-wrap:wrap}
nav button{border:0;padding:8px 14px;background:#d5dee7;cursor:pointer;font-size:14px;
border-radius:6px 6px 0 0}
nav button.active{background:#fafafa;font-weight:600}
section.tab{padding:8px 24px 16px 24px;max-width:100%}
section.tab h2{font-size:19px;margin:10px 0 6px 0}
section.tab h3{font-size:16px;margin:18px 0 4px 0}
.box{max-width:100%;overflow-x:auto}
table{border-collapse:collapse;margin:6px 0 16px 0;font-size:13px;background:#fff}
th,td{border:1px solid #d0d7de;padding:3px 6px;text-align:right}
td{white-space:nowrap}
th{background:#eef2f6;vertical-align:bottom;font-weight:600;min-width:3.5em;max-width:9em;
white-space:normal;overflow-wrap:break-word;hyphens:manual}
th.text,td.text{text-align:left}
td.sys{white-space:normal;overflow-wrap:break-word;min-width:12em;max-width:20em}
td.na{color:#999}
td small{color:#666;font-size:11px}
th.ds{background:#e6eef7;max-width:7em;font-size:12px}
table.sortable th{cursor:pointer}
table.sortable th.asc::after{content:" \\25B2"}
table.sortable th.desc::after{content:" \\25BC"}
tbody tr:nth-child(even){background:#f6f8fa}
tbody tr:hover{background:#fff6d9}
.plot{background:#fff;border:1px solid #d0d7de;margin:8px 0 4px 0;width:100%}
.caption{font-size:12.5px;color:#555;margin:0 0 18px 0;max-width:1100px}
dl dt{font-weight:600;margin-top:10px}
dl dd{margin-left:18px;max-width:1000px}
.note{font-size:13px;color:#444;max-width:1100px}
.warning{color:#8a3b00}
footer{padding:8px 24px 24px 24px;font-size:12.5px;color:#555}
"""

SCRIPT = """
(function(){
  function key(cell){
    if(cell.dataset.v!==undefined){var v=parseFloat(cell.dataset.v);return isNaN(v)?'':v;}
    var t=cell.textContent.trim();
    var n=parseFloat(t.replace(/^[^0-9.+\\-]+/,''));
    return isNaN(n)?t.toLowerCase():n;
  }
  function compare(a,b){
    if(a===''&&b!=='')return 1; if(b===''&&a!=='')return -1;
    if(typeof a==='number'&&typeof b==='number')return a-b;
    if(typeof a==='number')return -1; if(typeof b==='number')return 1;
    return a<b?-1:(a>b?1:0);
  }
  document.querySelectorAll('table.sortable').forEach(function(table){
    table.querySelectorAll('thead th').forEach(function(th,col){
      th.addEventListener('click',function(){
        var asc=!th.classList.contains('asc');
        table.querySelectorAll('th').forEach(function(h){h.classList.remove('asc','desc');});
        th.classList.add(asc?'asc':'desc');
        var body=table.tBodies[0];
        var rows=Array.prototype.slice.call(body.rows);
        rows.sort(function(r1,r2){
          var c=compare(key(r1.cells[col]),key(r2.cells[col]));
          return asc?c:-c;
        });
        rows.forEach(function(r){body.appendChild(r);});
      });
    });
  });
  var buttons=document.querySelectorAll('nav button');
  function show(id){
    document.querySelectorAll('section.tab').forEach(function(s){
      s.style.display=(s.id===id)?'block':'none';
      if(s.id===id&&window.Plotly){
        s.querySelectorAll('.js-plotly-plot').forEach(function(p){Plotly.Plots.resize(p);});
      }
    });
    buttons.forEach(function(b){b.classList.toggle('active',b.dataset.tab===id);});
  }
  buttons.forEach(function(b){b.addEventListener('click',function(){
    show(b.dataset.tab); history.replaceState(null,'','#'+b.dataset.tab);});});
  var wanted=location.hash.slice(1);
  if(wanted&&document.getElementById(wanted))show(wanted);
  else if(buttons.length)show(buttons[0].dataset.tab);
  if(wanted)window.addEventListener('load',function(){
    setTimeout(function(){window.scrollTo(0,0);},0);});
})();
"""

#: Every tab, in the order shown; a tab is on the page only when it has something to show.
TABS = [
    ("tab-ranking", "Ranking"),
    ("tab-datasets", "Datasets"),
    ("tab-pairs", "Paired tests"),
    ("tab-fairness", "Fairness"),
    ("tab-latency", "Latency"),
    ("tab-lid", "Language ID"),
    ("tab-metrics", "Metrics"),
]

#: plotly's options for every chart: no logo, no editing tools that need a server.
PLOT_CONFIG = {
    "displaylogo": False,
    "responsive": True,
    "modeBarButtonsToRemove": ["select2d", "lasso2d", "autoScale2d", "toggleSpikelines"],
    "toImageButtonOptions": {"format": "svg"},
}


# --------------------------------------------------------------------------- html pieces


@dataclass(frozen=True)
class Cell:
    """A table cell: its ``text``, an optional sort value (``data-v``: a number sorts as a
    number whatever the text shows), a ``title`` (shown on hover) and the ``html`` to show
    instead of the escaped text (already escaped by whoever built it)."""

    text: str
    sort: float | None = None
    title: str | None = None
    html: str | None = None


def html_table(
    frame: pd.DataFrame,
    table_id: str | None = None,
    sortable: bool = True,
    header_titles: Mapping[str, str] | None = None,
    header_class: Mapping[str, str] | None = None,
) -> str:
    """An HTML table of display strings (escaped) or :class:`Cell` values; ``sortable``
    tables sort on a header click. Text columns (system names...) are left-aligned, and a
    ``system`` column wraps long names. The table sits in a box that scrolls on its own if
    it is ever wider than the page, so the page itself never scrolls sideways."""
    attributes = f' id="{html.escape(table_id)}"' if table_id else ""
    css = ' class="sortable"' if sortable else ""
    header_titles = header_titles or {}
    header_class = header_class or {}
    text_columns = {c for c in frame.columns if _is_text(frame[c])}
    head = []
    for c in frame.columns:
        classes = " ".join(
            x for x in ("text" if c in text_columns else "", header_class.get(c)) if x
        )
        title = f' title="{html.escape(header_titles[c])}"' if c in header_titles else ""
        klass = f' class="{classes}"' if classes else ""
        head.append(f"<th{klass}{title}>{html.escape(str(c))}</th>")
    rows = []
    for row in frame.itertuples(index=False):
        cells = []
        for column, value in zip(frame.columns, row, strict=True):
            classes = []
            if column in text_columns:
                classes.append("text")
            if column == "system":
                classes.append("sys")
                value = _breakable(value)
            cells.append(_td(value, classes))
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return (
        f'<div class="box"><table{attributes}{css}><thead><tr>{"".join(head)}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


_NUMERIC = re.compile(r"^\s*[\[(]?\s*[-−+]?(\d|\.\d|inf)")


def _is_text(values: pd.Series) -> bool:
    """Whether a column holds words (left-aligned) rather than numbers."""
    texts = [v.text if isinstance(v, Cell) else _cell(v) for v in values]
    texts = [t for t in texts if t and t != "—"]
    return bool(texts) and not any(_NUMERIC.match(t) for t in texts)


def _td(value, classes: list[str]) -> str:
    attributes = ""
    if isinstance(value, Cell):
        if value.sort is not None and np.isfinite(value.sort):
            attributes += f' data-v="{value.sort!r}"'
        elif value.sort is not None:
            attributes += ' data-v=""'
        if value.title:
            attributes += f' title="{html.escape(value.title)}"'
        if value.text in ("", "—"):
            classes = [*classes, "na"]
        content = value.html if value.html is not None else html.escape(value.text)
    else:
        content = html.escape(_cell(value))
    klass = f' class="{" ".join(classes)}"' if classes else ""
    return f"<td{klass}{attributes}>{content}</td>"


def _breakable(value) -> Cell:
    """A system name that may wrap after ``/`` and ``_`` (and, as always, ``-``)."""
    text = value.text if isinstance(value, Cell) else _cell(value)
    markup = re.sub(r"([/_])", r"\1<wbr>", html.escape(text))
    if isinstance(value, Cell):
        return Cell(value.text, value.sort, value.title or text, markup)
    return Cell(text, title=text, html=markup)


def _cell(value) -> str:
    if value is None or (not isinstance(value, str) and missing(value)):
        return ""
    return str(value)


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


def _short(name: str, width: int = 30) -> str:
    """A system name that fits an axis: the organisation dropped when the name is long, then
    cut with an ellipsis."""
    name = str(name)
    if len(name) > width and "/" in name:
        name = name.split("/", 1)[1]
    return name if len(name) <= width else name[: width - 1] + "…"


def _pct(value, digits: int = 2) -> str:
    """A rate as a percentage with ``%``: ``0.1234`` -> ``12.34 %`` (``n/a`` when missing)."""
    return "n/a" if missing(value) else f"{percent(value, digits)} %"


def _pct_cell(value, title: str | None = None, digits: int = 2) -> Cell:
    """A rate as a percentage cell that sorts as its number; ``—`` when missing."""
    if missing(value):
        return Cell("—", sort=float("nan"), title=title)
    return Cell(percent(value, digits), sort=float(value), title=title)


def _links(names: Sequence[str]) -> str:
    return ", ".join(f'<a href="{html.escape(n)}">{html.escape(n)}</a>' for n in names)


def _has_truth(board: pd.DataFrame) -> bool:
    return "true_wer" in board and board["true_wer"].notna().any()


def _has_timings(board: pd.DataFrame) -> bool:
    return "rtfx" in board and np.isfinite(board["rtfx"].to_numpy(dtype=float)).any()


def _common_ground(board: pd.DataFrame) -> bool:
    """Whether some system lacks a dataset (its macro over every dataset is partly filled)."""
    return "filled_cells" in board and bool((board["filled_cells"] > 0).any())


def _ranking_column(board: pd.DataFrame, kind: str = "est") -> str:
    """The macro WER the ranking follows: over every dataset (filled) where it exists."""
    column = f"{kind}_wer_all"
    return column if column in board else f"{kind}_wer"


def _interval(board: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The 95 % interval of each system's own macro estimate (the model's error included;
    the sampling CI on a board without it)."""
    low = board["interval_low"] if "interval_low" in board else board["est_ci_low"]
    high = board["interval_high"] if "interval_high" in board else board["est_ci_high"]
    return low.to_numpy(dtype=float), high.to_numpy(dtype=float)


# --------------------------------------------------------------------------- charts


def plot_estimate_vs_truth(board: pd.DataFrame) -> str:
    """Each system's estimated macro WER with its 95 % interval (error bars) against its
    true macro WER (both over the system's own datasets), and the line y = x; hover names
    the system. Without truth: the estimates with their intervals, best first."""
    import plotly.graph_objects as go

    est = 100 * board["est_wer"].to_numpy(dtype=float)
    low, high = (100 * v for v in _interval(board))
    names = board["system"].astype(str).to_numpy()
    has_interval = np.isfinite(low) & np.isfinite(high)
    interval_text = [
        f"[{lo:.2f}, {hi:.2f}] %" if ok else "none"
        for lo, hi, ok in zip(low, high, has_interval, strict=True)
    ]
    plus = np.where(has_interval, high - est, 0.0)
    minus = np.where(has_interval, est - low, 0.0)
    fig = go.Figure()
    if not _has_truth(board):
        y = [_short(n) for n in names]
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


def plot_wer_vs_rtfx(board: pd.DataFrame) -> str:
    """The speed/accuracy view: the ranking's macro WER against RTFx (log axis), the Pareto
    front drawn and its systems named; "" without timings."""
    import plotly.graph_objects as go

    if not _has_timings(board):
        return ""
    timed = board[np.isfinite(board["rtfx"].to_numpy(dtype=float))].reset_index(drop=True)
    rtfx = timed["rtfx"].to_numpy(dtype=float)
    column = _ranking_column(timed)
    wer = 100 * timed[column].to_numpy(dtype=float)
    names = timed["system"].astype(str).to_numpy()
    front = pareto_front(rtfx, wer)
    true_column = _ranking_column(timed, "true")
    true = (
        100 * timed[true_column].to_numpy(dtype=float)
        if _has_truth(timed)
        else np.full(len(timed), np.nan)
    )
    custom = np.column_stack(
        [
            names,
            [_pct(v) for v in timed["est_wer"]],
            [_pct(v) for v in true / 100],
            timed["datasets"].astype(str).to_numpy(),
            ["yes" if f else "no" for f in front],
        ]
    )
    hover = (
        "<b>%{customdata[0]}</b><br>RTFx %{x:.1f}<br>est. WER %{y:.2f} %"
        + (" (all datasets)<br>own datasets: %{customdata[1]}" if column.endswith("_all") else "")
        + ("<br>true WER %{customdata[2]}" if _has_truth(timed) else "")
        + "<br>datasets: %{customdata[3]}<br>Pareto front: %{customdata[4]}<extra></extra>"
    )
    fig = go.Figure()
    order = np.argsort(rtfx[front])
    fig.add_trace(
        go.Scatter(
            x=rtfx[front][order],
            y=wer[front][order],
            mode="lines",
            line={"color": FRONT_COLOUR, "width": 2, "shape": "vh"},
            name="Pareto front (estimated)",
            hoverinfo="skip",
        )
    )
    if _has_truth(timed):
        fig.add_trace(
            go.Scatter(
                x=rtfx,
                y=true,
                mode="markers",
                marker={"symbol": "diamond-open", "color": TRUE_COLOUR, "size": 8},
                name="true WER",
                customdata=custom,
                hovertemplate="<b>%{customdata[0]}</b><br>RTFx %{x:.1f}<br>true WER %{y:.2f} %"
                "<extra></extra>",
            )
        )
    for mask, colour, size, label in (
        (~front, EST_COLOUR, 9, "estimated WER"),
        (front, FRONT_COLOUR, 12, "estimated WER, on the Pareto front"),
    ):
        if not mask.any():
            continue
        fig.add_trace(
            go.Scatter(
                x=rtfx[mask],
                y=wer[mask],
                mode="markers",
                marker={"color": colour, "size": size, "line": {"color": "#ffffff", "width": 1}},
                name=label,
                customdata=custom[mask],
                hovertemplate=hover,
            )
        )
    for x, y, name in zip(rtfx[front], wer[front], names[front], strict=True):
        fig.add_annotation(
            x=np.log10(x),
            y=y,
            text=html.escape(_short(name, 24)),
            showarrow=False,
            xanchor="left",
            yanchor="bottom",
            xshift=6,
            yshift=2,
            font={"size": 11, "color": FRONT_COLOUR},
        )
    ticks, labels = _log_ticks(float(rtfx.min()), float(rtfx.max()))
    fig.update_xaxes(
        type="log",
        title="RTFx (audio seconds per processing second, log scale; right = faster)",
        tickvals=ticks,
        ticktext=labels,
        gridcolor=GRID,
    )
    fig.update_yaxes(
        title="macro WER %" + (" (all datasets)" if column.endswith("_all") else ""),
        rangemode="tozero",
        gridcolor=GRID,
    )
    fig.update_layout(
        margin={"l": 60, "r": 30, "t": 40, "b": 50},
        legend={"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"},
    )
    return chart(
        fig,
        "plot-wer-vs-rtfx",
        520,
        "Speed against accuracy: each dot is a system, its estimated macro WER (the ranking's) "
        "against its RTFx. Green: the Pareto front, the systems no other system beats on both "
        "(faster and at least as accurate); the best trade-offs lie on it. "
        + ("Diamonds: the true WER. " if _has_truth(timed) else "")
        + "Hover a dot for the system.",
    )


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
    import plotly.graph_objects as go

    if "groups" not in fairness or fairness["groups"].empty:
        return ""
    effects = group_effects(fairness)
    if effects.empty:
        return ""
    parts = []
    for index, category in enumerate(dict.fromkeys(effects["category"])):
        rows = effects[effects["category"] == category]
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
            fig.add_trace(
                go.Scatter(
                    x=mine["median"],
                    y=position,
                    mode="markers",
                    marker={
                        "color": colour,
                        "size": 9,
                        "symbol": "diamond" if source == "true" else "circle",
                    },
                    error_x={
                        "type": "data",
                        "array": mine["q75"] - mine["median"],
                        "arrayminus": mine["median"] - mine["q25"],
                        "color": colour,
                        "thickness": 1.5,
                        "width": 3,
                    },
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
            )
        fig.add_vline(x=0, line={"color": "#888888", "width": 1, "dash": "dash"})
        fig.update_yaxes(
            tickvals=list(range(len(shown))),
            ticktext=[html.escape(_short(g, 26)) for g in shown],
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
        more = len(sizes) - len(shown)
        parts.append(
            chart(
                fig,
                f"plot-fairness-{index}",
                140 + 30 * len(shown),
                f"{category}: each group's predicted WER relative to its system's WER on the "
                "same dataset (+20 % = a fifth more errors than the system's average), the "
                "median over every audited (dataset, system) with the middle half of them as "
                "the bar; left of the dashed line = fewer errors than average."
                + (
                    f" The {len(shown)} largest of {len(sizes)} groups; all are in "
                    "fairness_groups.csv."
                    if more
                    else ""
                ),
            )
        )
    return "".join(parts)


# --------------------------------------------------------------------------- tabs


def _dataset_labels(datasets: Sequence[str]) -> dict[str, str]:
    """Column headers for datasets: a prefix every dataset shares (``mubench-``) dropped."""
    names = [str(d) for d in datasets]
    prefix = ""
    if len(names) > 1:
        common = names[0]
        for name in names[1:]:
            while not name.startswith(common):
                common = common[:-1]
        prefix = common[: common.rfind("-") + 1] if "-" in common else ""
    return {n: (n[len(prefix) :] or n) for n in names}


def ranking_view(result: Leaderboard) -> tuple[pd.DataFrame, dict[str, str], dict[str, str]]:
    """The ranking table as the page shows it: (cells, header titles, header classes).

    One row per system in ranking order: its rank, name, coverage (datasets run on, of all),
    the macro WER the ranking follows with the 95 % interval, the truth where references
    exist, RTFx and FAAS where measured, then one WER column per dataset, in percent."""
    board = result.board
    datasets = sorted(result.datasets["dataset"].astype(str).unique())
    labels = _dataset_labels(datasets)
    cells = result.datasets.assign(dataset=result.datasets["dataset"].astype(str)).set_index(
        ["system", "dataset"]
    )
    ground = _common_ground(board)
    low, high = _interval(board)
    view: dict[str, list] = {}
    titles: dict[str, str] = {}
    view["rank"] = [Cell(str(r), sort=float(r)) for r in board["rank"]]
    view["system"] = [Cell(str(s), title=str(s)) for s in board["system"]]
    covered = []
    for system, count in zip(board["system"], board["datasets"], strict=True):
        have = [d for d in datasets if (system, d) in cells.index]
        lacking = [d for d in datasets if d not in have]
        title = f"run on {', '.join(have)}" + (
            f"; not run on {', '.join(lacking)} (filled for the ranking)" if lacking else ""
        )
        covered.append(Cell(f"{count}/{len(datasets)}", sort=float(count), title=title))
    view["datasets"] = covered
    titles["datasets"] = "How many of the datasets each system was run on"
    if ground:
        view["est. WER % (all datasets)"] = [_pct_cell(v) for v in board["est_wer_all"]]
        titles["est. WER % (all datasets)"] = (
            "The ranking's number: the macro WER over every dataset, the cells of datasets "
            "a system was not run on filled by the dataset × system fit"
        )
        view["est. WER % (own datasets)"] = [_pct_cell(v) for v in board["est_wer"]]
        titles["est. WER % (own datasets)"] = "The macro WER over the datasets the system has"
    else:
        view["est. WER %"] = [_pct_cell(v) for v in board["est_wer"]]
        titles["est. WER %"] = "Estimated macro WER: the mean over the datasets"
    view["95% interval"] = [
        Cell(percent_interval(lo, hi), sort=float(lo)) if np.isfinite(lo) else Cell("—")
        for lo, hi in zip(low, high, strict=True)
    ]
    titles["95% interval"] = (
        "The 95 % interval of the estimate over the system's own datasets, the model's own "
        "error included (see Metrics)"
    )
    if "method" in board:
        view["method"] = list(board["method"].astype(str))
        view["labels"] = [Cell(str(int(v)), sort=float(v)) for v in board["n_labelled"]]
        titles["labels"] = "Transcribed utterances the prediction-powered estimate rests on"
    if _has_truth(board):
        column = "true WER % (all datasets)" if ground else "true WER %"
        view[column] = [_pct_cell(v) for v in board[_ranking_column(board, "true")]]
        titles[column] = "The true macro WER from the references, averaged like the estimate"
        view["true rank"] = [
            Cell(str(r), sort=float(r)) if not missing(r) else Cell("—") for r in board["true_rank"]
        ]
    if _has_timings(board):
        view["RTFx"] = [
            Cell(number(v, 1), sort=float(v)) if not missing(v) else Cell("—")
            for v in board["rtfx"]
        ]
        titles["RTFx"] = "Inverse real-time factor: audio seconds per processing second"
    for column, label in (("est_faas", "FAAS est"), ("true_faas", "FAAS true")):
        if column in board and board[column].notna().any():
            view[label] = [
                Cell(number(v, 1), sort=float(v)) if not missing(v) else Cell("—")
                for v in board[column]
            ]
            titles[label] = (
                "Fairness-adjusted ASR score (see Metrics); higher = fairer and more accurate"
            )
    classes = {}
    for dataset in datasets:
        header = labels[dataset]
        column = []
        for system in board["system"]:
            if (system, dataset) not in cells.index:
                column.append(
                    Cell("—", sort=float("nan"), title=f"{system} was not run on {dataset}")
                )
                continue
            row = cells.loc[(system, dataset)]
            title = f"{system} on {dataset}: {plural(int(row['n']), 'utterance')}"
            if "true_wer" in row and not missing(row["true_wer"]):
                title += f", true WER {_pct(row['true_wer'])}"
            column.append(_pct_cell(row["est_wer"], title=title))
        view[header] = column
        titles[header] = f"{dataset}: estimated WER %"
        classes[header] = "ds"
    return pd.DataFrame(view), titles, classes


def details_view(board: pd.DataFrame) -> pd.DataFrame:
    """Per system, every macro the board holds: own datasets and (common ground) all."""
    ground = _common_ground(board)
    low, high = _interval(board)
    view = {
        "rank": board["rank"].astype(str),
        "system": board["system"].astype(str),
        "datasets": board["datasets"].astype(str),
        "utterances": board["utterances"].astype(str),
        "est. WER % own datasets": board["est_wer"].map(percent),
        "95% interval": [
            percent_interval(lo, hi) if np.isfinite(lo) else ""
            for lo, hi in zip(low, high, strict=True)
        ],
        "sampling CI": [
            percent_interval(lo, hi) if pd.notna(lo) else ""
            for lo, hi in zip(board["est_ci_low"], board["est_ci_high"], strict=True)
        ],
    }
    if ground:
        view["filled cells"] = board["filled_cells"].astype(str)
        view["est. WER % all datasets"] = board["est_wer_all"].map(percent)
    if _has_truth(board):
        view["true WER % own datasets"] = board["true_wer"].map(percent)
        view["true 95% CI"] = [
            percent_interval(lo, hi)
            for lo, hi in zip(board["true_ci_low"], board["true_ci_high"], strict=True)
        ]
        if ground and "true_wer_all" in board:
            view["true WER % all datasets"] = board["true_wer_all"].map(percent)
    return pd.DataFrame(view)


def _ranking_tab(result: Leaderboard) -> str:
    from werest.report.leaderboard_report import agreement_line

    board = result.board
    labelled = "method" in board
    ground = _common_ground(board)
    view, titles, classes = ranking_view(result)
    intro = (
        "Systems ranked by their estimated macro-average WER (each dataset weighs the same), "
        + (
            "prediction-powered where a system's datasets have labels (the labels column says "
            "how many transcribed utterances each number rests on; zero_label rows use none)"
            if labelled
            else "estimated without references"
        )
        + ". "
        + (
            "Not every system was run on every dataset (the datasets column): the ranking "
            "follows each system's macro over <b>all</b> datasets, the missing cells filled by "
            "a dataset × system fit (—: not run); the own-datasets column is its macro over "
            "the datasets it has. "
            if ground
            else ""
        )
        + "The dataset columns give each dataset's WER %. Click a column header to sort; hover "
        "a cell for more."
    )
    parts = [
        f'<p class="note">{intro}</p>',
        html_table(view, "ranking", header_titles=titles, header_class=classes),
    ]
    if result.agreement:
        parts.append(f'<p class="note">{html.escape(agreement_line(result.agreement))}</p>')
    parts += [
        f'<p class="note warning">warning: {html.escape(w["dataset"])}: '
        f"{html.escape(w['message'])}</p>"
        for w in result.warnings
    ]
    parts.append("<h3>Estimate against truth</h3>" if _has_truth(board) else "<h3>Estimates</h3>")
    parts.append(plot_estimate_vs_truth(board))
    if _has_timings(board):
        parts += ["<h3>Speed and accuracy</h3>", plot_wer_vs_rtfx(board)]
    parts += [
        "<h3>Per system, in detail</h3>",
        '<p class="note">The macro WER over the system\'s own datasets with its 95 % '
        "interval and its sampling CI (sampling noise only, too narrow to hold the true WER)"
        + ("; the filled cells and the macro over all datasets" if ground else "")
        + ("; the truth likewise" if _has_truth(board) else "")
        + ". Full data: "
        + _links(["leaderboard.csv", "datasets.csv"])
        + ".</p>",
        html_table(details_view(board), "details"),
    ]
    return "".join(parts)


def _datasets_tab(result: Leaderboard) -> str:
    from werest.report.leaderboard_report import dataset_view

    parts = [
        '<p class="note">Per dataset, the systems run on it, best estimate first (WER in %).</p>'
    ]
    for dataset, rows in result.datasets.groupby("dataset", sort=True):
        rows = rows.sort_values(["est_wer", "system"]).reset_index(drop=True)
        view = dataset_view(rows).drop(columns="dataset")
        view.insert(0, "est. rank", np.arange(1, len(view) + 1))
        if "true_wer" in rows:
            view["true rank"] = rows["true_wer"].rank(method="min").astype("Int64").astype(str)
        parts.append(f"<h3>{html.escape(str(dataset))}</h3>{html_table(view)}")
    return "".join(parts)


def _pairs_tab(result: Leaderboard) -> str:
    from werest.report.leaderboard_report import pairs_view

    return (
        '<p class="note">Each pair of neighbours A (above) and B in the estimated ranking: '
        + (
            "the prediction-powered A − B on the same labelled utterances, with its paired 95 % "
            "interval; the verdict names a better system only where the interval excludes 0."
            if "verdict" in result.pairs
            else "the estimated A − B in WER points with its 95 % interval, calibrated leave one "
            "domain out on the differences of systems of one dataset; the verdict names a better "
            "system only where the interval excludes 0."
        )
        + " Full data: "
        + _links(["pairs.csv"])
        + ".</p>"
        + html_table(pairs_view(result.pairs), "pairs")
    )


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
                row[f"{name} WER %"] = _pct_cell(mine[f"{label}_wer"].mean())
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


def _fairness_tab(result: Leaderboard, alpha: float) -> str:
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
        + f" ({len(summary)} audits). Full data: {_links(files)}.</p>",
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


def _lid_tab(result: Leaderboard) -> str:
    from werest.text.lid import confusion_matrix

    lid = result.lid
    accuracy = lid.accuracy.assign(accuracy=lid.accuracy["accuracy"].map(percent))
    parts = [
        '<p class="note">Full data: '
        + _links(
            ["lid_accuracy.csv", "lid_confusion.csv", "lid_thresholds.csv", "lid_confidence.csv"]
        )
        + ".</p>",
        "<h3>Accuracy per language (%)</h3>",
        html_table(accuracy, "lid-accuracy"),
    ]
    if not lid.confidence.empty:
        confidence = lid.confidence.copy()
        for column in ("mean_confidence_right", "mean_confidence_wrong"):
            confidence[column] = confidence[column].map(lambda v: number(v, 3))
        thresholds = lid.thresholds.assign(
            coverage=lid.thresholds["coverage"].map(percent),
            accuracy=lid.thresholds["accuracy"].map(percent),
        )
        parts += [
            "<h3>Confidence of right and wrong predictions</h3>",
            html_table(confidence),
            "<h3>Accuracy above a confidence threshold (%), and the share kept</h3>",
            html_table(thresholds),
        ]
    for system in sorted(lid.confusion["system"].unique()):
        matrix = confusion_matrix(lid.confusion, system).reset_index()
        matrix.columns = ["true \\ detected", *map(str, matrix.columns[1:])]
        parts.append(f"<h3>Confusion: {html.escape(str(system))}</h3>")
        parts.append(html_table(matrix, sortable=False))
    return "".join(parts)


def latency_view(result: Leaderboard) -> pd.DataFrame:
    """Per system with timings, in ranking order: RTFx, latency (s), real-time share and
    throughput, beside the mean utterance WER/CER (%)."""
    board = result.board
    stats = (
        result.descriptive.set_index(["system", "measure"])
        if not result.descriptive.empty
        else None
    )

    def stat(system, measure, field):
        if stats is None or (system, measure) not in stats.index or field not in stats:
            return float("nan")
        return stats.loc[(system, measure), field]

    rows = []
    for _, b in board.iterrows():
        if missing(b.get("rtfx")):
            continue
        system = b["system"]
        row = {
            "rank": Cell(str(b["rank"]), sort=float(b["rank"])),
            "system": Cell(str(system), title=str(system)),
            "timed utts": Cell(
                number(stat(system, "latency_s", "n"), 0),
                sort=float(stat(system, "latency_s", "n")),
            ),
            "RTFx": Cell(number(b["rtfx"], 1), sort=float(b["rtfx"])),
            "latency mean s": Cell(number(b["latency_mean"], 3), sort=float(b["latency_mean"])),
            "latency p50 s": Cell(number(b["latency_p50"], 3), sort=float(b["latency_p50"])),
            "latency p95 s": Cell(number(b["latency_p95"], 3), sort=float(b["latency_p95"])),
            "RTF≤1 %": _pct_cell(b["rtf_le_1"], digits=1),
            "utt/s": Cell(number(b["throughput"], 2), sort=float(b["throughput"])),
            "mean utt. est. WER %": _pct_cell(stat(system, "est_wer", "mean")),
        }
        if _has_truth(board):
            row["mean utt. true WER %"] = _pct_cell(stat(system, "true_wer", "mean"))
            row["mean utt. true CER %"] = _pct_cell(stat(system, "true_cer", "mean"))
        rows.append(row)
    return pd.DataFrame(rows)


def _latency_tab(result: Leaderboard) -> str:
    return (
        '<p class="note">Per system, all its datasets pooled: speed (RTFx, per-utterance '
        "processing or round-trip seconds, the share of utterances processed at least as "
        "fast as real time, utterances per second) and the mean utterance WER/CER in %. "
        "The utterance statistics (sd, range, CI) are in "
        + _links(["descriptive.csv"])
        + ".</p>"
        + html_table(latency_view(result), "latency")
    )


METRICS = [
    (
        "est. WER %",
        "Label-free corpus WER per dataset, Σ(pred·n̂)/Σn̂ over the system's "
        "utterances (pred = the model's predicted utterance WER, n̂ = estimated reference length), "
        "then the macro average over the datasets the system has (each dataset weighs the same).",
    ),
    (
        "datasets, est. WER % (all datasets)",
        "datasets: how many of the table's datasets a system was run on. When some system "
        "lacks a dataset, the ranking follows each system's macro over every dataset "
        "(common ground): a cell it lacks is filled by a least-squares fit of "
        "log(WER + 0.5 points) = dataset effect + system effect on the cells that exist; "
        "'filled cells' counts them. Systems linked to no other through shared datasets keep "
        "their own macro. The own-datasets column is the plain macro over the datasets it has.",
    ),
    (
        "dataset columns",
        "One column per dataset (the Open ASR Leaderboard's layout): the system's estimated "
        "corpus WER % on it; — where it was not run on it. Hover a cell for its utterances and "
        "true WER.",
    ),
    (
        "95% interval",
        "The interval to read: per dataset, the conformal interval calibrated on the model's "
        "own errors on domains it never saw (as werest estimate gives it), and per system the "
        "mean of its datasets' bounds, never narrower than the sampling CI. With labels "
        "(labels=), the prediction-powered interval instead. It is about the macro over the "
        "system's own datasets.",
    ),
    (
        "sampling CI",
        "Percentile bootstrap of the macro average: each dataset's utterances resampled "
        "on their own, {n_resamples} resamples, confidence {confidence}. Sampling noise only: "
        "it does not include the model's error, so it is too narrow to hold the true WER.",
    ),
    (
        "true WER %",
        "Σ word errors / Σ reference words per dataset (Levenshtein alignment after "
        "the normaliser), macro-averaged like the estimate (over all datasets, filled the same "
        "way, on common ground); utterances with an empty reference are left out. Only where "
        "the input has references.",
    ),
    ("true 95% CI", "The same bootstrap on true errors."),
    ("rank / true rank", "Position by estimated / by true macro WER (ties share the best rank)."),
    (
        "Spearman ρ, Kendall τ",
        "Rank correlation between estimated and true macro WER over the systems.",
    ),
    (
        "RTFx",
        "Inverse real-time factor: Σ audio seconds / Σ processing seconds over the "
        "utterances with both (the Open ASR Leaderboard's definition). Processing seconds are "
        "processing_seconds from werest transcribe, or the round-trip latency_ms / 1000 of "
        "imported results (mu-bench).",
    ),
    (
        "Pareto front",
        "The systems no other system beats on both speed and accuracy: none is at least as "
        "fast (RTFx) and at least as accurate (estimated macro WER), and better on one.",
    ),
    (
        "latency p50 / p95 / mean s",
        "Median, 95th percentile and mean of the per-utterance processing (or round-trip) seconds.",
    ),
    (
        "RTF≤1 %",
        "Share of timed utterances processed at least as fast as real time: "
        "seconds / duration ≤ 1.",
    ),
    ("utt/s", "Throughput: timed utterances / Σ processing seconds (sequential processing)."),
    (
        "mean utt. WER / CER %",
        "The mean of the per-utterance WER (estimated: the model's prediction; true: from the "
        "reference) or CER, all the system's datasets pooled; unlike the corpus WER each "
        "utterance weighs the same.",
    ),
    (
        "overall fairness score",
        "0–100. Per category (gender, age, accent): raw_g = 100·(1 − (WER_g − min)/(max − min)) "
        "over the model-predicted group WERs (100 for every group when they are equal), the "
        "category score Σ_g p_g·raw_g (p_g = the group's share), multiplied by p/α when the "
        "test of the group effect gives p < α = {alpha}; then the weighted mean over the "
        "categories. A clearly significant disparity (tiny p) drives it towards 0.",
    ),
    (
        "FAAS est / true",
        "Fairness-adjusted ASR score, 10·log10(overall fairness score / WER), the WER as a "
        "fraction (the system's corpus WER over the audited utterances), averaged over the "
        "system's audited datasets; est uses estimated error counts pred·n̂ and lengths n̂, "
        "true uses the references. Higher = fairer and more accurate; +10 = ten times the "
        "ratio. It is not bounded: a fair system (score 100) at 20 % WER has 10·log10(500) ≈ "
        "27, and it falls below 0 whenever the overall score is below the WER fraction, e.g. "
        "score 0.001 at 20 % WER gives 10·log10(0.005) ≈ −23 (a significant disparity whose "
        "penalty p/α took the score near 0). It is +∞ at WER 0 and −∞ at score 0.",
    ),
    (
        "group WER",
        "Poisson model of each utterance's error count, log link, offset log(words), "
        "the group as fixed effect: the group's rate standardised over the audited utterances. "
        "fairness.model=glm: a Poisson GLM, the group effect tested by a cluster-robust "
        "(speaker) Wald test, or a dispersion-scaled LRT without speakers; fairness.model=glmm "
        "(the published model): a Poisson GLMM with a random intercept per speaker, fitted by "
        "maximum likelihood (adaptive Gauss-Hermite quadrature), tested by the "
        "likelihood-ratio test. The Fairness tab names the test each audit used.",
    ),
    (
        "group effect (fairness chart)",
        "100·(group WER / the system's WER − 1) in each audited (dataset, system): +20 % = a "
        "fifth more errors than that system's average there. The chart shows its median over "
        "the audits and, as the bar, the middle half of them (25th–75th percentile): how "
        "consistently systems treat the group, not a confidence interval.",
    ),
    (
        "paired test p",
        "Share of {n_resamples} paired bootstrap resamples (same utterances for "
        "A and B) in which A's WER is not lower than B's: the one-sided p-value of 'A is better'.",
    ),
    ("Δ pts", "A − B in WER points on the utterances both transcribed."),
    (
        "Cohen's d",
        "A − B: the difference of utterance WER means over the pooled SD, with the sign of Δ "
        "(negative = A lower).",
    ),
    (
        "LID accuracy",
        "Share of utterances whose detected language equals the true language (codes "
        "normalised: lower case, primary subtag, Whisper tokens and English names mapped to "
        "ISO 639-1), per true language and overall; the confusion matrix counts utterances by "
        "(true, detected). Selective accuracy at threshold t: accuracy among utterances whose "
        "detection confidence is ≥ t; coverage: the share of them.",
    ),
]


def _metrics_tab(context: Mapping[str, object]) -> str:
    values = {"n_resamples": "1000", "confidence": "0.95", "alpha": "0.05"}
    values |= {k: str(v) for k, v in context.items()}
    items = "".join(
        f"<dt>{html.escape(name)}</dt><dd>{html.escape(text.format(**values))}</dd>"
        for name, text in METRICS
    )
    return f"<dl>{items}</dl>"


# --------------------------------------------------------------------------- the page


def _lid_missing(result: Leaderboard) -> str:
    """Why there is no Language ID tab, naming exactly what the table lacks."""
    from werest.text.lid import DETECTED, TRUE

    columns = set(result.utterances.columns) if result.utterances is not None else set()
    lacking = [c for c in (TRUE, DETECTED) if c not in columns]
    if not lacking:
        return f"no row has both <code>{TRUE}</code> and <code>{DETECTED}</code> values"
    have = [c for c in (TRUE, DETECTED) if c in columns]
    return (
        (f"the table has <code>{have[0]}</code> but no " if have else "the table has no ")
        + " and no ".join(f"<code>{c}</code>" for c in lacking)
        + " column"
    )


def tabs(result: Leaderboard) -> tuple[list[tuple[str, str]], list[str]]:
    """(the tabs with something to show, why each other tab is not shown)."""
    shown, hidden = [], []
    fairness = "summary" in result.fairness and not result.fairness["summary"].empty
    reasons = {
        "tab-pairs": None if not result.pairs.empty else "fewer than two systems to pair",
        "tab-fairness": None
        if fairness
        else "no demographic column (gender, age, accent) with groups to audit",
        "tab-latency": None
        if _has_timings(result.board)
        else "no timings (duration with processing_seconds or latency_ms)",
        "tab-lid": None if result.lid is not None else _lid_missing(result),
    }
    for tab, label in TABS:
        reason = reasons.get(tab)
        if reason is None:
            shown.append((tab, label))
        else:
            hidden.append(f"{html.escape(label)}: {reason}")
    return shown, hidden


def subtitle(result: Leaderboard) -> str:
    """What the page's numbers are, as the data says: estimated without references; beside
    the true WER where references exist; prediction-powered with labels."""
    n_systems = result.board["system"].nunique()
    n_datasets = result.datasets["dataset"].nunique()
    text = f"{plural(n_systems, 'system')}, {plural(n_datasets, 'dataset')}; "
    board = result.board
    if "method" in board and (board["method"] != "zero_label").any():
        labels = int(board["n_labelled"].max())
        text += (
            "WER estimated by werest, prediction-powered: the label-free predictions corrected "
            f"with up to {labels:,} transcribed utterances per system (where a system has "
            "enough labels)"
        )
    else:
        text += "WER estimated without references by werest"
    if _has_truth(board):
        text += ", beside the true WER from the references"
    return text + "."


def _contenders(result: Leaderboard) -> str:
    """The page's lead: which systems may be the best, per dataset."""
    from werest.report.leaderboard_report import CONTENDERS_HEAD, contender_lines

    items = "".join(f"<li>{html.escape(line)}</li>" for line in contender_lines(result.datasets))
    return f'<div class="contenders"><p>{html.escape(CONTENDERS_HEAD)}</p><ul>{items}</ul></div>'


def render(result: Leaderboard, context: Mapping[str, object] | None = None) -> str:
    """The whole page as one HTML string (the same ``result`` gives the same string)."""
    context = dict(context or {})
    alpha = float(context.get("alpha", 0.05))
    shown, hidden = tabs(result)
    builders = {
        "tab-ranking": lambda: _ranking_tab(result),
        "tab-datasets": lambda: _datasets_tab(result),
        "tab-pairs": lambda: _pairs_tab(result),
        "tab-fairness": lambda: _fairness_tab(result, alpha),
        "tab-latency": lambda: _latency_tab(result),
        "tab-lid": lambda: _lid_tab(result),
        "tab-metrics": lambda: _metrics_tab(context),
    }
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
        f"{_contenders(result)}</header>"
        f"<nav>{nav}</nav>"
        '<noscript><p class="note" style="padding:0 24px">JavaScript is off: every tab is '
        "shown below one after the other; the charts need JavaScript, every number is also in "
        "the tables.</p></noscript>"
        f"{sections}{footer}<script>{SCRIPT}</script></body></html>\n"
    )


def write_page(result: Leaderboard, path: Path, context: Mapping[str, object] | None = None):
    """Write ``leaderboard.html`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(render(result, context), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- headless check

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
)


def chromium(page: Path, *arguments: str, tab: str | None = None, timeout: float = 120.0) -> str:
    """Run Debian's headless ``chromium`` on ``page`` (a throw-away profile); its stdout.

    Used to check the page in a real browser: ``--screenshot=PNG`` or ``--dump-dom`` (the DOM
    after the page's scripts ran). ``tab`` (``tab-fairness``...) opens that tab
    (``page.html#tab-fairness``).
    """
    import shutil
    import subprocess
    import tempfile

    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        raise FileNotFoundError("chromium is not installed (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="werest-chromium-") as profile:
        done = subprocess.run(
            [
                binary,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                *arguments,
                Path(page).resolve().as_uri() + (f"#{tab}" if tab else ""),
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(f"chromium failed ({done.returncode}): {done.stderr[-500:]}")
    return done.stdout


#: appended to a page by :func:`measure_tabs`: shows each tab in turn and writes the sizes
MEASURE_SCRIPT = """<script>
window.addEventListener('load', function () {
  setTimeout(function () {
    var tabs = {};
    var sections = document.querySelectorAll('section.tab');
    sections.forEach(function (s) {
      sections.forEach(function (t) { t.style.display = (t === s) ? 'block' : 'none'; });
      var boxes = 0;
      s.querySelectorAll('.box').forEach(function (b) {
        if (b.scrollWidth > b.clientWidth + 1) boxes += 1; });
      tabs[s.id] = {width: document.documentElement.scrollWidth,
                    height: document.documentElement.scrollHeight, scrolling_tables: boxes};
    });
    var out = document.createElement('pre');
    out.id = 'measure';
    out.textContent = JSON.stringify({viewport: window.innerWidth, tabs: tabs});
    document.body.appendChild(out);
  }, 100);
});
</script></body>"""


def measure_tabs(page: Path, width: int = 1280) -> dict:
    """How ``page`` lays out in headless chromium at ``width`` px: ``{"viewport": px, "tabs":
    {tab id: {"width", "height", "scrolling_tables"}}}``, each tab shown on its own (the
    document's scroll width and height, and how many tables scroll inside their own box)."""
    import json
    import re

    probe = Path(page).with_name(f".measure-{Path(page).name}")
    probe.write_text(Path(page).read_text(encoding="utf-8").replace("</body>", MEASURE_SCRIPT))
    try:
        dom = chromium(
            probe, "--dump-dom", f"--window-size={width},900", "--virtual-time-budget=5000"
        )
    finally:
        probe.unlink()
    found = re.search(r'<pre id="measure">(.*?)</pre>', dom)
    if found is None:
        raise RuntimeError(f"{page}: the measuring script did not run")
    return json.loads(html.unescape(found.group(1)))


def screenshot(
    page: Path, png: Path, width: int = 1400, height: int = 1800, tab: str | None = None
) -> Path:
    """A PNG screenshot of ``page`` (at ``tab``) as headless chromium renders it."""
    chromium(
        page,
        f"--screenshot={Path(png).resolve()}",
        f"--window-size={width},{height}",
        "--virtual-time-budget=5000",  # the charts drawn and the load handlers run
        tab=tab,
    )
    return png
