"""``leaderboard.html``: the leaderboard as one static, self-contained web page.

The page is what the reference leaderboards publish (the Open ASR Leaderboard's ranking with
RTFx and a metrics tab; the ASR fairness leaderboard's FAAS), written as a single file that
works offline: the CSS and the table-sorting/tab script are inline, the plots are inline SVG
(matplotlib), nothing is fetched from a CDN or a server. Tabs:

* **Ranking**: the sortable ranking table (estimated macro WER with its CI, true WER, CI and
  rank where references exist, RTFx, latency p50/p95, FAAS label-free and true), the rank
  agreement, and the plots estimate vs truth (with both intervals) and WER vs RTFx;
* **Datasets**: one sortable table per dataset;
* **Paired tests**: the neighbour tests of :func:`werest.leaderboard.neighbour_tests`;
* **Fairness**: FAAS per system and dataset, the true-vs-estimated comparison per category,
  and a plot of every group's predicted WER;
* **Latency**: per-utterance statistics and timings (``descriptive.csv``);
* **Metrics**: the definition of every number, as computed.

Without JavaScript every tab is shown one after the other (the script only hides tabs), so
the page is still complete when scripts are off.
"""

from __future__ import annotations

import html
import io
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from werest.formatting import number, percent
from werest.io import atomic_path

if TYPE_CHECKING:
    from werest.leaderboard import Leaderboard

TRUE_COLOUR = "#222222"
EST_COLOUR = "#3a7ebf"

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d1d1f;
background:#fafafa}
header{background:#1f3b57;color:#fff;padding:14px 24px}
header h1{margin:0 0 4px 0;font-size:22px}
header p{margin:0;font-size:13px;opacity:.85}
nav{display:flex;gap:4px;padding:8px 24px 0 24px;background:#e9eef3;flex-wrap:wrap}
nav button{border:0;padding:8px 14px;background:#d5dee7;cursor:pointer;font-size:14px;
border-radius:6px 6px 0 0}
nav button.active{background:#fafafa;font-weight:600}
section.tab{padding:12px 24px}
table{border-collapse:collapse;margin:8px 0 18px 0;font-size:13px;background:#fff}
th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:right;white-space:nowrap}
th{background:#eef2f6;position:sticky;top:0}
td:nth-child(2),th:nth-child(2){text-align:left}
table.sortable th{cursor:pointer}
table.sortable th.asc::after{content:" \\25B2"}
table.sortable th.desc::after{content:" \\25BC"}
tbody tr:nth-child(even){background:#f6f8fa}
figure{display:inline-block;margin:8px 16px 16px 0;vertical-align:top;background:#fff;
border:1px solid #d0d7de;padding:6px}
figure svg{max-width:100%;height:auto}
figcaption{font-size:12px;color:#555;max-width:560px}
dl dt{font-weight:600;margin-top:10px}
dl dd{margin-left:18px;max-width:900px}
.note{font-size:13px;color:#444;max-width:900px}
"""

SCRIPT = """
(function(){
  function key(cell){
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
    table.querySelectorAll('th').forEach(function(th,col){
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
      s.style.display=(s.id===id)?'block':'none';});
    buttons.forEach(function(b){b.classList.toggle('active',b.dataset.tab===id);});
  }
  buttons.forEach(function(b){b.addEventListener('click',function(){show(b.dataset.tab);});});
  var wanted=location.hash.slice(1);
  if(wanted&&document.getElementById(wanted))show(wanted);
  else if(buttons.length)show(buttons[0].dataset.tab);
})();
"""

TABS = [
    ("tab-ranking", "Ranking"),
    ("tab-datasets", "Datasets"),
    ("tab-pairs", "Paired tests"),
    ("tab-fairness", "Fairness"),
    ("tab-latency", "Latency"),
    ("tab-lid", "Language ID"),
    ("tab-metrics", "Metrics"),
]


# --------------------------------------------------------------------------- html pieces


def html_table(frame: pd.DataFrame, table_id: str | None = None, sortable: bool = True) -> str:
    """An HTML table of display strings (escaped); ``sortable`` tables sort on a header click."""
    attributes = f' id="{html.escape(table_id)}"' if table_id else ""
    css = ' class="sortable"' if sortable else ""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for row in frame.itertuples(index=False):
        cells = "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row)
        rows.append(f"<tr>{cells}</tr>")
    return (
        f"<table{attributes}{css}><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _cell(value) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    return str(value)


def figure(svg: str | None, caption: str) -> str:
    """An inline SVG figure with its caption; empty when there is nothing to plot."""
    if not svg:
        return ""
    return f"<figure>{svg}<figcaption>{html.escape(caption)}</figcaption></figure>"


def svg_of(fig) -> str:
    """A matplotlib figure as an inline ``<svg>`` element (text as text, no XML prologue;
    the same hash salt on every run, so a page is reproducible)."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "werest"}):
        fig.savefig(buffer, format="svg", bbox_inches="tight")
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def _figure(**kwargs):
    """A new :class:`~matplotlib.figure.Figure` (the object API: no pyplot, no backend switch)."""
    from matplotlib.figure import Figure

    return Figure(**kwargs)


# --------------------------------------------------------------------------- plots


def plot_estimate_vs_truth(board: pd.DataFrame) -> str | None:
    """Estimated macro WER with its 95 % interval against the true one with its CI (the
    estimate alone without truth)."""
    est = 100 * board["est_wer"].to_numpy(dtype=float)
    est_err = _errors(board, "est")
    if "true_wer" not in board or board["true_wer"].isna().all():
        fig = _figure(figsize=(6.5, 0.3 * len(board) + 1.5))
        ax = fig.subplots()
        y = np.arange(len(board))
        ax.errorbar(est, y, xerr=est_err, fmt="o", color=EST_COLOUR, capsize=3)
        ax.set_yticks(y, board["system"], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("estimated macro WER % (95 % interval)")
        return svg_of(fig)
    true = 100 * board["true_wer"].to_numpy(dtype=float)
    fig = _figure(figsize=(6.5, 6.0))
    ax = fig.subplots()
    ax.errorbar(
        true,
        est,
        xerr=_errors(board, "true"),
        yerr=est_err,
        fmt="o",
        color=EST_COLOUR,
        ecolor="#9bbbd9",
        capsize=2,
        markersize=4,
    )
    top = float(np.nanmax([np.nanmax(true), np.nanmax(est)])) * 1.08 + 1
    ax.plot([0, top], [0, top], "--", color="#888888", linewidth=1, label="estimate = truth")
    for name, x, y in zip(board["system"], true, est, strict=True):
        ax.annotate(_short(name), (x, y), fontsize=6, xytext=(3, 3), textcoords="offset points")
    ax.set_xlim(-0.02 * top, top)
    ax.set_ylim(-0.02 * top, top)
    ax.set_xlabel("true macro WER % (95 % CI)")
    ax.set_ylabel("estimated macro WER % (95 % interval)")
    ax.legend(loc="upper left", frameon=False)
    return svg_of(fig)


def plot_wer_vs_rtfx(board: pd.DataFrame) -> str | None:
    """Macro WER against RTFx (log scale): the speed/accuracy frontier. None without timings."""
    if "rtfx" not in board or not np.isfinite(board["rtfx"].to_numpy(dtype=float)).any():
        return None
    timed = board[np.isfinite(board["rtfx"].to_numpy(dtype=float))]
    rtfx = timed["rtfx"].to_numpy(dtype=float)
    fig = _figure(figsize=(6.5, 4.5))
    ax = fig.subplots()
    ax.errorbar(
        rtfx,
        100 * timed["est_wer"].to_numpy(dtype=float),
        yerr=_errors(timed, "est"),
        fmt="o",
        color=EST_COLOUR,
        capsize=2,
        markersize=4,
        label="estimated (95 % interval)",
    )
    if "true_wer" in timed:
        ax.plot(
            rtfx,
            100 * timed["true_wer"].to_numpy(dtype=float),
            "D",
            color=TRUE_COLOUR,
            markersize=4,
            label="true",
        )
    for name, x, y in zip(timed["system"], rtfx, 100 * timed["est_wer"], strict=True):
        ax.annotate(_short(name), (x, y), fontsize=6, xytext=(3, 3), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_xlabel("RTFx (audio s / processing s, log scale)")
    ax.set_ylabel("macro WER %")
    ax.legend(frameon=False)
    return svg_of(fig)


def plot_fairness(groups: pd.DataFrame) -> str | None:
    """Per category, every audited group's predicted WER: one point per (dataset, system),
    true and estimated side by side, the mean over systems as a bar."""
    if groups is None or groups.empty:
        return None
    categories = list(dict.fromkeys(groups["category"]))
    widths = [
        max(2.5, 0.6 * groups.loc[groups["category"] == c, "group"].nunique()) for c in categories
    ]
    fig = _figure(figsize=(min(sum(widths) + 1.5, 16), 4.2))
    axes = fig.subplots(1, len(categories), gridspec_kw={"width_ratios": widths}, squeeze=False)
    for ax, category in zip(axes[0], categories, strict=True):
        rows = groups[groups["category"] == category]
        names = list(rows.groupby("group")["n"].sum().sort_values(ascending=False).index)
        for offset, (source, colour) in (
            (-0.18, ("true", TRUE_COLOUR)),
            (0.18, ("est", EST_COLOUR)),
        ):
            mine = rows[rows["source"] == source]
            if mine.empty:
                continue
            x = np.array([names.index(g) for g in mine["group"]], dtype=float) + offset
            ax.plot(x, 100 * mine["predicted_wer"], ".", color=colour, alpha=0.5, markersize=4)
            means = mine.groupby("group")["predicted_wer"].mean()
            ax.bar(
                [names.index(g) + offset for g in means.index],
                100 * means.to_numpy(),
                width=0.34,
                color=colour,
                alpha=0.25,
                label="true" if source == "true" else "estimated",
            )
        ax.set_xticks(
            range(len(names)), [_short(n, 14) for n in names], rotation=45, ha="right", fontsize=7
        )
        ax.set_title(category, fontsize=10)
        ax.set_ylabel("predicted group WER %")
    axes[0][0].legend(frameon=False, fontsize=8)
    fig.tight_layout()
    return svg_of(fig)


def _errors(board: pd.DataFrame, kind: str) -> np.ndarray:
    """Error bars of ``kind`` (``est``: the 95 % interval with the model's error, where the
    board has it; ``true``: the truth's bootstrap CI)."""
    centre = 100 * board[f"{kind}_wer"].to_numpy(dtype=float)
    bounds = (
        ("interval_low", "interval_high")
        if kind == "est" and "interval_low" in board
        else (
            f"{kind}_ci_low",
            f"{kind}_ci_high",
        )
    )
    low = 100 * board[bounds[0]].to_numpy(dtype=float)
    high = 100 * board[bounds[1]].to_numpy(dtype=float)
    return np.nan_to_num(np.clip(np.vstack([centre - low, high - centre]), 0, None))


def _short(name: str, width: int = 28) -> str:
    name = str(name).split("/")[-1]
    return name if len(name) <= width else name[: width - 1] + "…"


# --------------------------------------------------------------------------- tabs


def _ranking_tab(result: Leaderboard) -> str:
    from werest.leaderboard_report import agreement_line, board_view

    labelled = "method" in result.board
    parts = [
        '<p class="note">Ranked by the estimated macro-average WER ('
        + (
            "prediction-powered where a system's datasets have labels: the labels column says "
            "how many transcribed utterances each number rests on; zero_label rows use none"
            if labelled
            else "label-free"
        )
        + "). Click a column header to sort by it.</p>",
        html_table(board_view(result.board), "ranking"),
        f'<p class="note">{html.escape(agreement_line(result.agreement))}</p>',
        *(
            f'<p class="note warning">warning: {html.escape(w["dataset"])}: '
            f"{html.escape(w['message'])}</p>"
            for w in result.warnings
        ),
        figure(
            plot_estimate_vs_truth(result.board),
            "Estimated macro WER with its 95 % interval (the model's error included) against "
            "the true macro WER with its bootstrap CI; dashed: y = x."
            if "true_wer" in result.board
            else "Estimated macro WER with its 95 % interval (the model's error included).",
        ),
        figure(
            plot_wer_vs_rtfx(result.board),
            "Macro WER against RTFx (higher = faster): estimate with CI, truth as diamonds.",
        ),
    ]
    return "".join(parts)


def _datasets_tab(result: Leaderboard) -> str:
    from werest.leaderboard_report import dataset_view

    parts = []
    for dataset, rows in result.datasets.groupby("dataset", sort=True):
        rows = rows.sort_values(["est_wer", "system"]).reset_index(drop=True)
        view = dataset_view(rows).drop(columns="dataset")
        view.insert(0, "est. rank", np.arange(1, len(view) + 1))
        if "true_wer" in rows:
            view["true rank"] = rows["true_wer"].rank(method="min").astype("Int64").astype(str)
        parts.append(f"<h3>{html.escape(str(dataset))}</h3>{html_table(view)}")
    return "".join(parts)


def _pairs_tab(result: Leaderboard) -> str:
    from werest.leaderboard_report import pairs_view

    return (
        '<p class="note">Each pair of neighbours A (above) and B in the estimated ranking: '
        + (
            "the prediction-powered A − B on the same labelled utterances, with its paired 95 % "
            "interval; the verdict names a better system only where the interval excludes 0."
            if "verdict" in result.pairs
            else "paired bootstrap on the utterances both transcribed (see Metrics)."
        )
        + "</p>"
        + html_table(pairs_view(result.pairs), "pairs")
    )


def _fairness_tab(result: Leaderboard) -> str:
    from werest.leaderboard_report import comparison_view, fairness_view

    if "summary" not in result.fairness:
        return '<p class="note">No demographic column: no fairness audit.</p>'
    parts = [html_table(fairness_view(result.fairness["summary"]), "fairness")]
    if "comparison" in result.fairness:
        parts += [
            "<h3>True vs estimated, per category</h3>",
            html_table(comparison_view(result.fairness["comparison"]), "comparison"),
        ]
    parts.append(
        figure(
            plot_fairness(result.fairness.get("groups")),
            "Predicted WER of every audited group, one dot per (dataset, system); "
            "bars: mean over them. Black = from true WER, blue = label-free.",
        )
    )
    categories = result.fairness.get("categories")
    if categories is not None:
        tests = categories[["source", "test"]].drop_duplicates()
        parts.append(
            '<p class="note">Tests used: '
            + html.escape("; ".join(f"{s}: {t}" for s, t in tests.itertuples(index=False)))
            + "</p>"
        )
    return "".join(parts)


def _lid_tab(result: Leaderboard) -> str:
    from werest.lid import confusion_matrix

    lid = result.lid
    if lid is None:
        return (
            '<p class="note">No language identification: the table has no '
            "<code>language</code> and <code>detected_language</code> columns.</p>"
        )
    accuracy = lid.accuracy.assign(accuracy=lid.accuracy["accuracy"].map(percent))
    parts = ["<h3>Accuracy per language (%)</h3>", html_table(accuracy, "lid-accuracy")]
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


def _latency_tab(result: Leaderboard) -> str:
    from werest.leaderboard_report import descriptive_view

    return (
        '<p class="note">Per system, all datasets pooled: utterance WER/CER statistics and '
        "per-utterance latency (seconds).</p>"
        + html_table(descriptive_view(result.descriptive), "descriptive")
    )


METRICS = [
    (
        "est. WER %",
        "Label-free corpus WER per dataset, Σ(pred·n̂)/Σn̂ over the system's "
        "utterances (pred = the model's predicted utterance WER, n̂ = estimated reference length), "
        "then the macro average over the datasets the system has (each dataset weighs the same).",
    ),
    (
        "95% interval",
        "The interval to read: per dataset, the conformal interval calibrated on the model's "
        "own errors on domains it never saw (as werest estimate gives it), and per system the "
        "mean of its datasets' bounds, never narrower than the sampling CI. With labels "
        "(labels=), the prediction-powered interval instead.",
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
        "the normaliser), macro-averaged like the estimate; utterances with an empty reference "
        "are left out. Only where the input has references.",
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
        "FAAS est / true",
        "Fairness-adjusted ASR score 10·log10(overall fairness score / WER as "
        "a fraction), averaged over the system's audited datasets; est uses estimated error "
        "counts pred·n̂ and lengths n̂, true uses the references. Higher = fairer and more "
        "accurate.",
    ),
    (
        "overall fairness score",
        "Weighted mean over categories (gender, age, accent) of the "
        "category score Σ_g p_g·raw_g (p_g = group share, raw_g = 100·(1 − (WER_g − min)/(max − "
        "min)) of the model-predicted group WERs), multiplied by p/α when the test of the group "
        "effect gives p < α = {alpha}.",
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
        "paired test p",
        "Share of {n_resamples} paired bootstrap resamples (same utterances for "
        "A and B) in which A's WER is not lower than B's: the one-sided p-value of 'A is better'.",
    ),
    ("Δ pts", "A − B in WER points on the utterances both transcribed."),
    ("Cohen's d", "Difference of utterance WER means over the pooled SD (positive = A lower)."),
    ("mean, sd, ci_low/ci_high", "Utterance-level statistics with a 95 % t-interval of the mean."),
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


def render(result: Leaderboard, context: Mapping[str, object] | None = None) -> str:
    """The whole page as one HTML string."""
    context = dict(context or {})
    n_systems = result.board["system"].nunique()
    n_datasets = result.datasets["dataset"].nunique()
    bodies = {
        "tab-ranking": _ranking_tab(result),
        "tab-datasets": _datasets_tab(result),
        "tab-pairs": _pairs_tab(result),
        "tab-fairness": _fairness_tab(result),
        "tab-latency": _latency_tab(result),
        "tab-lid": _lid_tab(result),
        "tab-metrics": _metrics_tab(context),
    }
    nav = "".join(f'<button data-tab="{tab}">{html.escape(label)}</button>' for tab, label in TABS)
    sections = "".join(
        f'<section class="tab" id="{tab}"><h2>{html.escape(label)}</h2>{bodies[tab]}</section>'
        for tab, label in TABS
    )
    title = html.escape(str(context.get("title", "werest leaderboard")))
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title}</title><style>{STYLE}</style></head><body>"
        f"<header><h1>{title}</h1><p>{n_systems} systems, {n_datasets} datasets; label-free "
        "WER estimates by werest beside true WER where references exist.</p></header>"
        f"<nav>{nav}</nav>{sections}<script>{SCRIPT}</script></body></html>\n"
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


def screenshot(
    page: Path, png: Path, width: int = 1400, height: int = 1800, tab: str | None = None
) -> Path:
    """A PNG screenshot of ``page`` (at ``tab``) as headless chromium renders it."""
    chromium(
        page, f"--screenshot={Path(png).resolve()}", f"--window-size={width},{height}", tab=tab
    )
    return png
