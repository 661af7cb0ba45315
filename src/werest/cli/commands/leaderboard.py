"""``werest leaderboard input=T output_dir=DIR``: every system ranked by label-free WER."""

from __future__ import annotations

from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from werest.cli.commands._common import (
    instantiate_block,
    name_list,
    output_dir,
    partition_runner,
    partition_settings,
    partitioned_run,
    print_blocks,
    save_config,
)
from werest.errors import ConfigError
from werest.estimation.estimate import check_normaliser, input_features, load_models
from werest.estimation.guards import format_warnings
from werest.estimation.labels import LabelSettings, read_labels
from werest.evaluation.fairness import FairnessSettings
from werest.ingest.table import read_table
from werest.io import atomic_path
from werest.model.files import Models
from werest.partition.leaderboard import leaderboard_partitioned
from werest.report.leaderboard import Leaderboard, build, select_datasets
from werest.report.leaderboard_labels import label_leaderboard
from werest.report.leaderboard_report import format_board, markdown_report, plot_board
from werest.report.webpage import write_page
from werest.stats import Bootstrap
from werest.text import requested_normaliser


def run(cfg: DictConfig) -> Leaderboard:
    """Write the leaderboard files and the config; show the ranking and the warnings."""
    models = load_models(
        cfg.get("model_path"), cfg.get("cer_model_path"), trust_model=bool(cfg.get("trust_model"))
    )
    boot = instantiate_block(cfg, "bootstrap", Bootstrap)
    fairness = instantiate_block(cfg, "fairness", FairnessSettings)
    audit = fairness if fairness.enabled else None
    if partitioned_run(cfg):
        if cfg.get("labels"):
            raise ConfigError(
                "labels= is not supported in a partitioned run yet: build the labelled "
                "leaderboard in memory (partition.rows=0)"
            )
        result = _run_partitioned(cfg, models, boot, audit)
    else:
        table = read_table(cfg.input, numeric=input_features(models))
        table = select_datasets(table, cfg.get("datasets"), cfg.get("exclude_datasets"))
        check_normaliser(models, requested_normaliser(cfg.get("normaliser")), table)
        labels = read_labels(cfg.labels, table, cfg.input) if cfg.get("labels") else None
        label_settings = (
            instantiate_block(cfg, "few_labels", LabelSettings) if labels is not None else None
        )
        result = build(
            table,
            models,
            boot=boot,
            fairness=audit,
            chunk_utterances=cfg.chunk_utterances,
            n_jobs=cfg.n_jobs,
            ranking=cfg.get("ranking"),
            system_order=name_list(cfg.get("system_order")),
        )
        if labels is not None:
            label_leaderboard(result, table, labels, models.normaliser, label_settings, boot)
    folder = output_dir(cfg)
    context = {
        "n_resamples": boot.n_resamples,
        "confidence": boot.confidence,
        "alpha": fairness.alpha,
        "title": OmegaConf.select(cfg, "title", default=None) or "werest leaderboard",
    }
    write_outputs(result, folder, context)
    save_config(cfg, folder / "config.yaml")
    print_blocks(
        format_board(result), format_warnings(result.warnings) if result.warnings else None
    )
    return result


def _run_partitioned(
    cfg: DictConfig, models: Models, boot: Bootstrap, fairness: FairnessSettings | None
) -> Leaderboard:
    """The bounded-memory run (docs/scale.md): the same leaderboard."""
    with partition_runner(cfg) as runner:
        return leaderboard_partitioned(
            cfg.input,
            models,
            output_dir(cfg),
            boot=boot,
            fairness=fairness,
            datasets=cfg.get("datasets"),
            exclude_datasets=cfg.get("exclude_datasets"),
            normaliser=requested_normaliser(cfg.get("normaliser")),
            ranking=cfg.get("ranking"),
            system_order=name_list(cfg.get("system_order")),
            chunk_utterances=cfg.chunk_utterances,
            **partition_settings(cfg),
            run_partitions=runner,
        ).leaderboard


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
