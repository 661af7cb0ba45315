"""``werest features input=T out=F [ranking=R | proxy=S]``: proxies and agreement features."""

from __future__ import annotations

import logging

import pandas as pd
from omegaconf import DictConfig

from werest.commands._common import int_setting, names, normaliser_setting, save_config
from werest.features.agreement import agreement_features
from werest.proxy import Ranking, choose_proxies, references_ranking
from werest.table import read_table, write_table

log = logging.getLogger("werest.features.agreement")


def run(cfg: DictConfig) -> pd.DataFrame:
    """Choose proxies and write the agreement feature table with its config."""
    table = read_table(cfg.input)
    ranking = _ranking(cfg, table)
    proxies = choose_proxies(
        table, ranking, targets=names(cfg.get("targets")), proxy=cfg.get("proxy")
    )
    features = agreement_features(
        table, proxies, normaliser=normaliser_setting(cfg), n_jobs=int_setting(cfg, "n_jobs")
    )
    out = write_table(features, cfg.out)
    save_config(cfg, out)
    log.info("wrote %s: %d rows", out, len(features))
    return features


def _ranking(cfg: DictConfig, table: pd.DataFrame) -> Ranking:
    """``ranking=`` (a file), ``proxy=`` (one system), else a ranking on the table's references."""
    if cfg.get("ranking"):
        return Ranking.load(cfg.ranking)
    if cfg.get("proxy"):
        return Ranking.from_order([cfg.proxy])
    return references_ranking(
        table,
        normaliser_setting(cfg),
        "pass ranking=ranking.json (from werest score) or proxy=SYSTEM",
    )
