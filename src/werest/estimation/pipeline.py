"""``werest estimate``'s pipeline on a table in memory (:func:`estimate_frame`): the
estimator lives with the estimate.

1. **global state**: the system names, the languages, the targets, and the guards' seeded
   sample of at most 1,000 utterances per dataset
   (:func:`werest.estimation.guards.sample_pairs`), from which the label-free proxy order
   (:func:`werest.features.proxy.consensus_order`) is chosen (:func:`sample_and_order`);
2. **the rows** (:func:`estimate_rows`): :func:`werest.estimation.estimate.
   estimate_utterances`, the readable rows, and a compact per-target-row frame (dataset,
   system, proxy, status, n̂, proxy words, predictions, a 64-bit utterance hash: about 100
   bytes a row) with integer sums of the true errors and the guards' utterance counts;
3. **the summary** (:func:`combine_results`): :func:`werest.estimation.estimate.summarise`
   and the guards on the compact frame. Summaries take each (dataset, system)'s utterances
   in a canonical order (the utterance hash), so corpus estimates, bootstrap intervals and
   proxies do not depend on how the rows were split.

A partitioned run (:mod:`werest.partition.estimate`) spills the input, computes the same
global state from its partitions, runs :func:`estimate_rows` on each partition (in child
processes or on Dask) and combines their results with :func:`combine_results`: the records
and warnings do not depend on the partitioning. A run kept by content between the rounds of
the label loop: :mod:`werest.estimation.run_cache`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from werest.errors import unknown_name
from werest.estimation.corpus import corpus_length, scored_rows, truth_from_sums, truth_sums
from werest.estimation.estimate import (
    check_normaliser,
    estimate_utterances,
    nothing_estimated,
    resolve_targets,
    sample_and_order,
    summarise,
)
from werest.estimation.guards import (
    attach_warnings,
    count_missing_as_deletions,
    evidence_found,
    unestimated_warnings,
    utterance_counts,
    warnings_from_counts,
)
from werest.estimation.outputs import readable_utterances
from werest.estimation.run import (  # noqa: F401 (re-exported: the section and the run)
    MISSING_HYPOTHESES,
    UNKEYED,
    EstimateOptions,
    EstimateRun,
)
from werest.features.agreement import CONTEXT_FEATURES, STATUS_OK
from werest.features.proxy_ranking import Ranking
from werest.forked import helper_count
from werest.frames import concat_compact
from werest.ingest.table import NO_HYPOTHESES, warn_without_hypotheses
from werest.model.files import Models
from werest.text import (
    NormalisationCache,
    Normaliser,
    normalised_columns,
    reusing_normalisation,
)
from werest.text.scoring import dataset_units, scoring_units, utterance_order

#: What a summary needs of each estimated row (plus ``predicted_*`` and ``_order``).
COMPACT = ["dataset", "system", "proxy", "status", "est_ref_words", "proxy_words"]
#: Its string columns, kept as categories (one Python string per row would not fit at 10M).
CATEGORIES = ("dataset", "system", "proxy", "status")


@dataclass(frozen=True)
class PipelineContext:
    """What the pipeline needs of the whole run, for each table it runs on (a partitioned run
    sends it to each worker once: :mod:`werest.partition.cluster`)."""

    models: Models
    targets: list[str]
    proxy: str | None
    order: Ranking | list[str] | None
    normaliser: Normaliser
    sources: list[str]
    chunk_utterances: int
    n_jobs: int
    #: the partition is the whole input (an in-memory run): the dataset-level ``ctx_*``
    #: features it computes are the input's, so they are kept
    whole_table: bool = False
    #: forked helper processes that share its normalisation and features
    #: (:func:`werest.forked.helper_count`; an in-memory run's, partitions have none)
    helpers: int = 0


@dataclass
class PipelineResult:
    """One table's (or partition's) contribution to the corpus summary (a few numbers per
    target row), and its readable rows."""

    compact: pd.DataFrame
    truth: pd.DataFrame | None
    units: pd.DataFrame
    counts: pd.DataFrame
    #: the file its readable rows went to (a partition's; None: kept in ``rows``)
    output: Path | None = None
    #: :func:`werest.estimation.guards.evidence_found` of its rows (the compact rows drop those
    #: columns)
    evidence: dict[str, bool] = field(default_factory=dict)
    #: its readable rows when no ``output`` file was given (an in-memory run's)
    rows: pd.DataFrame | None = None


def estimate_rows(table: pd.DataFrame, context: PipelineContext) -> PipelineResult:
    """The pipeline on one validated table (an in-memory run's whole table, or one partition
    of a partitioned run: :func:`werest.partition.estimate.estimate_partition`): the
    per-utterance estimates as readable rows (``PipelineResult.rows``) and what the summary
    needs of them (a few numbers per target row)."""
    normaliser = context.normaliser
    units = pd.DataFrame(
        {"dataset": table["dataset"].to_numpy(), "unit": scoring_units(table, normaliser)}
    ).drop_duplicates()
    counts = utterance_counts(table)
    if not table["system"].isin(context.targets).any():
        return PipelineResult(_empty_compact(context.models), None, units, counts)
    utterances = estimate_utterances(
        table,
        context.models,
        context.targets,
        proxy=context.proxy,
        ranking=context.order,
        chunk_utterances=context.chunk_utterances,
        n_jobs=context.n_jobs,
        helpers=context.helpers,
    )
    if not context.whole_table:
        utterances = utterances.drop(columns=list(CONTEXT_FEATURES))
    scored = scored_rows(table, utterances, normaliser)
    readable = readable_utterances(utterances, table, normaliser, scored)
    predicted = [c for c in utterances.columns if c.startswith("predicted_")]
    compact = utterances[compact_columns(predicted)].assign(_order=utterance_order(utterances))
    # categories: a string read from Parquet is one object per row, ~60 bytes each, which
    # over 10M target rows would make the compact frame several GB instead of ~100 B a row
    compact = compact.astype(dict.fromkeys(CATEGORIES, "category"))
    truth = truth_sums(scored, utterances) if scored is not None else None
    evidence = evidence_found(utterances)
    return PipelineResult(compact, truth, units, counts, evidence=evidence, rows=readable)


def compact_columns(predicted: list[str]) -> list[str]:
    """:data:`COMPACT`, the proxy lengths that weigh the ``predicted`` columns in a corpus
    estimate (:func:`werest.estimation.corpus.corpus_length`: ``proxy_chars`` for a CER model) and
    the predictions."""
    lengths = {corpus_length(column) for column in predicted} - set(COMPACT)
    return [*COMPACT, *sorted(lengths), *predicted]


def _empty_compact(models: Models) -> pd.DataFrame:
    predicted = [f"predicted_{target}" for target in models.targets]
    return pd.DataFrame(columns=[*compact_columns(predicted), "_order"])


def combine_results(results, models, normaliser, pairs, options: EstimateOptions):
    """The summary records, warnings and compact rows of every table the pipeline ran on
    (an in-memory run's one, or the partitions)."""
    compact = concat_compact([r.compact for r in results], CATEGORIES)
    for result in results:  # the combined frame replaces them: one copy held, not two
        result.compact = None
    truths = [r.truth for r in results if r.truth is not None]
    truth = truth_from_sums(pd.concat(truths).groupby(level=[0, 1]).sum()) if truths else None
    units_found = pd.concat([r.units for r in results], ignore_index=True)
    units = dataset_units(units_found["unit"], units_found["dataset"])
    records = summarise(
        compact,
        None,
        normaliser=normaliser,
        n_resamples=options.n_resamples,
        seed=options.seed,
        calibration=models.calibration,
        truth=truth,
        units=units,
    )
    found: dict[str, bool] = {}
    for result in results:  # every partition has the same columns, in the same order
        for column, any_value in result.evidence.items():
            found[column] = found.get(column, False) or any_value
    evidence = [column for column, any_value in found.items() if any_value]
    warnings = [
        *warnings_from_counts(total_counts(results), compact, pairs, evidence),
        *unestimated_warnings(records),
    ]
    attach_warnings(records, warnings)
    return records, warnings, compact


def total_counts(results: list[PipelineResult]) -> pd.DataFrame:
    """:func:`werest.estimation.guards.utterance_counts` of the whole input: partitions hold
    disjoint
    utterances, so their counts add up."""
    counts = pd.concat([r.counts for r in results], ignore_index=True)
    summed = [column for column in ("n", "empty") if column in counts]
    per_system = counts.groupby(["dataset", "system"], as_index=False)[summed].sum()
    totals = [r.counts.drop_duplicates("dataset").set_index("dataset")["total"] for r in results]
    total = pd.concat(totals).groupby(level=0).sum()
    return per_system.assign(total=per_system["dataset"].map(total).to_numpy())


def run_targets(
    models: Models,
    options: EstimateOptions,
    systems: list[str],
    languages: list[str],
    no_hypotheses: list[str],
    where: object,
) -> tuple[Normaliser, list[str]]:
    """The run's normaliser (:func:`werest.estimation.estimate.check_normaliser`) and target
    systems (:func:`werest.estimation.estimate.resolve_targets`), from the input's
    ``systems`` and ``languages``; a ``proxy=`` that is no system is refused, and the systems
    left out for having no hypothesis are warned about (``where``: the input, in the warning)."""
    used = check_normaliser(models, options.normaliser, pd.DataFrame({"language": languages}))
    proxy = options.proxy
    targets = resolve_targets(
        pd.DataFrame({"system": systems}), options.target, proxy, no_hypotheses
    )
    if proxy is not None and proxy not in systems:
        raise unknown_name("proxy system", proxy, systems, "systems")
    warn_without_hypotheses(where, no_hypotheses)
    return used, targets


def estimate_frame(
    table: pd.DataFrame,
    models: Models,
    options: EstimateOptions = EstimateOptions(),
    *,
    name: str | Path | None = None,
) -> EstimateRun:
    """``werest estimate`` of a validated table in memory (``name``: its file, in errors and
    warnings): the global state, then :func:`estimate_rows` on the whole table with
    ``options.n_jobs`` workers, then one summary. Its rows are returned in
    ``EstimateRun.utterances``; nothing is written."""
    if options.missing_hypotheses == "deletions":
        table = count_missing_as_deletions(table)
    started = time.perf_counter()
    # each distinct string normalised once a run (the command's own cache when it opened one)
    helpers = helper_count(options.n_jobs, len(table))
    with reusing_normalisation(NormalisationCache()) as cache:
        languages = table["language"].dropna().unique() if "language" in table.columns else []
        used, targets = run_targets(
            models,
            options,
            sorted(table["system"].unique()),
            sorted(languages),
            list(table.attrs.get(NO_HYPOTHESES, [])),
            name if name else table,
        )
        if helpers and len(table) <= cache.max_entries:  # every row's hypothesis, normalised
            # with the helper, then read from the cache by the guards' sample and the estimate
            normalised_columns(table, models.normaliser, ("hypothesis",), helpers=helpers)
        pairs, order = sample_and_order(
            table,
            models,
            ranking=options.ranking,
            system_order=options.system_order,
            seed=options.seed,
        )
        context = PipelineContext(
            models,
            targets,
            options.proxy,
            order,
            used,
            [],
            options.chunk_utterances,
            n_jobs=options.n_jobs,
            whole_table=True,
            helpers=helpers,
        )
        result = estimate_rows(table, context)
        records, warnings, compact = combine_results([result], models, used, pairs, options)
    if not (compact["status"] == STATUS_OK).any():
        raise nothing_estimated(compact, name)
    seconds = {"estimate": round(time.perf_counter() - started, 3)}
    return EstimateRun(
        *(records, warnings, result.rows, [], pairs, order),
        n_rows=len(table),
        n_partitions=1,
        seconds=seconds,
    )
