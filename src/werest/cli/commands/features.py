"""``werest features input=T out=F [ranking=R | proxy=S]``: proxies and agreement features.

One orchestrator (:func:`werest.partition.features.features_input`) runs the input in memory
(the table as its one partition) or, for large inputs or a named Dask cluster, partition by
partition: ``out`` is then a folder of Parquet files whose rows are the in-memory table's.
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
    save_config,
    stage_source,
)
from werest.features.proxy import Ranking
from werest.ingest.table import write_table
from werest.io import staged_output
from werest.partition.features import features_input

log = logging.getLogger("werest.features.agreement")


def run(cfg: DictConfig) -> pd.DataFrame | None:
    """Choose proxies and write the agreement feature table with its config (a partitioned
    run returns None: its table is never whole in memory)."""
    # the table (or folder of parts) and its config, put in place as one at the end
    with staged_output(cfg.out, file=True) as out, partition_runner(cfg) as runner:
        result = features_input(
            stage_source(cfg),
            out,
            ranking=_given_ranking(cfg),
            targets=name_list(cfg.get("targets")),
            proxy=cfg.get("proxy"),
            normaliser=normaliser_setting(cfg),
            n_jobs=cfg.n_jobs,
            **partition_settings(cfg),
            run_partitions=runner,
        )
        if result.features is not None:
            write_table(result.features, out)
        save_config(cfg, out)
    if result.features is None:
        log.info("wrote %s: %d rows in %d files", cfg.out, result.n_features, len(result.files))
        return None
    log.info("wrote %s: %d rows", cfg.out, len(result.features))
    return result.features


def _given_ranking(cfg: DictConfig) -> Ranking | None:
    """``ranking=`` (a file), ``proxy=`` (one system), else None: rank on the references."""
    if cfg.get("ranking"):
        return Ranking.load(cfg.ranking)
    if cfg.get("proxy"):
        return Ranking.from_order([cfg.proxy])
    return None
