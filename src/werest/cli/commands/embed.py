"""``werest embed input=F transcripts=T [out=O] [embedder=sonar] [cache_dir=D]``.

Adds SONAR speech–text similarity (:mod:`werest.features.similarity`) or, with
``embedder=whisper_likelihood``, the Whisper likelihood of each hypothesis
(:mod:`werest.features.likelihood`) to a feature table; with ``cluster=local`` or
``cluster.address=…`` its clips (likelihood) or utterances (SONAR) are scored on a Dask
cluster (:mod:`werest.partition.cluster`), whose workers build the backend.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from werest.cli.commands._common import build, cluster_client, cluster_named
from werest.cli.schema import EmbedSettings
from werest.errors import InputError
from werest.features.agreement import AGREEMENT_FEATURES
from werest.features.cache import EmbeddingCache
from werest.features.embedder import build_embedder, likelihood_scorer
from werest.features.likelihood import (
    LIKELIHOOD_FEATURES,
    ScoringJob,
    add_likelihood,
    no_likelihood,
    score_clips_on_worker,
)
from werest.features.similarity import (
    SimilarityJob,
    add_similarity,
    no_similarity,
    similarity_on_worker,
)
from werest.ingest.audio import AudioPolicy
from werest.ingest.table import KEY, read_table, write_table
from werest.io import check_output, staged_output
from werest.partition.cluster import cluster_runner

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger("werest.features")


def run(settings: EmbedSettings) -> pd.DataFrame:
    """Add the embedder's columns to the feature table and write it (``out``, else in place)."""
    out = settings.out or settings.input
    check_output(out, file=True)  # one that cannot be replaced: refused before any embedding
    embedder_block = settings.embedder.as_dict()
    scorer = likelihood_scorer(embedder_block)
    cluster = settings.cluster
    columns = (*AGREEMENT_FEATURES, *(LIKELIHOOD_FEATURES if scorer else ("similarity",)))
    features = read_table(settings.input, required=tuple(KEY), numeric=(*columns, "audio_duration"))
    transcripts = read_table(settings.transcripts)
    cache = EmbeddingCache(settings.cache_dir)  # None: no on-disk cache
    if scorer is not None:
        add, backend, column, failed = add_likelihood, scorer, "wl_mean_logprob", no_likelihood
    else:  # on a cluster, the workers build the embedder (a model the driver need not load)
        embedder = None if cluster_named(cluster) else build_embedder(embedder_block)
        add, backend, column, failed = add_similarity, embedder, "similarity", no_similarity
    policy = build(settings.audio, AudioPolicy)
    with cluster_client(cluster) as client:
        table = add(
            features,
            transcripts,
            backend,
            cache,
            policy,
            text_column=settings.text_column,
            default_language=settings.default_language,
            **_on_cluster(client, settings, policy, likelihood=scorer is not None),
        )
    ok = int(table[column].notna().sum())
    if len(table) and not ok:
        raise InputError(failed(table), path=settings.input)  # nothing written
    with staged_output(out, file=True) as staged:
        write_table(table, staged)
    log.info("wrote %s: %d rows, %d with %s", out, len(table), ok, column)
    return table


def _on_cluster(client, settings: EmbedSettings, policy: AudioPolicy, *, likelihood: bool) -> dict:
    """``add_likelihood``'s ``run_clips`` or ``add_similarity``'s ``run_chunks`` on the
    cluster's workers (none without a cluster): the backend's description, the cache folder
    and the policy go to every worker once."""
    cache_dir = str(settings.cache_dir.resolve()) if settings.cache_dir else None
    retries = settings.cluster.retries
    if likelihood:
        job = ScoringJob(settings.embedder.as_dict(), cache_dir, policy)
        runner = cluster_runner(client, score_clips_on_worker, retries=retries, job=job)
        return {"run_clips": runner} if runner else {}
    job = SimilarityJob(
        settings.embedder.as_dict(),
        cache_dir,
        policy,
        settings.text_column,
        settings.default_language,
    )
    runner = cluster_runner(client, similarity_on_worker, retries=retries, job=job)
    return {"run_chunks": runner} if runner else {}
