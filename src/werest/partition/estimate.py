"""``werest estimate`` in partitions: the input spilled, the pipeline
(:mod:`werest.estimation.pipeline`) run on each partition, the parts put in place.

A partitioned run holds one input chunk, then one partition, at a time, plus a few numbers
per target row (the whole table, its features and its predictions take about 2.4 GB per
million target rows):

1. **spill**: the input (a Parquet file read by row groups, a folder of Parquet files, or a
   CSV/TSV file read in chunks of ``partitioning.rows`` rows) is validated chunk by chunk
   and split into ``partitioning.count`` Parquet partitions by a stable hash of (dataset,
   utt_id), so every utterance's systems land in one partition
   (:func:`werest.partition.engine.spill`);
2. **global state, computed first and broadcast**: the system names, the languages, and the
   guards' seeded sample of at most 1,000 utterances per dataset (each partition's sample,
   then the sample of their union, which is exactly the sample
   :func:`werest.estimation.guards.sample_pairs` draws from the whole table), and the proxy
   order chosen from it;
3. **per partition** (:func:`estimate_partition`, in recycled child processes or on Dask
   workers, :mod:`werest.partition.cluster`): :func:`werest.estimation.pipeline.
   estimate_rows`, its readable rows written atomically to ``utterances/part-NNNNN.csv``;
4. **combine**: :func:`werest.estimation.pipeline.combine_results`, as in memory.

Memory bound: one input chunk (``partitioning.rows``) while spilling; one partition (the
input rows / ``partitioning.count``, by default ~500,000 rows, with their features: ~2.4 kB
a target row) per worker; one partition's utterance keys while drawing the sample; the
compact frame while summarising, the one term that grows with the input (the summary
stage's peak grew ~175 B per target row from 1M to 10M target rows,
``experiments/results/bench_scale*.md``).

A table in memory is not partitioned: :func:`estimate_input` hands it to
:func:`werest.estimation.pipeline.estimate_frame`. Not supported in partitions (a
ConfigError says so): ``missing_hypotheses=deletions`` and ``ranking=references`` (they
need the whole table), and models using the dataset-level context features ``ctx_*`` (they
would need a second pass); the per-utterance files omit the ``ctx_*`` columns, which the
default model does not use.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from werest.estimation.estimate import (
    input_features,
    nothing_estimated,
)
from werest.estimation.outputs import write_summary
from werest.estimation.pipeline import (
    EstimateOptions,
    EstimateRun,
    PipelineContext,
    PipelineResult,
    combine_results,
    estimate_frame,
    estimate_rows,
    run_targets,
)
from werest.features.agreement import STATUS_OK
from werest.io import atomic_path, write_csv
from werest.model.files import Models
from werest.partition.engine import (
    Partitioning,
    Spill,
    Stages,
    partition_rows,
    stage_input,
)
from werest.partition.global_state import refuse_whole_table_settings, sampled_order

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- one partition


def estimate_partition(
    folder: Path, output: Path | None, context: PipelineContext
) -> PipelineResult:
    """Estimate one partition (:func:`werest.estimation.pipeline.estimate_rows`); its rows go
    to ``output`` (a CSV, written atomically; None: returned in the result)."""
    with partition_rows(folder, context.sources) as table:
        result = estimate_rows(table, context)
    if output is not None and result.rows is not None:
        with atomic_path(output) as tmp:
            write_csv(result.rows, tmp)
        result.rows, result.output = None, Path(output)
    return result


# --------------------------------------------------------------------------- the whole run


def estimate_input(
    source: str | Path | pd.DataFrame,
    models: Models,
    output_dir: str | Path | None = None,
    options: EstimateOptions = EstimateOptions(),
    partitioning: Partitioning = Partitioning(),
    *,
    name: str | Path | None = None,
) -> EstimateRun:
    """``werest estimate`` of an input path in partitions, or of a validated table in memory
    (:func:`werest.estimation.pipeline.estimate_frame`, which writes nothing; ``name`` is its
    file in errors).

    A path is spilled into partitions as ``partitioning`` says, its columns of evidence read
    as numbers (:func:`werest.estimation.estimate.input_features`); their rows go to
    ``output_dir/utterances/part-NNNNN.csv``, put in place at once when every partition is
    done, and the summary to ``output_dir/summary.json``. The global state comes first
    (targets, the guards' sample, the proxy order), then each partition's estimates, then one
    summary (:func:`werest.estimation.pipeline.combine_results`): the records and warnings
    do not depend on the partitioning. ``options`` say what is estimated
    (:class:`~werest.estimation.pipeline.EstimateOptions`).
    """
    if isinstance(source, pd.DataFrame):
        return estimate_frame(source, models, options, name=name)
    refuse_whole_table_settings(models, options.ranking, options.missing_hypotheses)
    output = Path(output_dir) if output_dir is not None else Path.cwd()
    numeric = input_features(models)
    clock = Stages()
    with stage_input(
        source, output, partitioning, final=output / "utterances", numeric=numeric
    ) as run:
        clock.lap("spill")
        spilled = run.spill
        context, pairs = _global_state(spilled, models, options, source)
        clock.lap("sample_and_order")
        results = run.run(estimate_partition, context)
        clock.lap("partitions")
        used = context.normaliser
        records, warnings, compact = combine_results(results, models, used, pairs, options)
        if not (compact["status"] == STATUS_OK).any():
            raise nothing_estimated(compact, source)
        files = run.place(results)
        write_summary(records, output)  # beside its parts
        clock.lap("summary")
    return EstimateRun(
        *(records, warnings, None, files, pairs, context.order),
        n_rows=spilled.n_rows,
        n_partitions=len(results),
        seconds=clock.seconds,
    )


def _global_state(spilled: Spill, models: Models, options: EstimateOptions, source):
    """What every partition needs (the targets, the normaliser, the proxy order chosen from
    the guards' sample of the whole input), and that sample."""
    used, targets = run_targets(
        models, options, spilled.systems, spilled.languages, spilled.no_hypotheses, source
    )
    # with proxy=, the panel's order after the proxy
    pairs, order = sampled_order(spilled, models, options, options.seed)
    context = PipelineContext(
        *(models, targets, options.proxy, order, used, spilled.sources),
        options.chunk_utterances,
        n_jobs=1,
    )
    return context, pairs
