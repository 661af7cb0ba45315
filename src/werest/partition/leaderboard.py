"""``werest leaderboard``'s one orchestrator (:func:`leaderboard_input`): the leaderboard of an
input in memory (the table as its one partition) or too large for memory (in partitions).

Each partition becomes one compact row per transcript row
(:func:`werest.ranking.leaderboard.utterance_rows`: the estimate, the true counts where there
is a reference, timings, language and demographic columns as categories, a 64-bit utterance
hash instead of the id), and every table is computed from those rows
(:func:`werest.ranking.leaderboard.assemble`), on the engine of :mod:`werest.partition.engine`:

1. **spill** (partitioned only): the input is read chunk by chunk, each chunk's selected datasets
   (``datasets``/``exclude_datasets``) split into utterance-hash partitions;
2. **global state first**: the systems, the guards' seeded sample of pairs drawn from all
   partitions as the in-memory run draws it
   (:func:`werest.partition.estimate.sample_pairs_partitioned`)
   and so the same label-free proxy order;
3. **per partition** (:func:`leaderboard_partition`, in child processes or on Dask workers):
   :func:`~werest.ranking.leaderboard.utterance_rows` of the partition, and its guards' utterance
   counts;
4. **combine**: the rows concatenated (categories kept) and handed to the same
   :func:`~werest.ranking.leaderboard.assemble`, which puts them in the canonical (dataset, system,
   utterance hash) order first. Every sum, bootstrap, paired test, fit and percentile sees
   the arrays the in-memory run sees: the tables are identical, not merely close.

Memory: one input chunk while spilling, one partition per worker, and the compact rows on
the driver (72 bytes a transcript row on dighr, with four demographic and language columns),
which the bootstraps and the fairness fits need together.

Not supported in partitions (a ConfigError says so): ``ranking=references`` and models using
the dataset-level ``ctx_*`` features (they need the whole table), as for ``werest estimate``.
The leaderboard writes no per-utterance file, so no partitioned output folder either.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from werest.estimation.estimate import check_normaliser
from werest.estimation.guards import utterance_counts
from werest.estimation.pipeline import total_counts
from werest.model.files import Models
from werest.partition.engine import (
    Partitioning,
    Stages,
    concat_compact,
    partition_rows,
    stage_input,
    warn_left_out,
)
from werest.partition.global_state import refuse_whole_table_settings, sampled_order
from werest.ranking.leaderboard import (
    Leaderboard,
    RowSettings,
    assemble,
    check_selection,
    keep_datasets,
    require_two_systems,
    row_categories,
    utterance_rows,
)
from werest.ranking.settings import LeaderboardOptions
from werest.resources import StageRun

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LeaderboardContext(RowSettings):
    """What every partition needs, sent to each worker once (:mod:`werest.partition.cluster`):
    its rows' settings and the input's files (named in errors)."""

    sources: list[str] = field(default_factory=list)


@dataclass
class LeaderboardPart:
    """A partition's compact rows and its guards' utterance counts (no file written)."""

    rows: pd.DataFrame
    counts: pd.DataFrame
    output: Path | None = None


def leaderboard_partition(
    folder: Path | pd.DataFrame, output: Path | None, context: LeaderboardContext
) -> LeaderboardPart:
    """:func:`~werest.ranking.leaderboard.utterance_rows` of one partition."""
    with partition_rows(folder, context.sources) as table:
        rows = utterance_rows(table, context)
        return LeaderboardPart(rows, utterance_counts(table))


def concat_rows(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The partitions' rows in one frame, categories kept (:func:`concat_compact`). A column
    some partitions lack (a folder of files with different columns) is added to them empty,
    as reading the files into one table adds it."""
    frames = [f for f in frames if len(f)] or frames[:1]
    columns = list(dict.fromkeys(c for f in frames for c in f.columns))
    categories = tuple(dict.fromkeys(c for f in frames for c in row_categories(f)))
    aligned = [_with_columns(f, columns, categories) for f in frames]
    return concat_compact(aligned, categories)


def _with_columns(frame: pd.DataFrame, columns: list[str], categories: tuple[str, ...]):
    missing = {
        c: pd.Series(pd.NA, index=frame.index, dtype="string").astype("category")
        if c in categories
        else np.nan
        for c in columns
        if c not in frame.columns
    }
    return frame.assign(**missing)[columns] if missing else frame[columns]


@dataclass
class LeaderboardRun(StageRun):
    """The outputs of :func:`leaderboard_input`."""

    leaderboard: Leaderboard


def leaderboard_input(
    source: str | Path | pd.DataFrame,
    models: Models,
    output_dir: str | Path | None = None,
    options: LeaderboardOptions = LeaderboardOptions(),
    partitioning: Partitioning = Partitioning(),
    *,
    name: str | Path | None = None,
) -> LeaderboardRun:
    """``werest leaderboard``: the one orchestrator, in memory or in partitions. No file is
    written (the caller writes the leaderboard's files).

    ``source`` is a validated table (its one partition, run here with ``options.n_jobs``
    workers) or an input path (spilled, and its partitions run, as ``partitioning`` says; the
    spilled input goes beside ``output_dir``). ``options`` say which datasets, proxies,
    bootstrap and audits (:class:`LeaderboardOptions`); ``name`` is the table's file, named in
    warnings.
    """
    in_memory = isinstance(source, pd.DataFrame)
    if not in_memory:
        refuse_whole_table_settings(models, options.ranking, "exclude")
    clock = Stages()
    datasets, exclude, fairness = options.datasets, options.exclude_datasets, options.fairness
    select = partial(keep_datasets, keep=datasets, exclude=exclude)
    output = Path(output_dir) if output_dir is not None else Path.cwd()
    with stage_input(source, output, partitioning, select=select) as run:
        spilled = run.spill
        _check_input(spilled, models, options, (name or "the input") if in_memory else source)
        clock.lap("spill")
        pairs, order = sampled_order(spilled, models, options, options.bootstrap.seed)
        clock.lap("sample_and_order")
        context = LeaderboardContext(
            models,
            spilled.systems,
            order,
            fairness,
            options.chunk_utterances,
            n_jobs=options.n_jobs if run.in_memory else 1,
            sources=spilled.sources,
        )
        results = run.run(leaderboard_partition, context)
        clock.lap("partitions")
    rows = concat_rows([r.rows for r in results])
    result = assemble(
        rows,
        total_counts(results),
        pairs,
        boot=options.bootstrap,
        fairness=fairness,
        calibration=models.calibration,
    )
    clock.lap("tables")
    return LeaderboardRun(
        result, n_rows=spilled.n_rows, n_partitions=len(results), seconds=clock.seconds
    )


def _check_input(spilled, models: Models, options: LeaderboardOptions, where) -> None:
    """The selected datasets exist, two systems are left, the fairness audit's columns are
    there and the normaliser fits the languages; the systems without a hypothesis are said
    to be left out (``where``: the input, in the warning)."""
    datasets, exclude = options.datasets, options.exclude_datasets
    check_selection(spilled.datasets, datasets, exclude)
    require_two_systems(spilled.systems)
    if options.fairness is not None:
        options.fairness.check_columns(spilled.columns)
    warn_left_out(spilled, where)
    languages = pd.DataFrame({"language": spilled.languages})
    check_normaliser(models, options.normaliser, languages)


def build(
    table: pd.DataFrame, models: Models, options: LeaderboardOptions = LeaderboardOptions()
) -> Leaderboard:
    """The :class:`Leaderboard` of a validated table (its one partition, in memory:
    :func:`leaderboard_input`)."""
    return leaderboard_input(table, models, options=options).leaderboard
