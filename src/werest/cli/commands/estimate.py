"""``werest estimate input=T target=S [proxy=P] [model_path=M] output_dir=DIR``: the main job.

Writes ``utterances.csv``, ``summary.json``, ``resources.json`` (the run's CPU %, memory and GPU
use: :mod:`werest.resources`) and ``config.yaml`` in ``output_dir`` and shows the summary with
the guards' warnings (:func:`werest.estimation.estimate.estimate_table` does the work). Large
inputs, or a
named Dask cluster, run in bounded memory, partition by partition
(:func:`werest.partition.estimate.estimate_partitioned`, :mod:`werest.partition.cluster`): the same
summary,
with the per-utterance rows in ``utterances/part-N.csv``.
"""

from __future__ import annotations

from omegaconf import DictConfig

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
from werest.estimation.estimate import (
    estimate_table,
    format_summary,
    input_features,
    load_models,
    write_outputs,
)
from werest.estimation.guards import attach_warnings, format_warnings
from werest.estimation.labels import LabelSettings, apply_labels, read_labels
from werest.ingest.table import read_table
from werest.io import atomic_path, write_csv
from werest.model.files import Models
from werest.partition.estimate import estimate_partitioned
from werest.resources import ResourceMonitor, write_resources
from werest.text import requested_normaliser


def run(cfg: DictConfig) -> list[dict]:
    """Estimate, write the outputs and the config, show the summary; returns its records."""
    models = load_models(
        cfg.get("model_path"), cfg.get("cer_model_path"), trust_model=bool(cfg.get("trust_model"))
    )
    if partitioned_run(cfg):
        if cfg.get("labels"):
            raise ConfigError(
                "labels= is not supported in a partitioned run yet: estimate the labelled "
                "datasets in memory (partition.rows=0)"
            )
        return _run_partitioned(cfg, models)
    table = read_table(cfg.input, numeric=input_features(models))
    labels = read_labels(cfg.labels, table, cfg.input) if cfg.get("labels") else None
    label_settings = (
        instantiate_block(cfg, "few_labels", LabelSettings) if labels is not None else None
    )
    with ResourceMonitor() as monitor:
        utterances, records, warnings = estimate_table(
            table,
            models,
            **estimate_settings(cfg),
            n_jobs=cfg.n_jobs,
            source=cfg.input,
        )
        if labels is not None:
            labelled = apply_labels(
                records,
                utterances,
                table,
                labels,
                models.normaliser,
                label_settings,
                seed=cfg.seed,
            )
            warnings = [*warnings, *labelled.warnings]
            attach_warnings(records, warnings)
    folder = output_dir(cfg)
    if labels is not None:
        with atomic_path(folder / "pairs.csv") as tmp:
            write_csv(labelled.pairs, tmp)
    write_outputs(utterances, records, folder)
    write_resources(monitor.summary, folder / "resources.json")
    save_config(cfg, folder / "config.yaml")
    print_blocks(
        format_summary(records, labels is not None), format_warnings(warnings) if warnings else None
    )
    return records


def estimate_settings(cfg: DictConfig) -> dict:
    """The settings the in-memory and the partitioned run share, as keyword arguments."""
    return {
        "target": cfg.get("target"),
        "proxy": cfg.get("proxy"),
        "ranking": cfg.get("ranking"),
        "system_order": name_list(cfg.get("system_order")),
        "normaliser": requested_normaliser(cfg.get("normaliser")),  # None: the model's own
        "seed": cfg.seed,
        "chunk_utterances": cfg.chunk_utterances,
        "missing_hypotheses": cfg.get("missing_hypotheses", "exclude"),
    }


def _run_partitioned(cfg: DictConfig, models: Models) -> list[dict]:
    folder = output_dir(cfg)
    with ResourceMonitor() as monitor, partition_runner(cfg) as runner:
        result = estimate_partitioned(
            cfg.input,
            models,
            folder,
            **estimate_settings(cfg),
            **partition_settings(cfg),
            numeric=input_features(models),
            run_partitions=runner,
        )
    stages = {"stage_seconds": result.seconds, "partitions": result.n_partitions}
    write_resources({**monitor.summary, **stages}, folder / "resources.json")
    save_config(cfg, folder / "config.yaml")
    print_blocks(
        format_summary(result.records),
        format_warnings(result.warnings) if result.warnings else None,
    )
    return result.records
