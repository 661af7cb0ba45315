"""Reports of ``werest evaluate experiment=lodo``: CSV, markdown and plots.

:func:`write_lodo_reports` writes, in ``output_dir``: ``<name>_cells.csv`` (one row per held-out
(domain, dataset, system), rates as fractions), ``<name>_domains.csv``, ``<name>.md`` (the
accuracy bar, the per-domain and per-cell tables, in WER points) and ``<name>_cells.png``
(estimate with its interval against the true WER, werest and raw pWER).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from werest.formatting import markdown_table, number, percent
from werest.io import atomic_path, json_default, save_figure
from werest.lodo import LodoResult

log = logging.getLogger(__name__)

# The accuracy bar of issue 10 (points are WER percentage points).
BAR = {
    "share_beating_raw": 0.8,
    "mean_abs_error": 0.015,
    "max_abs_error": 0.05,
    "mean_spearman": 0.9,
    "coverage": 0.9,
    "low_wer_error": 0.015,
}
LOW_WER = 0.05
LOW_WER_DOMAIN = "librispeech"


def bar_checks(result: LodoResult) -> pd.DataFrame:
    """Each criterion of the bar: the measured value and whether it holds."""
    overall, cells = result.overall, result.cells
    low = cells[(cells["domain"] == LOW_WER_DOMAIN) & (cells["wer"] < LOW_WER)]
    low_max = float(low["abs_error"].max()) if len(low) else float("nan")
    share = overall["domains_beating_raw"] / max(overall["domains"], 1)
    rows = [
        (
            "domains where werest's mean corpus error < raw pWER's",
            f"{share:.0%}",
            "≥ 80 %",
            share >= BAR["share_beating_raw"],
        ),
        (
            "mean corpus |aWER − WER| (points, all cells)",
            percent(overall["mean_abs_error"]),
            "≤ 1.50",
            overall["mean_abs_error"] <= BAR["mean_abs_error"],
        ),
        (
            "max corpus |aWER − WER| (points)",
            percent(overall["max_abs_error"]),
            "≤ 5.00",
            overall["max_abs_error"] <= BAR["max_abs_error"],
        ),
        (
            "mean Spearman (domains with ≥ 3 systems)",
            number(overall["mean_spearman"]),
            "≥ 0.900",
            overall["mean_spearman"] >= BAR["mean_spearman"],
        ),
        (
            "95 % interval coverage of cells",
            f"{overall['coverage']:.1%}",
            "≥ 90 %",
            overall["coverage"] >= BAR["coverage"],
        ),
        (
            f"{LOW_WER_DOMAIN}: max error of systems under 5 % WER ({len(low)} systems)",
            percent(low_max),
            "≤ 1.50",
            bool(len(low)) and low_max <= BAR["low_wer_error"],
        ),
    ]
    return pd.DataFrame(rows, columns=["criterion", "measured", "bar", "holds"]).assign(
        holds=lambda f: f["holds"].map({True: "yes", False: "**no**"})
    )


def domain_table(domains: pd.DataFrame) -> pd.DataFrame:
    """The per-domain summary for display (errors and widths in points)."""
    return pd.DataFrame(
        {
            "held-out domain": domains["domain"],
            "systems": domains["systems"],
            "mean err": domains["mean_abs_error"].map(percent),
            "raw mean err": domains["mean_abs_error_raw"].map(percent),
            "max err": domains["max_abs_error"].map(percent),
            "raw max err": domains["max_abs_error_raw"].map(percent),
            "bias": domains["mean_error"].map(percent),
            "Spearman": domains["spearman"].map(number),
            "raw Spearman": domains["spearman_raw"].map(number),
            "utt MAE": domains["mae"].map(number),
            "raw utt MAE": domains["mae_raw"].map(number),
            "coverage": domains["coverage"].map(lambda v: f"{v:.0%}"),
            "interval width": domains["mean_width"].map(percent),
            "bootstrap width": domains["mean_ci_width"].map(percent),
            "beats raw": domains["beats_raw"].map({True: "yes", False: "no"}),
        }
    )


def cell_table(cells: pd.DataFrame) -> pd.DataFrame:
    """Every held-out cell for display (points)."""
    cells = cells.sort_values(["domain", "dataset", "wer"])
    return pd.DataFrame(
        {
            "domain": cells["domain"],
            "dataset": cells["dataset"],
            "system": cells["system"],
            "proxy": cells["proxy"],
            "n": cells["n_scored"],
            "WER": cells["wer"].map(percent),
            "aWER": cells["awer"].map(percent),
            "raw pWER": cells["pwer"].map(percent),
            "interval": [
                f"[{percent(lo)}, {percent(hi)}]"
                for lo, hi in zip(cells["interval_low"], cells["interval_high"], strict=True)
            ],
            "bootstrap CI": [
                f"[{percent(lo)}, {percent(hi)}]"
                for lo, hi in zip(cells["ci_low"], cells["ci_high"], strict=True)
            ],
            "in": cells["covered"].map({True: "yes", False: "no"}),
        }
    )


def lodo_markdown(result: LodoResult, cfg: Mapping | None, name: str) -> str:
    """The markdown report."""
    overall = pd.DataFrame([result.overall]).drop(columns=["domains_beating_raw"])
    settings = ""
    if cfg is not None:
        settings = (
            f"- features: `{', '.join(cfg['features']['columns'])}`\n"
            f"- model: `{cfg['model']}`\n"
            f"- normaliser `{cfg['normaliser']}`, two-system views {cfg.get('two_system_views')}, "
            f"max rows per domain {cfg['data'].get('max_rows_per_domain')}, seed {cfg['seed']}\n"
            f"- interval: conformal level {cfg['lodo']['level']}, offset {cfg['lodo']['offset']} "
            "(half-width q·(aWER + offset), q from the other domains' cells), "
            "widened to hold the bootstrap CI"
        )
    return (
        "\n\n".join(
            [
                f"# Leave one domain out: `werest evaluate experiment={name}`",
                "Each domain is held out in turn; the model is trained on the others as `werest "
                "train` trains, and every system of the held-out domain is estimated as `werest "
                "estimate` estimates for a user (systems the training never saw get label-free "
                "proxies). Errors are corpus WER points; raw = pWER against the same proxies.",
                "## The bar\n\n" + markdown_table(bar_checks(result)),
                "## Per held-out domain\n\n" + markdown_table(domain_table(result.domains)),
                "## Overall (every cell)\n\n"
                + "```json\n"
                + json.dumps(json.loads(overall.iloc[0].to_json()), indent=1)
                + "\n```",
                "## Settings\n\n" + settings,
                "## Every cell\n\n" + markdown_table(cell_table(result.cells)),
                "## Timings\n\n"
                + markdown_table(result.timings)
                + f"\n\ntotal {result.seconds.get('total', float('nan')):.0f} s",
            ]
        )
        + "\n"
    )


def cells_plot(result: LodoResult, path: Path) -> Path:
    """aWER (with interval) and raw pWER against the true WER of every held-out cell."""
    from matplotlib.figure import Figure

    cells = result.cells
    fig = Figure(figsize=(11, 5))
    axes = fig.subplots(1, 2, sharex=True, sharey=True)
    top = float(np.nanmax([cells["wer"].max(), cells["awer"].max(), cells["pwer"].max()])) + 0.05
    for axis, column, title in ((axes[0], "awer", "werest"), (axes[1], "pwer", "raw pWER")):
        axis.plot([0, top], [0, top], color="grey", linewidth=0.8)
        for domain, rows in cells.groupby("domain"):
            if column == "awer":
                axis.errorbar(
                    100 * rows["wer"],
                    100 * rows["awer"],
                    yerr=100
                    * np.vstack(
                        [rows["awer"] - rows["interval_low"], rows["interval_high"] - rows["awer"]]
                    ),
                    fmt="o",
                    markersize=3,
                    elinewidth=0.6,
                    label=domain,
                )
            else:
                axis.plot(100 * rows["wer"], 100 * rows["pwer"], "o", markersize=3, label=domain)
        axis.set_title(f"{title}: held-out corpus estimates", fontsize=10)
        axis.set_xlabel("true WER %")
    axes[0].set_ylabel("estimate %")
    axes[1].legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return save_figure(fig, path)


def write_lodo_reports(
    result: LodoResult, cfg: Mapping | None, output_dir: str | Path, *, name: str
) -> list[Path]:
    """Write the CSVs, the markdown report and the plot; return their paths."""
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for suffix, frame in (("cells", result.cells), ("domains", result.domains)):
        path = output_dir / f"{name}_{suffix}.csv"
        with atomic_path(path) as tmp:
            frame.to_csv(tmp, index=False, float_format="%.6g")
        paths.append(path)
    summary = output_dir / f"{name}_overall.json"
    with atomic_path(summary) as tmp:
        tmp.write_text(json.dumps(result.overall, indent=2, default=json_default), "utf-8")
    markdown = output_dir / f"{name}.md"
    with atomic_path(markdown) as tmp:
        tmp.write_text(lodo_markdown(result, cfg, name), encoding="utf-8")
    paths += [summary, markdown, cells_plot(result, output_dir / f"{name}_cells.png")]
    log.info("wrote %s", ", ".join(str(p) for p in paths))
    return paths
