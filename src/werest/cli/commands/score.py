"""``werest score input=T output_dir=DIR``: true corpus WER/CER with CIs and the ranking.

One orchestrator (:func:`werest.partition.score.score_input`) scores the input in memory (the
table as its one partition: ``utterances.csv``) or, for large inputs or a named Dask cluster,
partition by partition: the same ``scores.csv`` and ``ranking.json``, with the per-utterance
rows in ``utterances/part-N.csv``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from werest import logs
from werest.cli.commands._common import (
    build,
    normaliser_setting,
    partitioning,
    print_blocks,
    save_config,
    stage_source,
)
from werest.cli.schema import ScoreSettings
from werest.features.proxy import Ranking, rank_systems
from werest.ingest.table import write_table
from werest.io import staged_output
from werest.partition.score import score_input
from werest.resources import ResourceMonitor, write_resources
from werest.stats import Bootstrap
from werest.text.scoring import format_scores

if TYPE_CHECKING:
    import pandas as pd

CHARACTER_NOTE = "(chars): languages written without spaces (zh, ja, th…) are scored on characters"

#: What a run writes in ``output_dir`` (an earlier run's, replaced whole: docs/architecture.md)
OUTPUTS = (
    "scores.csv",
    "utterances.csv",
    "utterances",
    "ranking.json",
    "resources.json",
    "config.yaml",
)


def run(settings: ScoreSettings) -> pd.DataFrame:
    """Write scores.csv, utterances.csv (or utterances/), ranking.json, resources.json and
    config.yaml."""
    normaliser = normaliser_setting(settings)
    # every file goes to a staging folder, put in place as one when the run ends
    with staged_output(settings.output_dir, owned=OUTPUTS) as folder:
        with ResourceMonitor() as monitor, partitioning(settings) as parts:
            result = score_input(
                stage_source(settings),
                folder,
                normaliser=normaliser,
                bootstrap=build(settings.bootstrap, Bootstrap),
                n_jobs=settings.n_jobs,
                partitioning=parts,
                name=str(settings.input),
            )
            ranking = rank_systems(result.scores, normaliser=normaliser)
        resources = monitor.summary
        if result.rows is not None:
            with logs.stage("write"):
                write_table(result.rows, folder / "utterances.csv")
        else:
            resources |= result.resources
        _finish(settings, folder, result.scores, ranking, resources)
    return result.scores


def _finish(
    settings: ScoreSettings, folder: Path, scores: pd.DataFrame, ranking: Ranking, resources: dict
) -> None:
    """What both runs write and show: scores.csv, ranking.json, resources.json, config."""
    write_table(scores, folder / "scores.csv")
    ranking.save(folder / "ranking.json")
    write_resources(resources, folder / "resources.json")
    save_config(settings, folder / "config.yaml")
    characters = CHARACTER_NOTE if (scores["unit"] == "character").any() else None
    print_blocks(format_scores(scores), characters, "", ranking.describe())
