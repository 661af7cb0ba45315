"""The report of ``werest evaluate experiment=few_labels`` (:mod:`werest.evaluation.few_labels`):
``<name>.md``, ``<name>_domains.csv``, ``<name>_overall.csv``, ``<name>_zero_label.csv`` and
``<name>_budget.png`` (mean error against the labelling budget)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from werest.evaluation.few_labels import ORACLE, FewLabelResult
from werest.formatting import markdown_table
from werest.io import save_figure, write_report

log = logging.getLogger(__name__)


#: shares shown in per cent
PERCENT_COLUMNS = (
    "coverage",
    "min_coverage",
    "draws_holding",
    "min_draws_holding",
    "worst_draw_coverage",
    "promise_kept",
    "pilot_promise_kept",
)


def _rounded(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for column in out.columns:
        if column in PERCENT_COLUMNS:  # empty where nothing was measured (no pilot at 10)
            out[column] = out[column].map(lambda v: "" if pd.isna(v) else f"{100 * v:.1f} %")
        elif out[column].dtype.kind == "f":
            out[column] = out[column].map(lambda v: "" if pd.isna(v) else f"{v:.2f}")
    return out


def bars_table(result: FewLabelResult) -> pd.DataFrame:
    """The bars at n = 50, one row per (interval method, draw design): coverage in every
    domain and in the stress set, draws holding, the error against labels alone and against
    the zero-label estimate."""
    rows = []
    for check in result.bars:
        for strategy in ("random", "active"):
            excess = check.get(f"excess_over_zero_label_{strategy}")
            rows.append(
                {
                    "interval": check["method"],
                    "draws": strategy,
                    "lowest domain coverage (≥ 90 %)": _pct(
                        check.get(f"min_domain_coverage_{strategy}")
                    ),
                    "lowest domain's draws holding (≥ 85 %)": _pct(
                        check.get(f"min_draws_holding_{strategy}")
                    ),
                    "heavy-tail stress: coverage, draws holding (≥ 85 %)": _pair(
                        check.get(f"stress_coverage_{strategy}"),
                        check.get(f"stress_draws_holding_{strategy}"),
                    ),
                    "long-tail stress: coverage, draws holding (≥ 85 %)": _pair(
                        check.get(f"tail_coverage_{strategy}"),
                        check.get(f"tail_draws_holding_{strategy}"),
                    ),
                    "PPI error / labels-only error (≤ 0.66)": _ratio(
                        check.get("ppi_over_classical")
                        if strategy == "random"
                        else check.get("active_over_classical")
                    ),
                    "promise kept, worst domain (≥ 80 %): before any label": _kept(
                        check, "promise", strategy
                    ),
                    "after a pilot": _kept(check, "pilot_promise", strategy),
                    "worst domain's error above zero-label's (≤ 0.5 points)": ""
                    if excess is None
                    else f"{excess:+.2f} ({check[f'excess_domain_{strategy}']})",
                }
            )
    return pd.DataFrame(rows)


def headline_table(result: FewLabelResult, method: str = "t") -> pd.DataFrame:
    """Per budget: mean |d| (points, domains weighing the same), the lowest domain coverage
    and the mean width of each estimator and strategy, with ``method`` intervals; for PPI, the
    lowest domain's share of draws whose intervals hold at least 80 % of the dataset's systems
    (``draws holding``: the one draw a user makes serves every system)."""
    table = result.overall
    rows = []
    for budget in sorted(result.settings.budgets):
        row: dict[str, object] = {"labels per dataset": budget}
        for strategy, estimator, label in (
            ("random", "classical", "labels only"),
            ("random", "ppi", "PPI, random"),
            ("active", "ppi", "PPI, active"),
            (ORACLE, "ppi", "PPI, oracle draw"),
        ):
            pick = table[
                (table["strategy"] == strategy)
                & (table["estimator"] == estimator)
                & (table["method"] == method)
                & (table["budget"] == budget)
            ]
            if len(pick):
                r = pick.iloc[0]
                row[f"{label}: error"] = f"{r['mean_abs_error']:.2f}"
                row[f"{label}: min cov."] = f"{100 * r['min_coverage']:.0f} %"
                row[f"{label}: width"] = f"{r['mean_width']:.1f}"
                if estimator == "ppi" and strategy != ORACLE and "min_draws_holding" in r:
                    row[f"{label}: draws holding"] = f"{100 * r['min_draws_holding']:.0f} %"
        rows.append(row)
    return pd.DataFrame(rows).fillna("")


def _kept(check: Mapping, name: str, strategy: str) -> str:
    """The worst domain's share of draws whose promise (``name``) was kept, with the domain."""
    value = check.get(f"min_{name}_kept_{strategy}")
    return "" if value is None else f"{_pct(value)} ({check[f'{name}_domain_{strategy}']})"


def _pct(value) -> str:
    return "" if value is None else f"{100 * value:.1f} %"


def _pair(coverage, holding) -> str:
    return "" if coverage is None else f"{_pct(coverage)}, {_pct(holding)}"


def _ratio(value) -> str:
    return "" if value is None else f"{value:.2f}"


def few_labels_markdown(result: FewLabelResult, cfg: Mapping | None, name: str) -> str:
    s = result.settings
    at_50 = result.per_domain[result.per_domain["budget"] == 50]
    lines = [
        f"# {name}: prediction-powered WER from a few labels, every domain held out",
        "",
        "Written by `werest evaluate experiment=few_labels` (`werest.evaluation.few_labels`). Each "
        "shared "
        "domain is held out in turn: the model is trained on the others and estimates every "
        "system of the held-out domain as `werest estimate` would. Then, per dataset, n "
        f"utterances are drawn {s.n_draws} times for each budget n ∈ "
        f"{{{', '.join(str(b) for b in s.budgets)}}}, as `werest sample` draws them "
        "(`random`: without replacement; `active`: with replacement, probabilities rising "
        f"with the predicted errors, at least {s.uniform_share:g}/N), and every system's "
        "corpus WER is estimated from the draws: `ppi` (prediction-powered, "
        "`werest.estimation.ppi`), "
        "`classical` (the labels alone, Σ w e / Σ w r) and `zero_label` (no label: the "
        "model's estimate with its cross-conformal interval). Errors and widths are in WER "
        "points; every domain weighs the same in the overall means; coverage is that of a "
        f"{s.level:.0%} interval (`normal`, `t`: delta method; `bootstrap`: percentile, "
        f"{s.n_resamples} resamples of the labelled draws).",
        "",
        "## Headline",
        "",
        f"Mean |estimate − truth| in points over the held-out domains (each weighing the "
        f"same), the lowest domain's coverage of the {s.level:.0%} `t` interval, and its "
        "mean width in points. The datasets of fewer utterances than the budget are left "
        "out of that budget (thennal10's 50-utterance sets from 50 on). `oracle draw` draws "
        "as `active` does, but with the true residuals as scores: the best any score "
        "of the predictions could do. `draws holding`: the lowest domain's share of draws "
        "(one labelled sample, serving every system of its dataset, as a user draws it) "
        "whose intervals hold the truth of at least 80 % of the dataset's systems.",
        "",
        markdown_table(headline_table(result)),
        "",
        _zero_line(result),
        "",
        "## The bars at n = 50",
        "",
        markdown_table(bars_table(result)),
        "",
        "## Every budget (means over domains)",
        "",
        markdown_table(_rounded(result.overall)),
        "",
        "## Per domain at n = 50",
        "",
        markdown_table(_rounded(at_50)),
        "",
        *_stress_lines(result),
        *_best_lines(result),
        "## Zero labels, per domain",
        "",
        markdown_table(_rounded(_zero_domains(result))),
        "",
        f"![error against budget]({name}_budget.png)",
        "",
    ]
    return "\n".join(lines)


def _stress_lines(result: FewLabelResult) -> list[str]:
    """The stress sets' rows (every budget, strategy, estimator, `t` intervals)."""
    from werest.evaluation.few_labels import STRESS_DOMAIN, TAIL_DOMAIN

    s = result.settings
    about = {
        STRESS_DOMAIN: (
            "Heavy-tail stress set",
            f"A stress copy of every dataset of at least 200 utterances: on {100 * s.stress:g} % "
            "of its utterances one system in four loops (100 insertions), on another "
            f"{100 * s.stress:g} % one system in four returns nothing; agreement sees both, so "
            "the predictions follow (`werest.evaluation.few_labels.stressed_frames`).",
        ),
        TAIL_DOMAIN: (
            "Long-tail stress set",
            f"A stress copy of every dataset of at least 200 utterances: {100 * s.tail:g} % of "
            "its utterances are long hallucinated ones carrying "
            f"{100 * s.tail_errors:g} % of the errors of one system in two; agreement sees "
            "between half and all of each one's extra errors "
            "(`werest.evaluation.few_labels.tail_frames`).",
        ),
    }
    lines = []
    for domain, (title, text) in about.items():
        rows = result.per_domain[
            (result.per_domain["domain"] == domain) & (result.per_domain["method"] == "t")
        ]
        if rows.empty:
            continue
        lines += [
            f"## {title}",
            "",
            f"{text} Not in the overall means above. `t` intervals; `draws_holding`: the share "
            "of draws whose intervals hold at least 80 % of the dataset's systems.",
            "",
            markdown_table(_rounded(rows.drop(columns=["domain", "method"]))),
            "",
        ]
    return lines


def _best_lines(result: FewLabelResult) -> list[str]:
    """The true best system at 50 labels: its bias and how often it is ranked first."""
    if result.best is None or result.best.empty:
        return []
    frame = result.best.copy()
    frame["best_bias"] = frame["best_bias"].map(lambda v: f"{v:+.2f}")
    frame["ranks_best_first"] = frame["ranks_best_first"].map(lambda v: f"{100 * v:.1f} %")
    return [
        "## The best system",
        "",
        "At 50 labels, over the datasets with at least 3 systems (each weighing the same): the "
        "true best system's mean bias (estimate − truth, points) and the share of draws whose "
        "lowest estimate is the true best. `ppi` is what `werest estimate labels=` reports "
        "(unbiased: `few_labels.shrink=false`); `ppi_shrunk` leans on the zero-label "
        "estimate, which overstates the best system's WER, and carries that bias back.",
        "",
        markdown_table(frame),
        "",
    ]


def _zero_line(result: FewLabelResult) -> str:
    """The zero-label estimate's figures, in a sentence."""
    z = result.overall[result.overall["estimator"] == "zero_label"].iloc[0]
    return (
        f"With no label (the model's estimate and its cross-conformal interval): mean error "
        f"{z['mean_abs_error']:.2f} points (worst domain {z['worst_domain']}, "
        f"{z['worst_abs_error']:.2f}), lowest domain coverage {100 * z['min_coverage']:.0f} % "
        f"({z['min_coverage_domain']}), mean width {z['mean_width']:.1f} points."
    )


def _zero_domains(result: FewLabelResult) -> pd.DataFrame:
    from werest.evaluation.few_labels import zero_domain_summary

    return zero_domain_summary(result.zero_label)


def budget_plot(result: FewLabelResult, path: Path, method: str = "t") -> Path:
    """Mean |d| (points) against the budget: PPI random/active, classical, zero labels."""
    from matplotlib.figure import Figure

    table = result.overall
    fig = Figure(figsize=(7, 4.5))
    axis = fig.subplots()
    for strategy, estimator, style in (
        ("random", "classical", "s--"),
        ("random", "ppi", "o-"),
        ("active", "ppi", "^-"),
        ("active", "classical", "v:"),
        ("oracle", "ppi", "x-."),
    ):
        rows = table[
            (table["strategy"] == strategy)
            & (table["estimator"] == estimator)
            & (table["method"] == method)
        ].sort_values("budget")
        if len(rows):
            axis.plot(
                rows["budget"], rows["mean_abs_error"], style, label=f"{estimator}, {strategy}"
            )
    zero = table[table["estimator"] == "zero_label"]
    if len(zero):
        axis.axhline(
            zero["mean_abs_error"].iat[0], color="grey", linestyle=":", label="zero labels"
        )
    axis.set_xscale("log")
    axis.set_xticks(sorted(result.settings.budgets))
    axis.set_xticklabels([str(b) for b in sorted(result.settings.budgets)])
    axis.set_xlabel("labelled utterances per dataset")
    axis.set_ylabel("mean |estimate − true WER| (points)")
    axis.set_title("Held-out domains: corpus WER error against the labelling budget", fontsize=10)
    axis.legend(fontsize=8)
    fig.tight_layout()
    return save_figure(fig, path)


def write_few_label_reports(
    result: FewLabelResult, cfg: Mapping | None, output_dir: str | Path, *, name: str
) -> list[Path]:
    """Write the CSVs, the markdown report and the plot; return their paths."""
    paths = write_report(output_dir, name, result.frames, few_labels_markdown(result, cfg, name))
    paths.append(budget_plot(result, Path(output_dir) / f"{name}_budget.png"))
    log.info("wrote %s", ", ".join(str(p) for p in paths))
    return paths
