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
    labelled_input,
    name_list,
    partitioned_run,
    partitioning,
    print_blocks,
    save_config,
)
from werest.cli.schema import EstimateSettings, LeaderboardSettings
from werest.errors import ConfigError
from werest.estimation.decision import WinnerSettings
from werest.estimation.estimate import zero_label_pairs
from werest.estimation.guards import format_warnings
from werest.estimation.labels import (
    LabelSettings,
    check_bootstrap_memory,
    format_more_labels,
    with_label_notes,
)
from werest.estimation.loop import Labelled, LabelRound
from werest.estimation.outputs import write_outputs, write_summary
from werest.estimation.pipeline import EstimateOptions, estimate_frame
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
    models, source = _inputs(settings)
    loop = label_round(settings, source, models)  # the sheets read before any work
    few_labels = build(settings.few_labels, LabelSettings) if settings.labels else None
    # every file goes to a staging folder, put in place as one when the run ends
    with staged_output(settings.output_dir, owned=OWNED) as staged:
        with ResourceMonitor() as monitor, partitioning(settings) as parts:
            result = _run(settings, source, models, staged, parts)
            if few_labels is not None:
                done = loop.labelled(result, few_labels, settings.seed)
            else:  # the shortlist alone; the differences: the zero-label ones
                pairs = zero_label_pairs(result.records, models.calibration)
                done = Labelled(result.records, result.warnings, pairs, loop.decide(result.records))
        _write(staged, result, done, monitor.summary, settings)
    print_blocks(
        with_label_notes(format_winner(done.decisions) if done.decisions else None, loop.notes),
        evidence_line(models, "audio" in getattr(source, "columns", ())),  # a table in memory
        format_summary(done.records, few_labels is not None),
        format_pairs(done.pairs) if few_labels is None and len(done.pairs) else None,
        format_more_labels(done.records, done.pairs) if few_labels is not None else None,
        format_warnings(done.warnings) if done.warnings else None,
    )
    return done.records


def label_round(settings: EstimateSettings | LeaderboardSettings, table, models) -> LabelRound:
    """The label round on ``table`` (``werest estimate``'s, and ``werest leaderboard``'s with
    ``labels=``) from the command's ``winner``, ``cache_dir``, ``n_jobs`` and ``input``
    settings; with ``labels=``, its sheets read and the bootstrap's memory checked
    (:func:`werest.estimation.labels.check_bootstrap_memory`), before the run."""
    loop = LabelRound(
        table,
        models,
        winner=build(settings.winner, WinnerSettings),
        cache_dir=settings.cache_dir,
        n_jobs=settings.n_jobs,
        source=settings.input,
    )
    if settings.labels:
        loop.read(settings.labels)
        check_bootstrap_memory(loop.labels, loop.table, build(settings.few_labels, LabelSettings))
    return loop


def _inputs(settings: EstimateSettings):
    """The models and the input (a table in memory, or a path a partitioned run spills)."""
    # a run the cache may serve (labels=, in memory) reads the model's payload only if it
    # predicts (model.files.DeferredModel)
    cached = bool(settings.labels and settings.cache_dir) and not partitioned_run(settings)
    models = load_models(
        settings.model_path,
        settings.cer_model_path,
        trust_model=settings.trust_model,
        deferred=cached,
    )
    source = labelled_input(settings, models, "estimate the labelled datasets")
    if settings.audio_scoring.enabled:
        source = scored_inline(source, settings, models.feature_names)
    return models, source


def _run(settings: EstimateSettings, source, models, staged, parts):
    """The estimate: kept by content in ``cache_dir`` for the label loop, else in memory or
    in partitions."""
    options, name = estimate_options(settings), str(settings.input)
    if settings.labels and not partitioned_run(settings) and settings.cache_dir:
        cache = settings.cache_dir
        return estimate_cached(
            source, models, options, cache_dir=cache, name=name, compute=estimate_frame
        )
    return estimate_input(source, models, staged, options, parts, name=name)


def _write(staged, result, done, resources: dict, settings: EstimateSettings) -> None:
    """Every output file into the staging folder."""
    with atomic_path(staged / "pairs.csv") as tmp:
        write_csv(done.pairs, tmp)
    if result.utterances is not None:
        write_outputs(result.utterances, done.records, staged)
    else:  # estimate_input wrote summary.json beside the parts: with the contenders now
        write_summary(done.records, staged)
        resources |= result.resources
    write_resources(resources, staged / "resources.json")
    write_json(done.decisions, staged / "winner.json")  # [] where no dataset has two systems
    save_config(settings, staged / "config.yaml")


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
