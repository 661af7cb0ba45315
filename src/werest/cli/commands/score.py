"""``werest score input=T output_dir=DIR``: true corpus WER/CER with CIs and the ranking.

Large inputs, or a named Dask cluster, are scored partition by partition
(:func:`werest.partition.score.score_partitioned`): the same ``scores.csv`` and
``ranking.json``, with the per-utterance rows in ``utterances/part-N.csv``.
"""

from __future__ import annotations

from dataclasses import asdict

import pandas as pd
from omegaconf import DictConfig

from werest.cli.commands._common import (
    instantiate_block,
    normaliser_setting,
    output_dir,
    partition_runner,
    partition_settings,
    partitioned_run,
    print_blocks,
    require,
    save_config,
)
from werest.features.proxy import Ranking, rank_systems
from werest.ingest.table import read_table, write_table
from werest.partition.score import score_partitioned
from werest.resources import ResourceMonitor, write_resources
from werest.stats import Bootstrap
from werest.text.scoring import corpus_scores, format_scores, readable_scores, score_utterances

CHARACTER_NOTE = "(chars): languages written without spaces (zh, ja, th…) are scored on characters"


def run(cfg: DictConfig) -> pd.DataFrame:
    """Write scores.csv, utterances.csv, ranking.json, resources.json and config.yaml."""
    require(cfg, "input", "werest score input=table.parquet output_dir=DIR")
    if partitioned_run(cfg):
        return _run_partitioned(cfg)
    n_jobs = cfg.n_jobs
    normaliser = normaliser_setting(cfg)
    with ResourceMonitor() as monitor:
        table = read_table(cfg.input)
        scored = score_utterances(table, normaliser, n_jobs=n_jobs)
        scores = corpus_scores(scored, **asdict(instantiate_block(cfg, "bootstrap", Bootstrap)))
        ranking = rank_systems(scores, normaliser=normaliser)
    folder = output_dir(cfg)
    write_table(readable_scores(scored, table), folder / "utterances.csv")
    _finish(cfg, scores, ranking, monitor.summary)
    return scores


def _run_partitioned(cfg: DictConfig) -> pd.DataFrame:
    """The bounded-memory run: utterances/part-N.csv instead of utterances.csv."""
    folder = output_dir(cfg)
    normaliser = normaliser_setting(cfg)
    with ResourceMonitor() as monitor, partition_runner(cfg) as runner:
        result = score_partitioned(
            cfg.input,
            folder,
            normaliser=normaliser,
            **asdict(instantiate_block(cfg, "bootstrap", Bootstrap)),
            n_jobs=cfg.n_jobs,
            **partition_settings(cfg),
            run_partitions=runner,
        )
        ranking = rank_systems(result.scores, normaliser=normaliser)
    stages = {"stage_seconds": result.seconds, "partitions": result.n_partitions}
    _finish(cfg, result.scores, ranking, {**monitor.summary, **stages})
    return result.scores


def _finish(cfg: DictConfig, scores: pd.DataFrame, ranking: Ranking, resources: dict) -> None:
    """What both runs write and show: scores.csv, ranking.json, resources.json, config."""
    folder = output_dir(cfg)
    write_table(scores, folder / "scores.csv")
    ranking.save(folder / "ranking.json")
    write_resources(resources, folder / "resources.json")
    save_config(cfg, folder / "config.yaml")
    characters = CHARACTER_NOTE if (scores["unit"] == "character").any() else None
    print_blocks(format_scores(scores), characters, "", ranking.describe())
