"""``werest features``' one orchestrator (:func:`features_input`): the agreement feature table
of an input in memory (the table as its one partition: the table is returned) or too large
for memory (a Parquet dataset folder).

Every feature is a function of one utterance's systems
(:func:`werest.features.proxy.choose_proxies`, then
:func:`werest.features.agreement.agreement_features`), so a large input is spilled into
utterance-hash partitions (:func:`werest.partition.engine.spill`) and each partition
(:func:`features_partition`, in this process or on Dask workers,
:mod:`werest.partition.cluster`) writes ``out/part-NNNNN.parquet`` atomically; the folder is
renamed into place when every partition is done. Concatenated and sorted by key, its rows are
the in-memory table's.

What needs the whole input is the proxies' ranking: ``ranking=`` (a file) and ``proxy=`` are
given; without either, the systems are ranked on the input's references from the partitions
first (:func:`werest.partition.score.reference_ranking`: integer sums, so the same ranking
however the input is partitioned). The targets and the proxy are checked against the whole
input's systems before any partition runs, so the errors do not depend on the partitioning.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from werest.errors import ConfigError
from werest.features.agreement import agreement_features
from werest.features.proxy import Ranking, choose_proxies
from werest.ingest.table import CSV_SUFFIXES, JSONL_SUFFIXES, KEY, write_table
from werest.partition.engine import (
    Partitioning,
    Stages,
    partition_rows,
    stage_input,
    warn_left_out,
)
from werest.partition.score import reference_ranking
from werest.resources import StageRun
from werest.text import AUTO, Normaliser

log = logging.getLogger(__name__)

#: What to do instead when the input has no references to rank the systems on.
RANKING_ALTERNATIVES = "pass ranking=ranking.json (from werest score) or proxy=SYSTEM"


@dataclass(frozen=True)
class FeaturesContext:
    """What every partition needs, sent to each worker once (:mod:`werest.partition.cluster`)."""

    ranking: Ranking | None
    targets: list[str]
    proxy: str | None
    normaliser: Normaliser
    sources: list[str]
    n_jobs: int


@dataclass
class FeaturesResult:
    """A partition's feature rows: how many, and the file holding them (None: no target, or
    none written: an in-memory run's table is in ``features``)."""

    rows: int
    output: Path | None
    features: pd.DataFrame | None = None


def features_partition(
    folder: Path | pd.DataFrame, output: Path | None, context: FeaturesContext
) -> FeaturesResult:
    """The agreement features of one partition's target rows, written to ``output`` (a
    Parquet file, atomically; None: returned)."""
    with partition_rows(folder, context.sources) as table:
        proxies = partition_proxies(table, context)
        if proxies.empty and output is not None:
            return FeaturesResult(0, None)
        features = agreement_features(
            table, proxies, normaliser=context.normaliser, n_jobs=context.n_jobs
        )
    if output is None:
        return FeaturesResult(len(features), None, features)
    write_table(features, output)
    return FeaturesResult(len(features), Path(output))


def partition_proxies(table: pd.DataFrame, context: FeaturesContext) -> pd.DataFrame:
    """:func:`werest.features.proxy.choose_proxies` of one partition: its targets only (a target may
    have no utterance here), and when the explicit proxy transcribed none of its utterances,
    no proxy for any row, as the in-memory run finds for those utterances."""
    present = set(table["system"])
    targets = [name for name in context.targets if name in present]
    if context.proxy is None or context.proxy in present:
        return choose_proxies(table, context.ranking, targets=targets, proxy=context.proxy)
    rows = table.loc[table["system"].isin(targets), KEY].reset_index(drop=True)
    return rows.assign(proxy=pd.Series(np.nan, index=rows.index, dtype="str"))


def checked_targets(
    systems: list[str], ranking: Ranking | None, targets: list[str] | None, proxy: str | None
) -> list[str]:
    """The target systems (None: all), checked against the whole input's ``systems`` with
    :func:`werest.features.proxy.choose_proxies`' own checks and messages (a target or proxy not in
    the input, a proxy that is also a target), before any partition runs."""
    frame = pd.DataFrame({"dataset": "", "utt_id": systems, "system": systems})
    choose_proxies(frame, ranking, targets=targets, proxy=proxy)
    return sorted(systems) if targets is None else list(targets)


def with_every_system(ranking: Ranking | None, systems: list[str]) -> Ranking | None:
    """``ranking`` with the input's unranked systems after its own, by name: the order
    :meth:`Ranking.order` gives them, so every partition picks the same proxies, and says
    once (:func:`checked_targets`, on the driver), not once per partition, that they are
    not ranked."""
    unseen = sorted(set(systems) - set(ranking.systems)) if ranking is not None else []
    if not unseen:
        return ranking
    macro_wer = {**ranking.macro_wer, **dict.fromkeys(unseen, float("nan"))}
    return replace(ranking, systems=[*ranking.systems, *unseen], macro_wer=macro_wer)


def refuse_a_table_file(out: Path) -> None:
    """A partitioned run writes a folder of Parquet files; a CSV/TSV/JSON Lines name for it
    is a ConfigError naming the alternatives."""
    if out.suffix.lower() in {*CSV_SUFFIXES, *JSONL_SUFFIXES}:
        raise ConfigError(
            f"out={out}: a partitioned run writes a folder of Parquet files: name a folder "
            "(out=features/ or out=features.parquet), or unset partition.rows"
        )


@dataclass
class FeaturesRun(StageRun):
    """The outputs of :func:`features_input`."""

    #: an in-memory run's feature table; None when partitioned (its rows are in ``files``)
    features: pd.DataFrame | None
    files: list[Path]
    ranking: Ranking | None
    n_features: int


def features_input(
    source: str | Path | pd.DataFrame,
    out: str | Path,
    *,
    ranking: Ranking | None = None,
    targets: list[str] | None = None,
    proxy: str | None = None,
    normaliser: Normaliser = AUTO,
    n_jobs: int = 1,
    partitioning: Partitioning = Partitioning(),
) -> FeaturesRun:
    """``werest features``: the agreement feature table of ``source``, in memory or in
    partitions.

    A table (``source`` a DataFrame) is one partition, run here with ``n_jobs`` workers: its
    features are returned (``FeaturesRun.features``) and nothing is written. A path is spilled
    as ``partitioning`` says and each partition writes ``out/part-NNNNN.parquet``;
    concatenated and sorted by key, those rows are the in-memory table's. ``ranking`` orders
    the proxies (None with no ``proxy``: ranked on the input's references first); the spilled
    input and the unfinished folder go in temporary folders beside ``out`` (the former in
    ``partitioning.dir`` when given).
    """
    out = Path(out)
    in_memory = isinstance(source, pd.DataFrame)
    if not in_memory:
        refuse_a_table_file(out)
    clock = Stages()
    final = None if in_memory else out
    with stage_input(source, out, partitioning, final=final, suffix=".parquet") as run:
        clock.lap("spill")
        if ranking is None and proxy is None:
            ranking = reference_ranking(
                run, normaliser, alternatives=RANKING_ALTERNATIVES, n_jobs=n_jobs
            )
            clock.lap("ranking")
        chosen = checked_targets(run.spill.systems, ranking, targets, proxy)
        warn_left_out(run.spill, "the input" if in_memory else source)
        complete = with_every_system(ranking, run.spill.systems)
        context = FeaturesContext(complete, chosen, proxy, normaliser, run.spill.sources, n_jobs)
        results = run.run(features_partition, context)
        clock.lap("partitions")
        files = run.place(results)
    return FeaturesRun(
        results[0].features if in_memory else None,
        files,
        ranking,
        sum(r.rows for r in results),
        n_rows=run.spill.n_rows,
        n_partitions=len(results),
        seconds=clock.seconds,
    )
