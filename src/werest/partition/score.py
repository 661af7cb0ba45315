"""``werest score``'s one orchestrator (:func:`score_input`): true corpus WER/CER of an input
in memory (the table as its one partition) or too large for memory (in partitions).

It runs on the partition engine (:mod:`werest.partition.engine`): a large input is spilled
into utterance-hash partitions (:func:`werest.partition.engine.spill`); each partition is
scored (:func:`score_partition`, in this process or on Dask workers,
:mod:`werest.partition.cluster`) and its rows written atomically to
``utterances/part-NNNNN.csv`` (in memory: returned, for ``utterances.csv``); it returns a
compact row per labelled row: (dataset, system, unit) as categories, the integer counts
:func:`werest.text.scoring.corpus_scores` sums, and a 64-bit hash of the utterance id
(``_order``), about 45 bytes a row.

**Why the result is identical**, not merely close: the corpus rates are sums of integers, and
:func:`~werest.text.scoring.corpus_scores` takes each (dataset, system)'s utterances in a canonical
order (the utterance hash) in both runs, so the seeded bootstrap resamples the same arrays.
The ranking (:func:`werest.features.proxy.rank_systems`) is a function of those scores.

:func:`reference_ranking` ranks the systems on the input's references from the
same partitions (``werest features`` without ``ranking=`` or ``proxy=``): the per (dataset,
system) sums of word errors and reference words add up over partitions exactly.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from werest.errors import ConfigError, InputError
from werest.features.proxy import Ranking, rank_totals
from werest.ingest.table import write_table
from werest.partition.engine import (
    Partitioning,
    StageInput,
    Stages,
    concat_compact,
    partition_rows,
    stage_input,
    warn_left_out,
)
from werest.resources import StageRun
from werest.stats import Bootstrap
from werest.text import AUTO, Normaliser
from werest.text.scoring import corpus_scores, readable_scores, score_utterances, utterance_order

log = logging.getLogger(__name__)

#: What :func:`werest.text.scoring.corpus_scores` needs of each scored row, besides ``_order``.
COUNTS = (
    "word_errors",
    "ref_words",
    "char_errors",
    "ref_chars",
    "substitutions",
    "deletions",
    "insertions",
    "hyp_words",
)
#: The compact rows' string columns, kept as categories (one Python string a row would not fit).
CATEGORIES = ("dataset", "system", "unit")


@dataclass(frozen=True)
class ScoreContext:
    """What every partition needs, sent to each worker once (:mod:`werest.partition.cluster`)."""

    normaliser: Normaliser
    sources: list[str]
    n_jobs: int
    #: return the readable rows (an in-memory run's ``utterances.csv``) instead of writing them
    keep_rows: bool = False


@dataclass
class ScoreResult:
    """A partition's labelled rows, compact (:data:`COUNTS`, :data:`CATEGORIES`, ``_order``),
    and its readable rows when the context keeps them."""

    compact: pd.DataFrame
    has_reference_column: bool
    output: Path | None
    rows: pd.DataFrame | None = None


def score_partition(
    folder: Path | pd.DataFrame, output: Path | None, context: ScoreContext
) -> ScoreResult:
    """Score one partition's labelled rows; their readable rows go to ``output`` (a CSV,
    written atomically; None: no file, or kept in the result with ``context.keep_rows``)."""
    with partition_rows(folder, context.sources) as table:
        has_column = "reference" in table.columns
        if not has_column or table["reference"].isna().all():
            return ScoreResult(_empty_compact(), has_column, None)
        scored = score_utterances(table, context.normaliser, n_jobs=context.n_jobs)
    rows = readable_scores(scored, table) if output is not None or context.keep_rows else None
    if output is not None:
        write_table(rows, output)
        rows = None
    compact = scored[[*CATEGORIES, *COUNTS]].astype(
        {**dict.fromkeys(CATEGORIES, "category"), **dict.fromkeys(COUNTS, "int32")}
    )
    compact["_order"] = utterance_order(scored)
    return ScoreResult(compact, True, output, rows)


def _empty_compact() -> pd.DataFrame:
    return pd.DataFrame(columns=[*CATEGORIES, *COUNTS, "_order"])


def labelled_rows(results: list[ScoreResult], path: str | Path) -> pd.DataFrame:
    """The partitions' compact rows in one frame; the in-memory run's InputError (naming the
    input) when no row has a reference."""
    compact = concat_compact([r.compact for r in results], CATEGORIES)
    if len(compact):
        return compact
    if not any(r.has_reference_column for r in results):
        raise InputError(
            "the table has no 'reference' column: nothing to score against",
            path=path,
            column="reference",
        )
    raise InputError("no row has a reference: nothing to score", path=path, column="reference")


@dataclass
class ScoreRun(StageRun):
    """The outputs of :func:`score_input`."""

    scores: pd.DataFrame
    #: an in-memory run's readable rows (``utterances.csv``); None when partitioned
    rows: pd.DataFrame | None
    utterance_files: list[Path]


def score_input(
    source: str | Path | pd.DataFrame,
    output_dir: str | Path,
    *,
    normaliser: Normaliser = AUTO,
    bootstrap: Bootstrap = Bootstrap(),
    n_jobs: int = 1,
    partitioning: Partitioning = Partitioning(),
    name: str | Path | None = None,
) -> ScoreRun:
    """``werest score``: the corpus scores of ``source``, in memory or in partitions.

    A table (``source`` a DataFrame, ``name`` its file in errors) is scored as one partition
    in this process with ``n_jobs`` workers and its readable rows returned (``ScoreRun.rows``);
    a path is spilled as ``partitioning`` says and its partitions' rows written to
    ``output_dir/utterances/part-NNNNN.csv`` (the columns of the in-memory ``utterances.csv``;
    the folder is renamed into place once every partition is done). The corpus scores, with
    ``bootstrap``'s intervals, are the same either way. The caller writes ``scores.csv`` and
    the ranking.
    """
    output_dir = Path(output_dir)
    clock = Stages()
    final = output_dir / "utterances"
    with stage_input(source, output_dir, partitioning, final=final) as run:
        clock.lap("spill")
        warn_left_out(run.spill, name if run.in_memory and name else source)
        context = ScoreContext(normaliser, run.spill.sources, n_jobs, keep_rows=run.in_memory)
        results = run.run(score_partition, context)
        clock.lap("partitions")
        where = name if run.in_memory else source
        scores = corpus_scores(
            labelled_rows(results, where),
            n_resamples=bootstrap.n_resamples,
            seed=bootstrap.seed,
            confidence=bootstrap.confidence,
        )
        files = run.place(results)
        clock.lap("scores")
    rows = results[0].rows if run.in_memory and results else None
    return ScoreRun(
        scores,
        rows,
        files,
        n_rows=run.spill.n_rows,
        n_partitions=len(results),
        seconds=clock.seconds,
    )


def reference_ranking(
    run: StageInput,
    normaliser: Normaliser,
    *,
    alternatives: str,
    n_jobs: int = 1,
) -> Ranking:
    """The systems ranked on the input's references (:func:`werest.features.proxy.rank_totals`
    of the per (dataset, system) sums, which add up over partitions exactly): a ConfigError
    suggesting ``alternatives`` when no row has a reference."""
    context = ScoreContext(normaliser, run.spill.sources, n_jobs)
    results = run.run(score_partition, context, write=False)
    compact = concat_compact([r.compact for r in results], CATEGORIES)
    if compact.empty:
        raise ConfigError(f"the input has no references to rank its systems on: {alternatives}")
    log.info("ranking the input's systems on its references")
    totals = compact.groupby(["dataset", "system"], observed=True, as_index=False)[
        ["word_errors", "ref_words"]
    ].sum()
    return rank_totals(totals, normaliser)
