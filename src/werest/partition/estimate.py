"""``werest estimate``'s one orchestrator (:func:`estimate_input`), in memory or in partitions.

An in-memory run (:func:`estimate_table`, ``werest estimate`` on a small input) is the
table as its one partition, run in this process and never written to disk. A partitioned run
holds one input chunk, then one partition, at a time, plus a few numbers per target row (the
whole table, its features and its predictions take about 2.4 GB per million target rows).
Both go through the same steps:

1. **spill** (partitioned only): the input (a Parquet file read by row groups, a folder of
   Parquet files, or a CSV/TSV file read in chunks of ``partitioning.rows`` rows) is
   validated chunk by chunk and split into ``partitioning.count`` Parquet partitions by a
   stable hash of (dataset, utt_id), so every utterance's systems land in one partition
   (:func:`werest.partition.engine.spill`);
2. **global state, computed first and broadcast**: the system names, the languages, and the
   guards' seeded sample of at most 1,000 utterances per dataset (partitioned: each
   partition's sample, then the sample of their union, which is exactly the sample
   :func:`werest.estimation.guards.sample_pairs` draws from the whole table). The label-free
   proxy order (:func:`werest.features.proxy.consensus_order`) is computed from that sample;
3. **per partition** (:func:`estimate_partition`; spilled partitions in recycled child
   processes or on Dask workers, :mod:`werest.partition.cluster`):
   :func:`werest.estimation.estimate.estimate_utterances`, its readable rows written
   atomically to ``utterances/part-NNNNN.csv`` (in memory: returned), and a compact
   per-target-row frame (dataset, system, proxy, status, n̂, proxy words, predictions, a 64-bit
   utterance hash: about 100 bytes a row) with integer sums of the true errors and the
   guards' utterance counts;
4. **combine**: :func:`werest.estimation.estimate.summarise` and the guards on the compact
   frame. Summaries take each (dataset, system)'s utterances in a canonical order (the
   utterance hash), so corpus estimates, bootstrap intervals and proxies do not depend on the
   partitioning.

Memory bound: one input chunk (``partitioning.rows``) while spilling; one partition (the input
rows / ``partitioning.count``, by default ~500,000 rows, with their features: ~2.4 kB a target row)
per worker; one partition's
utterance keys while drawing the sample; the compact frame while summarising, the one term
that grows with the input (the summary stage's peak grew ~175 B per target row from 1M to
10M target rows, ``experiments/results/bench_scale*.md``). The bootstrap resamples one
(prediction·n̂, n̂) pair per utterance: it needs those arrays of one (dataset, system) at a
time.

The partition engine (:mod:`werest.partition.engine`: spilling, reading partitions, the
workspace, atomic placement, the runners and :func:`~werest.partition.engine.stage_input`)
knows nothing of this stage; ``werest score``
(:mod:`werest.partition.score`), ``werest features`` (:mod:`werest.partition.features`) and
``werest leaderboard`` (:mod:`werest.partition.leaderboard`) run on it too.

Not supported in partitions (a ConfigError says so): ``missing_hypotheses=deletions`` and
``ranking=references`` (they need the whole table), and models using the dataset-level
context features ``ctx_*`` (they would need a second pass); the per-utterance files omit the
``ctx_*`` columns, which the default model does not use. In memory the one partition is the
whole table, so all three work.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from werest.errors import ConfigError, unknown_name
from werest.estimation.corpus import corpus_length, scored_rows, truth_from_sums, truth_sums
from werest.estimation.estimate import (
    CHUNK_UTTERANCES,
    REFERENCE_RANKING,
    check_normaliser,
    choose_ranking,
    estimate_utterances,
    input_features,
    nothing_estimated,
    resolve_targets,
    summarise,
)
from werest.estimation.guards import (
    attach_warnings,
    count_missing_as_deletions,
    evidence_found,
    sample_keys,
    sample_pairs,
    unestimated_warnings,
    utterance_counts,
    warnings_from_counts,
)
from werest.estimation.outputs import readable_utterances, write_summary
from werest.features.agreement import CONTEXT_FEATURES, STATUS_OK
from werest.features.proxy import Ranking
from werest.forked import helper_count
from werest.ingest.table import UTTERANCE
from werest.io import atomic_path, write_csv
from werest.model.files import Models
from werest.partition.engine import (
    NORMALISED,
    ROW,
    SOURCE,
    Partitioning,
    Spill,
    Stages,
    concat_compact,
    in_child_process,
    partition_files,
    partition_table,
    read_partition,
    stage_input,
    warn_left_out,
)
from werest.text import (
    Normaliser,
    cached_normalisation,
    normalised_columns,
    reusing_normalisation,
)
from werest.text.scoring import dataset_units, scoring_units, utterance_order

log = logging.getLogger(__name__)

#: What a summary needs of each estimated row (plus ``predicted_*`` and ``_order``).
COMPACT = ["dataset", "system", "proxy", "status", "est_ref_words", "proxy_words"]
#: Its string columns, kept as categories (one Python string per row would not fit at 10M).
CATEGORIES = ("dataset", "system", "proxy", "status")


#: What a system's missing hypothesis for an utterance of its dataset counts as.
MISSING_HYPOTHESES = ("exclude", "deletions")


@dataclass(frozen=True)
class EstimateOptions:
    """What ``werest estimate`` is asked: the section :func:`estimate_input` takes (the
    command builds it from its settings, :func:`werest.estimate` from its arguments).

    Parameters
    ----------
    target : one system, a list, or None (every system but the proxy).
    proxy : one proxy for every target (None: the best other system in the proxy order).
    ranking, system_order : the proxy order (:func:`werest.estimation.estimate.choose_ranking`):
        ``model``, ``references``, a ranking.json, or None (label-free, the systems'
        agreement); the user's own order, best first, before the rest.
    normaliser : the one a user asked for (None: the models' own;
        :func:`werest.estimation.estimate.check_normaliser`).
    seed : the seed of the guards' sample and of the bootstrap intervals.
    n_resamples : bootstrap resamples per interval.
    missing_hypotheses : ``exclude`` (such rows are absent, and a warning says the systems
        are compared on different utterance sets) or ``deletions`` (a system's missing
        hypothesis for an utterance of a dataset it ran on counts as an empty output:
        :func:`werest.estimation.guards.count_missing_as_deletions`).
    chunk_utterances : utterances per processing chunk (a memory bound).
    n_jobs : worker processes of an in-memory run (each partition of a partitioned run takes
        one).
    """

    target: str | list[str] | None = None
    proxy: str | None = None
    ranking: str | Path | None = None
    system_order: list[str] | None = None
    normaliser: Normaliser | None = None
    seed: int = 0
    n_resamples: int = 1000
    missing_hypotheses: str = "exclude"
    chunk_utterances: int = CHUNK_UTTERANCES
    n_jobs: int = 1

    def __post_init__(self) -> None:
        if self.missing_hypotheses not in MISSING_HYPOTHESES:
            raise ConfigError(
                f"missing_hypotheses must be exclude or deletions, got {self.missing_hypotheses!r}"
            )
        if isinstance(self.ranking, Path):  # ``model`` and ``references`` are names
            object.__setattr__(self, "ranking", str(self.ranking))


#: What a cached run's key leaves out: options that change how, not what, is computed.
UNKEYED = ("n_jobs",)


# --------------------------------------------------------------------------- one partition


@dataclass(frozen=True)
class PartitionContext:
    """What every partition needs, sent to each worker once (:mod:`werest.partition.cluster`)."""

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
class PartitionResult:
    """A partition's contribution to the corpus summary (a few numbers per target row)."""

    compact: pd.DataFrame
    truth: pd.DataFrame | None
    units: pd.DataFrame
    counts: pd.DataFrame
    output: Path | None
    #: :func:`werest.estimation.guards.evidence_found` of its rows (the compact rows drop those
    #: columns)
    evidence: dict[str, bool] = field(default_factory=dict)
    #: its readable rows when no ``output`` file was given (an in-memory run's)
    rows: pd.DataFrame | None = None


def estimate_partition(
    folder: Path | pd.DataFrame, output: Path | None, context: PartitionContext
) -> PartitionResult:
    """Estimate one partition; its rows go to ``output`` (a CSV, written atomically; None:
    returned in the result). Strings this process normalised for an earlier partition are
    not normalised again."""
    with reusing_normalisation(NORMALISED):
        table = partition_table(folder, context.sources)
        normaliser = context.normaliser
        units = pd.DataFrame(
            {"dataset": table["dataset"].to_numpy(), "unit": scoring_units(table, normaliser)}
        ).drop_duplicates()
        counts = utterance_counts(table)
        if not table["system"].isin(context.targets).any():
            return PartitionResult(_empty_compact(context.models), None, units, counts, None)
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
    if output is not None:
        with atomic_path(output) as tmp:
            write_csv(readable, tmp)
        readable = None
    predicted = [c for c in utterances.columns if c.startswith("predicted_")]
    compact = utterances[compact_columns(predicted)].assign(_order=utterance_order(utterances))
    # categories: a string read from Parquet is one object per row, ~60 bytes each, which
    # over 10M target rows would make the compact frame several GB instead of ~100 B a row
    compact = compact.astype(dict.fromkeys(CATEGORIES, "category"))
    truth = truth_sums(scored, utterances) if scored is not None else None
    evidence = evidence_found(utterances)
    output = Path(output) if output is not None else None
    return PartitionResult(compact, truth, units, counts, output, evidence, readable)


def compact_columns(predicted: list[str]) -> list[str]:
    """:data:`COMPACT`, the proxy lengths that weigh the ``predicted`` columns in a corpus
    estimate (:func:`werest.estimation.corpus.corpus_length`: ``proxy_chars`` for a CER model) and
    the predictions."""
    lengths = {corpus_length(column) for column in predicted} - set(COMPACT)
    return [*COMPACT, *sorted(lengths), *predicted]


def _empty_compact(models: Models) -> pd.DataFrame:
    predicted = [f"predicted_{target}" for target in models.targets]
    return pd.DataFrame(columns=[*compact_columns(predicted), "_order"])


# --------------------------------------------------------------------------- the whole run


@dataclass
class EstimateRun:
    """The outputs of :func:`estimate_input`."""

    records: list[dict]
    warnings: list[dict]
    #: an in-memory run's per-utterance rows (``utterances.csv``); None when partitioned
    utterances: pd.DataFrame | None
    #: a partitioned run's ``utterances/part-NNNNN.csv``
    utterance_files: list[Path]
    pairs: pd.DataFrame
    order: Ranking | list[str] | None
    n_rows: int
    n_partitions: int
    seconds: dict[str, float]


def estimate_input(
    source: str | Path | pd.DataFrame,
    models: Models,
    output_dir: str | Path | None = None,
    options: EstimateOptions = EstimateOptions(),
    partitioning: Partitioning = Partitioning(),
    *,
    name: str | Path | None = None,
) -> EstimateRun:
    """``werest estimate``: the one orchestrator, in memory or in partitions.

    ``source`` is a validated table (an in-memory run: the table is its one partition, run
    in this process with ``options.n_jobs`` workers, and its rows are returned in
    ``EstimateRun.utterances``; ``name`` is its file in errors) or an input path (spilled into
    partitions as ``partitioning`` says, its columns of evidence read as numbers
    (:func:`werest.estimation.estimate.input_features`); their rows go to
    ``output_dir/utterances/part-NNNNN.csv``, put in place at once when every partition is
    done). Either way the global state comes first (targets, the guards' sample, the proxy
    order), then each partition's estimates, then one summary (:func:`_combine`): the records
    and warnings do not depend on the partitioning. ``options`` say what is estimated
    (:class:`EstimateOptions`). A partitioned run also writes ``output_dir/summary.json``; an
    in-memory one writes nothing.
    """
    in_memory = isinstance(source, pd.DataFrame)
    if not in_memory:
        refuse_whole_table_settings(models, options.ranking, options.missing_hypotheses)
    elif options.missing_hypotheses == "deletions":
        source = count_missing_as_deletions(source)
    output = Path(output_dir) if output_dir is not None else Path.cwd()
    final = None if in_memory else output / "utterances"
    numeric = input_features(models)
    clock = Stages()
    with stage_input(source, output, partitioning, final=final, numeric=numeric) as run:
        clock.lap("spill")
        spilled = run.spill
        systems = pd.DataFrame({"system": spilled.systems})
        languages = pd.DataFrame({"language": spilled.languages})
        used = check_normaliser(models, options.normaliser, languages)
        proxy = options.proxy
        targets = resolve_targets(systems, options.target, proxy, spilled.no_hypotheses)
        if proxy is not None and proxy not in spilled.systems:
            raise unknown_name("proxy system", proxy, spilled.systems, "systems")
        warn_left_out(spilled, name if run.in_memory and name else source)
        helpers = helper_count(options.n_jobs, spilled.n_rows) if run.in_memory else 0
        with reusing_normalisation(NORMALISED) as cache:
            if helpers and spilled.n_rows <= cache.max_entries:  # every row's hypothesis,
                # normalised with the helper, then read by the guards' sample and the estimate
                table = spilled.partitions[0]
                normalised_columns(table, models.normaliser, ("hypothesis",), helpers=helpers)
            pairs, order = sampled_order(  # with proxy=, the panel's order after the proxy
                spilled,
                models,
                ranking=options.ranking,
                system_order=options.system_order,
                seed=options.seed,
            )
        clock.lap("sample_and_order")
        context = PartitionContext(
            models,
            targets,
            proxy,
            order,
            used,
            spilled.sources,
            options.chunk_utterances,
            n_jobs=options.n_jobs if run.in_memory else 1,
            whole_table=run.in_memory,
            helpers=helpers,
        )
        results = run.run(estimate_partition, context)
        clock.lap("partitions")
        records, warnings, compact = _combine(results, models, used, pairs, options)
        if not (compact["status"] == STATUS_OK).any():
            raise nothing_estimated(compact, name if run.in_memory else source)
        files = run.place(results)
        if not run.in_memory:  # beside its parts (in memory, the caller writes every file)
            write_summary(records, output)
        clock.lap("summary")
    return EstimateRun(
        records,
        warnings,
        results[0].rows if run.in_memory else None,
        files,
        pairs,
        order,
        spilled.n_rows,
        len(results),
        clock.seconds,
    )


def estimate_table(
    table: pd.DataFrame,
    models: Models,
    options: EstimateOptions = EstimateOptions(),
    *,
    source: str | Path | None = None,
    cache_dir: str | Path | None = None,
) -> tuple[pd.DataFrame, list[dict], list[dict]]:
    """:func:`estimate_input` of a validated table (its one partition, in memory):
    (utterance rows, summary records, warnings). ``source`` names the input in errors;
    ``cache_dir`` keeps the run by content (:func:`estimate_cached`). No file is written
    (:mod:`werest.cli.commands.estimate` writes them)."""
    run = estimate_cached(table, models, None, options, cache_dir=cache_dir, name=source)
    return run.utterances, run.records, run.warnings


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
    spilled: Spill,
    models: Models,
    *,
    ranking: str | Path | None,
    system_order: list[str] | None,
    seed: int,
) -> tuple[pd.DataFrame, Ranking]:
    """The guards' sample of pairs of the whole input
    (:func:`werest.estimation.guards.sample_pairs`: of the table itself in memory, else drawn
    from its partitions, :func:`sample_pairs_partitioned`) and the proxy order chosen from it
    (:func:`werest.estimation.estimate.choose_ranking`; ``ranking=references`` reads the
    table, so it works in memory only)."""
    if spilled.root is None:
        whole = spilled.partitions[0]
        pairs = sample_pairs(whole, normaliser=models.normaliser, seed=seed)
    else:
        whole = pd.DataFrame({"system": spilled.systems})
        pairs = sample_pairs_partitioned(
            spilled.partitions, normaliser=models.normaliser, seed=seed
        )
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


def _combine(results, models, normaliser, pairs, options: EstimateOptions):
    """The summary records, warnings and compact rows of all partitions."""
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


def total_counts(results: list[PartitionResult]) -> pd.DataFrame:
    """:func:`werest.estimation.guards.utterance_counts` of the whole input: partitions hold
    disjoint
    utterances, so their counts add up."""
    counts = pd.concat([r.counts for r in results], ignore_index=True)
    summed = [column for column in ("n", "empty") if column in counts]
    per_system = counts.groupby(["dataset", "system"], as_index=False)[summed].sum()
    totals = [r.counts.drop_duplicates("dataset").set_index("dataset")["total"] for r in results]
    total = pd.concat(totals).groupby(level=0).sum()
    return per_system.assign(total=per_system["dataset"].map(total).to_numpy())


def estimate_cached(
    table: pd.DataFrame,
    models: Models,
    output_dir: str | Path | None = None,
    options: EstimateOptions = EstimateOptions(),
    *,
    cache_dir: str | Path | None = None,
    name: str | Path | None = None,
) -> EstimateRun:
    """:func:`estimate_input` of a table in memory, kept by content in ``cache_dir`` (None: no
    cache): the same table, models and options give back the stored records, warnings and
    utterance rows, so each round of the label loop (``werest sample`` then ``werest
    estimate labels=``) estimates the table once. A stored run that cannot be read is
    recomputed."""
    if cache_dir is None:
        return estimate_input(table, models, output_dir, options, name=name)
    folder = Path(cache_dir) / run_key(table, models, options)
    if (folder / "records.json").exists():
        try:
            return _cached_run(folder, len(table))
        except (OSError, ValueError) as error:
            log.info("estimate cache %s unreadable (%s): recomputed", folder, error)
    run = estimate_input(table, models, output_dir, options, name=name)
    _store(run, folder)
    return run


def run_key(table: pd.DataFrame, models: Models, options: EstimateOptions) -> str:
    """A content hash of what an in-memory estimate depends on: the table's rows, each
    model's file (its card's sha256), the options that change results (all but
    :data:`UNKEYED`) and werest's version."""
    import hashlib
    import json
    from dataclasses import asdict

    from werest import __version__

    digest = hashlib.sha256()
    digest.update(pd.util.hash_pandas_object(table, index=False).to_numpy().tobytes())
    digest.update(",".join(map(str, table.columns)).encode())
    for target, model in models:
        card = model.info.get("sha256") or json.dumps(model.info, sort_keys=True, default=str)
        digest.update(f"{target}:{card}".encode())
    kept = {k: v for k, v in asdict(options).items() if k not in UNKEYED}
    digest.update(json.dumps(kept, sort_keys=True, default=str).encode())
    digest.update(__version__.encode())
    return digest.hexdigest()[:32]


def _cached_run(folder: Path, n_rows: int) -> EstimateRun:
    import json

    records = json.loads((folder / "records.json").read_text(encoding="utf-8"))
    warnings = json.loads((folder / "warnings.json").read_text(encoding="utf-8"))
    utterances = pd.read_parquet(folder / "utterances.parquet")
    empty = pd.DataFrame()
    return EstimateRun(records, warnings, utterances, [], empty, None, n_rows, 1, {"cache": 0.0})


def _store(run: EstimateRun, folder: Path) -> None:
    """The run's records, warnings and rows in ``folder``, put in place whole (a failure to
    store leaves no cache entry and does not fail the run)."""
    import shutil
    import tempfile

    from werest.io import unrecorded, write_json

    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=folder.parent))
    try:
        with unrecorded():  # a cache entry, not one of the command's outputs
            run.utterances.to_parquet(staging / "utterances.parquet")
            write_json(run.warnings, staging / "warnings.json")
            write_json(run.records, staging / "records.json")
        staging.rename(folder)
    except (OSError, ValueError, TypeError) as error:  # pyarrow's errors are ValueErrors
        log.info("estimate cache not stored (%s)", error)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
