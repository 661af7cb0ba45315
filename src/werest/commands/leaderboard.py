"""``werest leaderboard input=T output_dir=DIR``: every system ranked by label-free WER."""

from __future__ import annotations

from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from werest.commands._common import (
    float_setting,
    int_setting,
    names,
    output_dir,
    plain,
    save_config,
    show,
)
from werest.errors import ConfigError
from werest.estimate import check_normaliser, load_models
from werest.fairness import FairnessSettings
from werest.guards import format_warnings
from werest.io import atomic_path
from werest.leaderboard import Bootstrap, Leaderboard, build, select_datasets
from werest.leaderboard_report import format_board, markdown_report, plot_board
from werest.table import read_table
from werest.webpage import write_page


def run(cfg: DictConfig) -> Leaderboard:
    """Write the leaderboard files and the config; show the ranking and the warnings."""
    models = load_models(
        cfg.get("model_path"), cfg.get("cer_model_path"), trust_model=bool(cfg.get("trust_model"))
    )
    table = select_datasets(read_table(cfg.input), cfg.get("datasets"), cfg.get("exclude_datasets"))
    check_normaliser(models, cfg.get("normaliser"), table)
    boot = Bootstrap(
        int_setting(cfg, "bootstrap.n_resamples"),
        float_setting(cfg, "bootstrap.confidence"),
        int_setting(cfg, "bootstrap.seed"),
    )
    enabled = bool(OmegaConf.select(cfg, "fairness.enabled", default=True))
    result = build(
        table,
        models,
        boot=boot,
        fairness=fairness_settings(cfg.get("fairness")) if enabled else None,
        chunk_utterances=int_setting(cfg, "chunk_utterances"),
        n_jobs=int_setting(cfg, "n_jobs"),
        ranking=cfg.get("ranking"),
        system_order=names(cfg.get("system_order")),
    )
    folder = output_dir(cfg)
    context = {
        "n_resamples": boot.n_resamples,
        "confidence": boot.confidence,
        "alpha": OmegaConf.select(cfg, "fairness.alpha", default=0.05),
        "title": OmegaConf.select(cfg, "title", default=None) or "werest leaderboard",
    }
    write_outputs(result, folder, context)
    save_config(cfg, folder / "config.yaml")
    show(format_board(result), format_warnings(result.warnings) if result.warnings else None)
    return result


def fairness_settings(block) -> FairnessSettings:
    """The ``fairness:`` config block as settings (``enabled`` is the command's switch)."""
    values = plain(block)
    values.pop("enabled", None)
    for key in ("categories", "covariates"):
        if key in values:
            values[key] = tuple(values[key] or ())
    try:
        return FairnessSettings(**values)
    except TypeError as error:
        raise ConfigError(f"fairness: {error}") from None


def write_outputs(result: Leaderboard, output_dir: Path, context: dict | None = None) -> None:
    """Every CSV, the Markdown report, the chart and the web page, each written atomically.

    ``context`` (bootstrap and fairness settings, title) fills the page's metrics tab.
    """
    frames = {
        "leaderboard.csv": result.board,
        "datasets.csv": result.datasets,
        "pairs.csv": result.pairs,
        "descriptive.csv": result.descriptive,
    }
    frames |= {f"fairness_{name}.csv": frame for name, frame in result.fairness.items()}
    if result.lid is not None:
        frames |= {
            "lid_accuracy.csv": result.lid.accuracy,
            "lid_confusion.csv": result.lid.confusion,
            "lid_thresholds.csv": result.lid.thresholds,
            "lid_confidence.csv": result.lid.confidence,
        }
    for name, frame in frames.items():
        with atomic_path(output_dir / name) as tmp:
            frame.to_csv(tmp, index=False)
    with atomic_path(output_dir / "leaderboard.md") as tmp:
        tmp.write_text(markdown_report(result), encoding="utf-8")
    plot_board(result.board, output_dir / "leaderboard.png")
    write_page(result, output_dir / "leaderboard.html", context)
