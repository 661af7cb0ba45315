"""``werest estimate input=T target=S [proxy=P] [model_path=M] output_dir=DIR``: the main job.

Writes ``utterances.csv``, ``summary.json``, ``resources.json`` (the run's CPU %, memory and GPU
use: :mod:`werest.resources`) and ``config.yaml`` in ``output_dir`` and shows the summary with
the guards' warnings. One orchestrator (:func:`werest.partition.estimate.estimate_input`) does
the work: in memory (the table as its one partition), or, for large inputs or a named Dask
cluster (:mod:`werest.partition.cluster`), partition by partition: the same summary, with the
per-utterance rows in ``utterances/part-N.csv``.
"""

from __future__ import annotations

from werest.cli.commands._common import (
    build,
    name_list,
    partitioned_run,
    partitioning,
    print_blocks,
    save_config,
    stage_source,
)
from werest.cli.schema import EstimateSettings
from werest.errors import ConfigError
from werest.estimation.decision import WinnerSettings
from werest.estimation.estimate import input_features, zero_label_pairs
from werest.estimation.guards import attach_warnings, format_warnings
from werest.estimation.label_round import winner_entries
from werest.estimation.labels import (
    LabelSettings,
    apply_labels,
    check_bootstrap_memory,
    format_more_labels,
    read_labels,
    with_label_notes,
)
from werest.estimation.outputs import write_outputs, write_summary
from werest.estimation.pipeline import EstimateOptions
from werest.estimation.run_cache import estimate_cached
from werest.io import atomic_path, check_output, staged_output, write_csv, write_json
from werest.model.files import load_models
from werest.partition.estimate import estimate_input
from werest.report.decision_text import format_winner
from werest.report.estimate_report import evidence_line, format_pairs, format_summary
from werest.resources import ResourceMonitor, write_resources
from werest.text import NormalisationCache, cached_normalisation, requested_normaliser

#: What a run writes in ``output_dir`` (an earlier run's, replaced whole: docs/architecture.md)
OUTPUTS = (
    "utterances.csv",
    "utterances",
    "summary.json",
    "resources.json",
    "pairs.csv",
    "winner.json",
)
#: ... and its config beside them
OWNED = (*OUTPUTS, "config.yaml")


def run(settings: EstimateSettings) -> list[dict]:
    """Estimate, write the outputs and the config, show the summary; returns its records.

    Each distinct hypothesis is normalised once a run: the estimate, the guards' sample,
    the winner's contests and the labels' scores share one cache."""
    with cached_normalisation(NormalisationCache()):
        return _estimate(settings)


def _estimate(settings: EstimateSettings) -> list[dict]:
    check_output(settings.output_dir, owned=OWNED)  # one that cannot be replaced: refused now
    # a run the cache may serve (labels=, in memory) reads the model's payload only if it
    # predicts (model.files.DeferredModel)
    cached = bool(settings.labels and settings.cache_dir) and not partitioned_run(settings)
    models = load_models(
        settings.model_path,
        settings.cer_model_path,
        trust_model=settings.trust_model,
        deferred=cached,
    )
    if partitioned_run(settings) and settings.labels:
        raise ConfigError(
            "labels= is not supported in a partitioned run yet: estimate the labelled "
            "datasets in memory (partition.rows=0)"
        )
    folder = settings.output_dir
    numeric = input_features(models)  # columns read as numbers: the model's extra inputs
    source = stage_source(settings, numeric=numeric)
    if settings.audio_scoring.enabled:
        source = scored_inline(source, settings, models.feature_names)
    notes: list[str] = []  # on the labels: printed under the decision
    labels = (
        read_labels(settings.labels, source, settings.input, notes) if settings.labels else None
    )
    label_settings = build(settings.few_labels, LabelSettings) if labels is not None else None
    if labels is not None:  # refused before any work when it cannot fit in memory
        check_bootstrap_memory(labels, source, label_settings)
    # every file goes to a staging folder, put in place as one when the run ends
    with staged_output(folder, owned=OWNED) as staged:
        with ResourceMonitor() as monitor, partitioning(settings) as parts:
            options, name = estimate_options(settings), str(settings.input)
            if labels is not None and not partitioned_run(settings) and settings.cache_dir:
                cache = settings.cache_dir
                result = estimate_cached(source, models, options, cache_dir=cache, name=name)
            else:
                result = estimate_input(source, models, staged, options, parts, name=name)
            records, warnings = result.records, result.warnings
            if labels is not None:
                labelled = apply_labels(
                    records,
                    result.utterances,
                    source,
                    labels,
                    models.normaliser,
                    label_settings,
                    seed=settings.seed,
                )
                warnings = [*warnings, *labelled.warnings]
                attach_warnings(records, warnings)
            winner = winner_entries(  # a partitioned run has no labels: the shortlist alone
                records,
                source,
                models.normaliser,
                labels,
                settings=build(settings.winner, WinnerSettings),
                utterances=result.utterances,
                cache_dir=settings.cache_dir if labels is not None else None,
                n_jobs=settings.n_jobs,
            )
        # differences: the labelled ones with labels=, else the zero-label ones
        pairs = (
            labelled.pairs if labels is not None else zero_label_pairs(records, models.calibration)
        )
        with atomic_path(staged / "pairs.csv") as tmp:
            write_csv(pairs, tmp)
        resources = monitor.summary
        if result.utterances is not None:
            write_outputs(result.utterances, records, staged)
        else:  # estimate_input wrote summary.json beside the parts: with the contenders now
            write_summary(records, staged)
            resources |= {"stage_seconds": result.seconds, "partitions": result.n_partitions}
        write_resources(resources, staged / "resources.json")
        write_json(winner, staged / "winner.json")  # [] where no dataset has two systems
        save_config(settings, staged / "config.yaml")
    has_audio = "audio" in getattr(source, "columns", ())  # a table in memory
    print_blocks(
        with_label_notes(format_winner(winner) if winner else None, notes),
        evidence_line(models, has_audio),
        format_summary(records, labels is not None),
        format_pairs(pairs) if labels is None and len(pairs) else None,
        format_more_labels(records, pairs) if labels is not None else None,
        format_warnings(warnings) if warnings else None,
    )
    return records


def scored_inline(source, settings: EstimateSettings, feature_names: list[str]):
    """The input table with the Whisper likelihood of every hypothesis (``audio_scoring``),
    for a model whose features (``feature_names``) read it; refused before any scoring when
    the model reads none of it or the run goes in partitions."""
    from werest.features.inputs import input_columns
    from werest.features.likelihood import score_table

    if not any(name.startswith("wl_") for name in input_columns(feature_names)):
        raise ConfigError(
            "audio_scoring.enabled=true adds the Whisper likelihood (wl_*), which this model "
            "does not read: use model_path=audio (docs/audio.md)"
        )
    if isinstance(source, str):  # a partitioned run's input path
        raise ConfigError(
            "audio_scoring is not supported in a partitioned run: score the table with "
            "`werest embed embedder=whisper_likelihood` first, or estimate in memory "
            "(partition.rows=0)"
        )
    scoring = settings.audio_scoring
    return score_table(
        source,
        scoring.model,
        cache_dir=scoring.cache_dir,
        default_language=scoring.default_language,
        path=settings.input,
    )


def estimate_options(settings: EstimateSettings) -> EstimateOptions:
    """The section :func:`werest.partition.estimate.estimate_input` takes, from the settings."""
    return EstimateOptions(
        target=settings.target,
        proxy=settings.proxy,
        ranking=settings.ranking,
        system_order=name_list(settings.system_order),
        normaliser=requested_normaliser(settings.normaliser),  # None: the model's own
        seed=settings.seed,
        missing_hypotheses=settings.missing_hypotheses,
        chunk_utterances=settings.chunk_utterances,
        n_jobs=settings.n_jobs,
    )
