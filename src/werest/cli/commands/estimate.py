"""``werest estimate input=T target=S [proxy=P] [model_path=M] output_dir=DIR``: the main job.

Writes ``utterances.csv``, ``summary.json``, ``resources.json`` (the run's CPU %, memory and GPU
use: :mod:`werest.resources`) and ``config.yaml`` in ``output_dir`` and shows the summary with
the guards' warnings. One orchestrator (:func:`werest.partition.estimate.estimate_input`) does
the work: in memory (the table as its one partition), or, for large inputs or a named Dask
cluster (:mod:`werest.partition.cluster`), partition by partition: the same summary, with the
per-utterance rows in ``utterances/part-N.csv``.
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
    stage_source,
)
from werest.errors import ConfigError
from werest.estimation.estimate import (
    format_pairs,
    format_summary,
    input_features,
    load_models,
    write_outputs,
    zero_label_pairs,
)
from werest.estimation.guards import attach_warnings, format_warnings
from werest.estimation.labels import (
    LabelSettings,
    apply_labels,
    check_bootstrap_memory,
    format_more_labels,
    read_labels,
)
from werest.io import atomic_path, staged_output, write_csv
from werest.partition.estimate import estimate_input
from werest.resources import ResourceMonitor, write_resources
from werest.text import requested_normaliser

#: What a run writes in ``output_dir`` (an earlier run's, replaced whole: docs/architecture.md)
OUTPUTS = ("utterances.csv", "utterances", "summary.json", "resources.json", "pairs.csv")


def run(cfg: DictConfig) -> list[dict]:
    """Estimate, write the outputs and the config, show the summary; returns its records."""
    models = load_models(
        cfg.get("model_path"), cfg.get("cer_model_path"), trust_model=bool(cfg.get("trust_model"))
    )
    if partitioned_run(cfg) and cfg.get("labels"):
        raise ConfigError(
            "labels= is not supported in a partitioned run yet: estimate the labelled "
            "datasets in memory (partition.rows=0)"
        )
    folder = output_dir(cfg)
    numeric = input_features(models)  # columns read as numbers: the model's extra inputs
    source = stage_source(cfg, numeric=numeric)
    labels = read_labels(cfg.labels, source, cfg.input) if cfg.get("labels") else None
    label_settings = (
        instantiate_block(cfg, "few_labels", LabelSettings) if labels is not None else None
    )
    if labels is not None:  # refused before any work when it cannot fit in memory
        check_bootstrap_memory(labels, source, label_settings)
    # every file goes to a staging folder, put in place as one when the run ends
    with staged_output(folder, owned=(*OUTPUTS, "config.yaml")) as staged:
        with ResourceMonitor() as monitor, partition_runner(cfg) as runner:
            result = estimate_input(
                source,
                models,
                staged,
                **estimate_settings(cfg),
                **partition_settings(cfg),
                numeric=numeric,
                n_jobs=cfg.n_jobs,
                run_partitions=runner,
                name=cfg.input,
            )
            records, warnings = result.records, result.warnings
            if labels is not None:
                labelled = apply_labels(
                    records,
                    result.utterances,
                    source,
                    labels,
                    models.normaliser,
                    label_settings,
                    seed=cfg.seed,
                )
                warnings = [*warnings, *labelled.warnings]
                attach_warnings(records, warnings)
        # differences: the labelled ones with labels=, else the zero-label ones
        pairs = (
            labelled.pairs if labels is not None else zero_label_pairs(records, models.calibration)
        )
        with atomic_path(staged / "pairs.csv") as tmp:
            write_csv(pairs, tmp)
        resources = monitor.summary
        if result.utterances is not None:
            write_outputs(result.utterances, records, staged)
        else:  # estimate_input wrote summary.json beside the parts
            resources |= {"stage_seconds": result.seconds, "partitions": result.n_partitions}
        write_resources(resources, staged / "resources.json")
        save_config(cfg, staged / "config.yaml")
    print_blocks(
        format_summary(records, labels is not None),
        format_pairs(pairs) if labels is None and len(pairs) else None,
        format_more_labels(records, pairs) if labels is not None else None,
        format_warnings(warnings) if warnings else None,
    )
    return records


def estimate_settings(cfg: DictConfig) -> dict:
    """The settings of :func:`werest.partition.estimate.estimate_input`, as keyword arguments."""
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
