"""The global state of a partitioned run, computed before any partition runs: the guards'
sample of pairs drawn from the partitions (exactly the sample of the whole table) and the
proxy order chosen from it (:func:`sampled_order`), and the settings that need the whole
table (:func:`refuse_whole_table_settings`). ``werest estimate`` and ``werest leaderboard``
share them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from werest.errors import ConfigError
from werest.estimation.estimate import REFERENCE_RANKING, choose_ranking, sample_and_order
from werest.estimation.guards import sample_keys, sample_pairs
from werest.features.agreement import CONTEXT_FEATURES
from werest.features.proxy import Ranking
from werest.ingest.table import UTTERANCE
from werest.model.files import Models
from werest.partition.engine import (
    NORMALISED,
    ROW,
    SOURCE,
    Spill,
    in_child_process,
    partition_files,
    read_partition,
)
from werest.text import Normaliser, cached_normalisation

if TYPE_CHECKING:
    from werest.estimation.settings import EstimateOptions
    from werest.ranking.settings import LeaderboardOptions


def refuse_whole_table_settings(models, ranking, missing_hypotheses) -> None:
    if set(models.feature_names) & set(CONTEXT_FEATURES):
        raise ConfigError(
            "this model uses dataset-level context features (ctx_*), which partitioned runs "
            "do not compute: unset partition.rows to estimate in memory"
        )
    if missing_hypotheses != "exclude":
        raise ConfigError(
            "missing_hypotheses=deletions needs the whole table: unset partition.rows"
        )
    if ranking == REFERENCE_RANKING:
        raise ConfigError(
            "ranking=references needs the whole table: rank with werest score first and pass "
            "ranking=ranking.json, or unset partition.rows"
        )


def sampled_order(
    spilled: Spill, models: Models, options: EstimateOptions | LeaderboardOptions, seed: int
) -> tuple[pd.DataFrame, Ranking]:
    """The guards' sample of pairs of the whole input, drawn with ``seed``
    (:func:`werest.estimation.guards.sample_pairs`: of the table itself in memory, else drawn
    from its partitions, :func:`sample_pairs_partitioned`) and the proxy order chosen from it
    as the ``options``' ``ranking`` and ``system_order`` say
    (:func:`werest.estimation.estimate.choose_ranking`; ``ranking=references`` reads the
    table, so it works in memory only)."""
    ranking, system_order = options.ranking, options.system_order
    if spilled.root is None:
        return sample_and_order(
            spilled.partitions[0], models, ranking=ranking, system_order=system_order, seed=seed
        )
    whole = pd.DataFrame({"system": spilled.systems})
    pairs = sample_pairs_partitioned(spilled.partitions, normaliser=models.normaliser, seed=seed)
    order = choose_ranking(models, whole, ranking=ranking, system_order=system_order, pairs=pairs)
    return pairs, order


def sample_pairs_partitioned(
    partitions: list[Path], *, normaliser: Normaliser, seed: int = 0
) -> pd.DataFrame:
    """:func:`werest.estimation.guards.sample_pairs` of the whole input, from its partitions: the
    sample
    is drawn from the utterance keys, then only the sampled rows are read.

    Each partition's keys are sampled, then their union
    (:func:`werest.estimation.guards.sample_keys`),
    so memory grows with one partition and the sample, not with the input; it runs in a
    child process (:func:`in_child_process`), so the heap that reading fragments goes back to
    the system."""
    return in_child_process(_sample_pairs, partitions, normaliser=normaliser, seed=seed)


def _sample_pairs(partitions: list[Path], *, normaliser: Normaliser, seed: int) -> pd.DataFrame:
    # each partition's own sample, then the sample of their union: the whole input's sample
    # (:func:`werest.estimation.guards.sample_keys`), holding one partition's keys at a time
    samples = [sample_keys(read_partition(p, list(UTTERANCE)), seed=seed) for p in partitions]
    sample = sample_keys(pd.concat(samples, ignore_index=True), seed=seed)
    ids = sorted(set(sample["utt_id"]))
    rows = pd.concat([_sampled_rows(p, ids, sample) for p in partitions], ignore_index=True)
    rows = rows.sort_values([SOURCE, ROW], kind="stable", ignore_index=True)
    with cached_normalisation(NORMALISED):  # the union's sample is the sample itself
        return sample_pairs(rows.drop(columns=[SOURCE, ROW]), normaliser=normaliser, seed=seed)


def _sampled_rows(folder: Path, ids: list[str], sample: pd.DataFrame) -> pd.DataFrame:
    """The rows of one partition whose (dataset, utt_id) is in ``sample``. Parquet's filter
    on ``utt_id`` keeps the other rows out of pandas (reading whole partitions grew the
    process by GBs at 10M rows); the merge then matches the dataset too."""
    parts = [pd.read_parquet(f, filters=[("utt_id", "in", ids)]) for f in partition_files(folder)]
    return pd.concat(parts, ignore_index=True).merge(sample, on=UTTERANCE)
