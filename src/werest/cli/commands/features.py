"""``werest features input=T out=F [ranking=R | proxy=S]``: proxies and agreement features.

Large inputs, or a named Dask cluster, run partition by partition
(:func:`werest.partition.features.features_partitioned`): ``out`` is then a folder of
Parquet files whose rows are the in-memory table's.
"""

from __future__ import annotations

import logging

import pandas as pd
from omegaconf import DictConfig

from werest.cli.commands._common import (
    name_list,
    normaliser_setting,
    partition_runner,
    partition_settings,
    partitioned_run,
    save_config,
)
from werest.features.agreement import agreement_features
from werest.features.proxy import Ranking, choose_proxies, references_ranking
from werest.ingest.table import read_table, write_table
from werest.partition.features import RANKING_ALTERNATIVES, features_partitioned

log = logging.getLogger("werest.features.agreement")


def run(cfg: DictConfig) -> pd.DataFrame | None:
    """Choose proxies and write the agreement feature table with its config (a partitioned
    run returns None: its table is never whole in memory)."""
    if partitioned_run(cfg):
        return _run_partitioned(cfg)
    normaliser = normaliser_setting(cfg)
    table = read_table(cfg.input)
    ranking = _given_ranking(cfg) or references_ranking(table, normaliser, RANKING_ALTERNATIVES)
    proxies = choose_proxies(
        table, ranking, targets=name_list(cfg.get("targets")), proxy=cfg.get("proxy")
    )
    features = agreement_features(table, proxies, normaliser=normaliser, n_jobs=cfg.n_jobs)
    out = write_table(features, cfg.out)
    save_config(cfg, out)
    log.info("wrote %s: %d rows", out, len(features))
    return features


def _given_ranking(cfg: DictConfig) -> Ranking | None:
    """``ranking=`` (a file), ``proxy=`` (one system), else None: rank on the references."""
    if cfg.get("ranking"):
        return Ranking.load(cfg.ranking)
    if cfg.get("proxy"):
        return Ranking.from_order([cfg.proxy])
    return None


def _run_partitioned(cfg: DictConfig) -> None:
    with partition_runner(cfg) as runner:
        result = features_partitioned(
            cfg.input,
            cfg.out,
            ranking=_given_ranking(cfg),
            targets=name_list(cfg.get("targets")),
            proxy=cfg.get("proxy"),
            normaliser=normaliser_setting(cfg),
            n_jobs=cfg.n_jobs,
            **partition_settings(cfg),
            run_partitions=runner,
        )
    save_config(cfg, cfg.out)
    log.info("wrote %s: %d rows in %d files", cfg.out, result.n_features, len(result.files))
