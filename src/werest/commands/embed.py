"""``werest embed input=F transcripts=T [out=O] [embedder=sonar] [cache_dir=D]``.

Adds SONAR speech–text similarity (:mod:`werest.features.similarity`) or, with
``embedder=whisper_likelihood``, the Whisper likelihood of each hypothesis
(:mod:`werest.features.likelihood`) to a feature table.
"""

from __future__ import annotations

import logging

import pandas as pd
from omegaconf import DictConfig

from werest.audio import AudioPolicy
from werest.commands._common import built
from werest.errors import InputError
from werest.features.agreement import AGREEMENT_FEATURES
from werest.features.cache import EmbeddingCache
from werest.features.embedder import build_embedder, likelihood_scorer
from werest.features.likelihood import LIKELIHOOD_FEATURES, add_likelihood, no_likelihood
from werest.features.similarity import add_similarity, no_similarity
from werest.table import KEY, read_table, write_table

log = logging.getLogger("werest.features")


def run(cfg: DictConfig) -> pd.DataFrame:
    """Add the embedder's columns to the feature table and write it (``out``, else in place)."""
    scorer = likelihood_scorer(cfg.embedder)
    columns = (*AGREEMENT_FEATURES, *(LIKELIHOOD_FEATURES if scorer else ("similarity",)))
    features = read_table(cfg.input, required=tuple(KEY), numeric=(*columns, "audio_duration"))
    transcripts = read_table(cfg.transcripts)
    cache = EmbeddingCache(cfg.cache_dir) if cfg.get("cache_dir") else EmbeddingCache(None)
    add, backend, column, failed = (
        (add_likelihood, scorer, "wl_mean_logprob", no_likelihood)
        if scorer is not None
        else (add_similarity, build_embedder(cfg.embedder), "similarity", no_similarity)
    )
    table = add(
        features,
        transcripts,
        backend,
        cache,
        built(cfg, "audio", AudioPolicy),
        text_column=cfg.get("text_column", "hypothesis"),
        default_language=cfg.get("default_language"),
    )
    ok = int(table[column].notna().sum())
    if len(table) and not ok:
        raise InputError(failed(table), path=cfg.input)  # nothing written
    out = cfg.get("out") or cfg.input
    write_table(table, out)
    log.info("wrote %s: %d rows, %d with %s", out, len(table), ok, column)
    return table
