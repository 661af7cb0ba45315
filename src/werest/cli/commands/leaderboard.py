"""``werest leaderboard input=T output_dir=DIR``: every system ranked by label-free WER.

One orchestrator (:func:`werest.partition.leaderboard.leaderboard_input`) builds it in memory
(the table as its one partition) or, for large inputs or a named Dask cluster, partition by
partition: the same tables either way. With ``labels=`` (one sheet or the list of them), the
labelled estimates and, first, the decision (:class:`werest.estimation.loop.LabelRound`: the
``winner.json`` ``werest estimate`` writes for the same sheets, round by round).
"""

from __future__ import annotations

from werest.cli.commands._common import (
    build,
    labelled_input,
    name_list,
    partitioning,
    print_blocks,
    save_config,
)
from werest.cli.commands.estimate import label_round
from werest.cli.schema import LeaderboardSettings
from werest.estimation.guards import format_warnings
from werest.estimation.labels import LabelSettings, with_label_notes
from werest.evaluation.fairness import FairnessSettings
from werest.io import check_output, staged_output
from werest.model.files import load_models
from werest.partition.leaderboard import LeaderboardOptions, leaderboard_input
from werest.ranking.leaderboard import Leaderboard, select_datasets
from werest.ranking.leaderboard_decision import decide_board
from werest.ranking.leaderboard_labels import label_leaderboard
from werest.report.decision_text import format_winner
from werest.report.leaderboard_files import LEADERBOARD_FILES, write_leaderboard
from werest.report.leaderboard_report import format_board
from werest.stats import Bootstrap
from werest.text import NormalisationCache, cached_normalisation, requested_normaliser

#: What a run may write in ``output_dir`` (an earlier run's, replaced whole: an earlier run
#: with fairness or LID tables leaves none of them behind)
OUTPUTS = (*LEADERBOARD_FILES, "config.yaml")


def run(settings: LeaderboardSettings) -> Leaderboard:
    """Write the leaderboard files and the config; show the decision (with labels), the
    ranking and the warnings."""
    check_output(settings.output_dir, owned=OUTPUTS)  # one that cannot be replaced: refused now
    models = load_models(
        settings.model_path, settings.cer_model_path, trust_model=settings.trust_model
    )
    options = leaderboard_options(settings)
    source = labelled_input(settings, models, "build the labelled leaderboard")
    loop = None
    if settings.labels:  # the round on the selected datasets, its sheets read before the run
        selected = select_datasets(source, options.datasets, options.exclude_datasets)
        loop = label_round(settings, selected, models)
    with partitioning(settings) as parts:
        name = str(settings.input)
        run = leaderboard_input(source, models, settings.output_dir, options, parts, name=name)
        result = run.leaderboard
    if loop is not None:  # each distinct hypothesis normalised once for the labels' work
        few_labels = build(settings.few_labels, LabelSettings)
        with cached_normalisation(NormalisationCache()):
            boot = options.bootstrap
            label_leaderboard(result, loop.table, loop.labels, models.normaliser, few_labels, boot)
            decide_board(result, loop)
    _write(settings, result, options)
    return result


def leaderboard_options(settings: LeaderboardSettings) -> LeaderboardOptions:
    """The section :func:`werest.partition.leaderboard.leaderboard_input` takes, from the
    command's settings of the same names (its blocks built: ``bootstrap``, ``fairness``)."""
    fairness = build(settings.fairness, FairnessSettings)
    return LeaderboardOptions(
        bootstrap=build(settings.bootstrap, Bootstrap),
        fairness=fairness if fairness.enabled else None,
        datasets=settings.datasets,
        exclude_datasets=settings.exclude_datasets,
        normaliser=requested_normaliser(settings.normaliser),
        ranking=settings.ranking,
        system_order=name_list(settings.system_order),
        chunk_utterances=settings.chunk_utterances,
        n_jobs=settings.n_jobs,
    )


def _write(settings: LeaderboardSettings, result: Leaderboard, options: LeaderboardOptions):
    """The leaderboard's files and the config in ``output_dir``, in place as one; the
    decision (with labels), the ranking and the warnings shown."""
    context = {
        "n_resamples": options.bootstrap.n_resamples,
        "confidence": options.bootstrap.confidence,
        "alpha": build(settings.fairness, FairnessSettings).alpha,
        "title": settings.title or "werest leaderboard",
    }
    with staged_output(settings.output_dir, owned=OUTPUTS) as staged:  # in place at the end
        write_leaderboard(result, staged, context)
        save_config(settings, staged / "config.yaml")
    decision = format_winner(result.decisions) if result.decisions else None
    print_blocks(
        with_label_notes(decision, result.label_notes) if decision else None,
        format_board(result),
        format_warnings(result.warnings) if result.warnings else None,
    )
