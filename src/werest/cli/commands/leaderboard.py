"""``werest leaderboard input=T output_dir=DIR``: every system ranked by label-free WER.

One orchestrator (:func:`werest.partition.leaderboard.leaderboard_input`) builds it in memory
(the table as its one partition) or, for large inputs or a named Dask cluster, partition by
partition: the same tables either way.
"""

from __future__ import annotations

from pathlib import Path

from werest import logs
from werest.cli.commands._common import (
    build,
    name_list,
    partition_runner,
    partition_settings,
    partitioned_run,
    print_blocks,
    save_config,
    stage_source,
)
from werest.cli.schema import LeaderboardSettings
from werest.errors import ConfigError
from werest.estimation.estimate import input_features
from werest.estimation.guards import format_warnings
from werest.estimation.labels import LabelSettings, check_bootstrap_memory, read_labels
from werest.evaluation.fairness import FairnessSettings
from werest.io import atomic_path, check_output, staged_output
from werest.model.files import load_models
from werest.partition.leaderboard import leaderboard_input
from werest.ranking.leaderboard import Leaderboard, select_datasets
from werest.ranking.leaderboard_labels import label_leaderboard
from werest.report.leaderboard_report import format_board, markdown_report, plot_board
from werest.report.page.document import write_page
from werest.stats import Bootstrap
from werest.text import requested_normaliser

#: What a run may write in ``output_dir`` (an earlier run's, replaced whole: an earlier run
#: with fairness or LID tables leaves none of them behind)
OUTPUTS = (
    "leaderboard.*",
    "datasets.csv",
    "pairs.csv",
    "descriptive.csv",
    "fairness_*.csv",
    "lid_*.csv",
    "config.yaml",
)


def run(settings: LeaderboardSettings) -> Leaderboard:
    """Write the leaderboard files and the config; show the ranking and the warnings."""
    check_output(settings.output_dir, owned=OUTPUTS)  # one that cannot be replaced: refused now
    models = load_models(
        settings.model_path, settings.cer_model_path, trust_model=settings.trust_model
    )
    boot = build(settings.bootstrap, Bootstrap)
    fairness = build(settings.fairness, FairnessSettings)
    if partitioned_run(settings) and settings.labels:
        raise ConfigError(
            "labels= is not supported in a partitioned run yet: build the labelled "
            "leaderboard in memory (partition.rows=0)"
        )
    source = stage_source(settings, numeric=input_features(models))
    selection = {"datasets": settings.datasets, "exclude_datasets": settings.exclude_datasets}
    if settings.labels:  # checked before the run
        table = select_datasets(source, selection["datasets"], selection["exclude_datasets"])
        labels = read_labels(settings.labels, table, settings.input)
        label_settings = build(settings.few_labels, LabelSettings)
        check_bootstrap_memory(labels, table, label_settings)
    with partition_runner(settings) as runner:
        result = leaderboard_input(
            source,
            models,
            settings.output_dir,
            boot=boot,
            fairness=fairness if fairness.enabled else None,
            **selection,
            normaliser=requested_normaliser(settings.normaliser),
            ranking=None if settings.ranking is None else str(settings.ranking),
            system_order=name_list(settings.system_order),
            chunk_utterances=settings.chunk_utterances,
            n_jobs=settings.n_jobs,
            **partition_settings(settings),
            run_partitions=runner,
            name=str(settings.input),
        ).leaderboard
    if settings.labels:
        label_leaderboard(result, table, labels, models.normaliser, label_settings, boot)
    context = {
        "n_resamples": boot.n_resamples,
        "confidence": boot.confidence,
        "alpha": fairness.alpha,
        "title": settings.title or "werest leaderboard",
    }
    with staged_output(settings.output_dir, owned=OUTPUTS) as staged:  # in place at the end
        write_outputs(result, staged, context)
        save_config(settings, staged / "config.yaml")
    print_blocks(
        format_board(result), format_warnings(result.warnings) if result.warnings else None
    )
    return result


def write_outputs(result: Leaderboard, output_dir: Path, context: dict | None = None) -> None:
    """Every CSV, the Markdown report, the chart and the web page, each written atomically
    (the command writes them in a staging folder: :func:`werest.io.staged_output`).

    ``context`` (bootstrap and fairness settings, title) fills the page's metrics tab.
    """
    with logs.stage("write"):
        _write_outputs(result, output_dir, context)


def _write_outputs(result: Leaderboard, output_dir: Path, context: dict | None) -> None:
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
