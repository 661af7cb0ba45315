"""``werest score input=T output_dir=DIR``: true corpus WER/CER with CIs and the ranking."""

from __future__ import annotations

from dataclasses import asdict

import pandas as pd
from omegaconf import DictConfig

from werest.commands._common import (
    built,
    int_setting,
    normaliser_setting,
    output_dir,
    require,
    save_config,
    show,
)
from werest.proxy import rank_systems
from werest.resources import ResourceMonitor, write_resources
from werest.scoring import corpus_scores, format_scores, readable_scores, score_utterances
from werest.stats import Bootstrap
from werest.table import read_table, write_table

CHARACTER_NOTE = "(chars): languages written without spaces (zh, ja, th…) are scored on characters"


def run(cfg: DictConfig) -> pd.DataFrame:
    """Write scores.csv, utterances.csv, ranking.json, resources.json and config.yaml."""
    require(cfg, "input", "werest score input=table.parquet output_dir=DIR")
    n_jobs = int_setting(cfg, "n_jobs")
    with ResourceMonitor() as monitor:
        table = read_table(cfg.input)
        scored = score_utterances(table, normaliser_setting(cfg), n_jobs=n_jobs)
        scores = corpus_scores(scored, **asdict(built(cfg, "bootstrap", Bootstrap)))
        ranking = rank_systems(scores, normaliser=normaliser_setting(cfg))
    folder = output_dir(cfg)
    write_table(scores, folder / "scores.csv")
    write_table(readable_scores(scored, table), folder / "utterances.csv")
    ranking.save(folder / "ranking.json")
    write_resources(monitor.summary, folder / "resources.json")
    save_config(cfg, folder / "config.yaml")
    characters = CHARACTER_NOTE if (scores["unit"] == "character").any() else None
    show(format_scores(scores), characters, "", ranking.describe())
    return scores
