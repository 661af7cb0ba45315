"""Bounded-memory ``werest estimate``: the input in hash partitions, never whole in memory.

The in-memory run (:func:`werest.estimation.estimate.estimate_table`) holds the table, its features
and
its predictions at once: about 2.4 GB per million target rows. This engine holds one input
chunk, then one partition, at a time, plus a few numbers per target row:

1. **spill**: the input (a Parquet file read by row groups, a folder of Parquet files, or a
   CSV/TSV file read in chunks of ``chunk_rows`` rows) is validated chunk by chunk and split
   into ``n_partitions`` Parquet partitions by a stable hash of (dataset, utt_id), so every
   utterance's systems land in one partition (:func:`spill`);
2. **global state, computed first and broadcast**: the system names, the languages, and the
   guards' seeded sample of at most 1,000 utterances per dataset: each partition's sample,
   then the sample of their union, which is exactly the sample
   :func:`werest.estimation.guards.sample_pairs` draws from the whole table. The label-free proxy
   order (:func:`werest.features.proxy.consensus_order`) is computed from that sample, so it equals
   the in-memory run's;
3. **per partition** (:func:`estimate_partition`, in recycled child processes,
   :func:`child_process_runner`, or on Dask workers, :mod:`werest.partition.cluster`): the same
   :func:`werest.estimation.estimate.estimate_utterances` as the
   in-memory run, its rows written atomically to ``utterances/part-NNNNN.csv``, and a
   compact per-target-row frame returned (dataset, system, proxy, status, n̂, proxy words,
   predictions, a 64-bit utterance hash: about 100 bytes a row) with integer sums of the true
   errors and the guards' utterance counts;
4. **combine**: the same :func:`werest.estimation.estimate.summarise` and guards on the compact
frame.
   Summaries take each (dataset, system)'s utterances in a canonical order (the utterance
   hash), so corpus estimates, bootstrap intervals and proxies are identical to the
   in-memory run's, not merely close.

Memory bound: one input chunk (``chunk_rows`` rows) while spilling; one partition (the input
rows / ``n_partitions``, by default ~500,000 rows, with their features: ~2.4 kB a target row)
per worker; one partition's
utterance keys while drawing the sample; the compact frame while summarising, the one term
that grows with the input (the summary stage's peak grew ~175 B per target row from 1M to
10M target rows, ``experiments/results/bench_scale*.md``). The bootstrap resamples one
(prediction·n̂, n̂) pair per utterance: it needs those arrays of one (dataset, system) at a
time.

The same engine (:func:`spill_input`, :func:`partition_table`, :func:`workspace`,
:func:`put_in_place`, a :data:`PartitionRunner`) runs ``werest score``
(:mod:`werest.partition.score`), ``werest features`` (:mod:`werest.partition.features`)
and ``werest leaderboard`` (:mod:`werest.partition.leaderboard`).

Not supported here (a ConfigError says so): ``missing_hypotheses=deletions`` and
``ranking=references`` (they need the whole table), and models using the dataset-level
context features ``ctx_*`` (they would need a second pass); the per-utterance files omit the
``ctx_*`` columns, which the default model does not use.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from pandas.api.types import union_categoricals
from tqdm.auto import tqdm

from werest import logs
from werest.errors import ConfigError, InputError
from werest.estimation.estimate import (
    KEY,
    REFERENCE_RANKING,
    UTTERANCE,
    check_normaliser,
    choose_ranking,
    corpus_length,
    estimate_utterances,
    nothing_estimated,
    readable_utterances,
    resolve_targets,
    scored_rows,
    summarise,
    truth_from_sums,
    truth_sums,
    write_summary,
)
from werest.estimation.guards import (
    attach_warnings,
    evidence_found,
    sample_keys,
    sample_pairs,
    unestimated_warnings,
    utterance_counts,
    warnings_from_counts,
)
from werest.features.agreement import CONTEXT_FEATURES, STATUS_OK
from werest.features.proxy import Ranking
from werest.ingest.table import (
    CSV_SUFFIXES,
    check_not_utf16,
    resolve_audio,
    table_format,
    validate_table,
)
from werest.io import atomic_path, record_write, write_csv
from werest.model.files import Models
from werest.text import NormalisationCache, Normaliser, cached_normalisation
from werest.text.scoring import dataset_units, scoring_units, utterance_order

log = logging.getLogger(__name__)

#: The columns a partition carries besides the table's: the input file and row of each row.
SOURCE, ROW = "_source", "_row"
#: What a summary needs of each estimated row (plus ``predicted_*`` and ``_order``).
COMPACT = ["dataset", "system", "proxy", "status", "est_ref_words", "proxy_words"]
#: Its string columns, kept as categories (one Python string per row would not fit at 10M).
CATEGORIES = ("dataset", "system", "proxy", "status")
#: Inputs at least this large are estimated in partitions when ``partition.rows`` is unset.
AUTO_BYTES = 1_000_000_000
DEFAULT_CHUNK_ROWS = 1_000_000
#: ``n_partitions=None``: one partition per this many input rows (at least ``MIN_PARTITIONS``),
#: about 330 MB of rows and features in memory each, whatever the input's size.
ROWS_PER_PARTITION = 500_000
MIN_PARTITIONS = 16


# --------------------------------------------------------------------------- reading


def input_files(path: str | Path) -> list[Path]:
    """The table files of ``path``: itself, or a folder's Parquet files (a Parquet dataset,
    e.g. hive-partitioned ``dataset=x/part-0.parquet``), in name order."""
    path = Path(path)
    if not path.exists():
        raise InputError("no such file or folder", path=path)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.parquet") if not p.name.startswith((".", "_")))
        if not files:
            raise InputError("the folder holds no .parquet file", path=path)
        return files
    if table_format(path) == "jsonl":
        raise ConfigError(
            f"{path}: partitioned runs read Parquet or CSV/TSV; convert the JSON Lines table "
            "(werest import or pandas), or unset partition.rows"
        )
    return [path]


def read_chunks(
    path: str | Path, *, chunk_rows: int, numeric: tuple[str, ...] = ()
) -> Iterator[tuple[int, pd.DataFrame]]:
    """Validated chunks of at most ``chunk_rows`` rows: ``(file index, frame)`` with the
    input row of each row in ``_row`` (counted from 1 in its file, as errors name it)."""
    root = Path(path)
    for index, file in enumerate(input_files(root)):
        offset = 0
        for frame in _raw_chunks(file, chunk_rows):
            frame = _with_hive_columns(frame, file, root)
            rows = list(range(offset + 1, offset + len(frame) + 1))
            offset += len(frame)
            if frame.empty:
                continue
            frame[ROW] = np.asarray(rows, dtype=np.int64)
            table = validate_table(frame, source=file, line_of=rows, numeric=numeric)
            yield index, resolve_audio(table, file.parent)


def automatic_partitions(path: str | Path) -> int:
    """The partition count that keeps each partition near ``ROWS_PER_PARTITION`` input rows:
    Parquet files are counted from their footers, CSV/TSV files estimated from their size and
    the length of their first lines (a bound, not an exact count)."""
    rows = sum(_approximate_rows(file) for file in input_files(path))
    return max(MIN_PARTITIONS, -(-rows // ROWS_PER_PARTITION))


def _approximate_rows(file: Path) -> int:
    if table_format(file) == "parquet":
        try:
            return pq.ParquetFile(file).metadata.num_rows
        except (pa.ArrowException, OSError):
            return 0  # reading it says what is wrong, with the file's name
    size = file.stat().st_size
    with file.open("rb") as handle:
        head = handle.read(4_000_000)
    return int(size * max(head.count(b"\n"), 1) / max(len(head), 1))


def _raw_chunks(file: Path, chunk_rows: int) -> Iterator[pd.DataFrame]:
    if table_format(file) == "parquet":
        try:
            reader = pq.ParquetFile(file)
            for batch in reader.iter_batches(batch_size=chunk_rows):
                yield batch.to_pandas()
        except (pa.ArrowException, OSError) as error:
            message = " ".join(str(error).split())
            raise InputError(f"not a readable Parquet file: {message}", path=file) from None
        return
    with open(file, "rb") as handle:
        check_not_utf16(handle.read(4), file)
    try:
        yield from pd.read_csv(
            file,
            sep=CSV_SUFFIXES[file.suffix.lower()],
            dtype=str,
            keep_default_na=False,
            na_filter=False,
            index_col=False,
            encoding="utf-8-sig",
            chunksize=chunk_rows,
        )
    except UnicodeDecodeError as error:
        raise InputError(
            f"not valid UTF-8 ({error.reason}); werest reads UTF-8 only: re-encode the file, "
            "e.g. iconv -f latin1 -t utf-8",
            path=file,
        ) from None
    except (pd.errors.ParserError, ValueError) as error:
        message = " ".join(str(error).split())
        raise InputError(f"not a well-formed table: {message}", path=file) from None


def _with_hive_columns(frame: pd.DataFrame, file: Path, root: Path) -> pd.DataFrame:
    """Columns named by ``key=value`` folders between ``root`` and ``file`` (a Parquet
    dataset partitioned by dataset keeps ``dataset`` in the folder name, not in the file)."""
    if file == root:
        return frame
    for part in file.relative_to(root).parts[:-1]:
        key, sep, value = part.partition("=")
        if sep and key not in frame.columns:
            frame[key] = value
    return frame


# --------------------------------------------------------------------------- spilling


@dataclass(frozen=True)
class Spill:
    """The input split into utterance-hash partitions on disk, and what it says globally."""

    root: Path
    partitions: list[Path]
    sources: list[str]
    systems: list[str]
    languages: list[str]
    n_rows: int
    datasets: list[str] = field(default_factory=list)  # the whole input's, before ``select``


#: ``select(chunk) -> rows``: the rows of a validated chunk a run keeps (e.g. some datasets).
RowSelection = Callable[[pd.DataFrame], pd.DataFrame]


def partition_of(frame: pd.DataFrame, n_partitions: int) -> np.ndarray:
    """A stable partition number of each row's (dataset, utt_id): the same in every process
    and run, so an utterance's systems always meet in one partition."""
    hashed = pd.util.hash_pandas_object(frame[UTTERANCE].astype(object), index=False)
    return (hashed.to_numpy() % np.uint64(n_partitions)).astype(np.int64)


def spill(
    path: str | Path,
    root: str | Path,
    *,
    chunk_rows: int,
    n_partitions: int,
    numeric: tuple[str, ...] = (),
    select: RowSelection | None = None,
) -> Spill:
    """Read ``path`` chunk by chunk into ``root/p-NNNNN/`` Parquet partitions, keeping the
    rows ``select`` keeps (None: all; a selection that keeps none gives no partition: the
    caller says why, with ``Spill.datasets``)."""
    root = Path(root)
    systems: set[str] = set()
    languages: set[str] = set()
    datasets: set[str] = set()
    n_rows = n_read = 0
    chunks = read_chunks(path, chunk_rows=chunk_rows, numeric=numeric)
    for number, (source, chunk) in enumerate(chunks):
        datasets.update(chunk["dataset"].unique())
        n_read += len(chunk)
        if select is not None:
            chunk = select(chunk)
        chunk[SOURCE] = source
        systems.update(chunk["system"].unique())
        if "language" in chunk.columns:
            languages.update(chunk["language"].dropna().unique())
        n_rows += len(chunk)
        for part, rows in chunk.groupby(partition_of(chunk, n_partitions), sort=True):
            folder = root / f"p-{part:05d}"
            folder.mkdir(parents=True, exist_ok=True)
            rows.to_parquet(folder / f"chunk-{number:06d}.parquet", index=False)
    if n_read == 0:
        raise InputError("the input has no rows", path=path)
    return Spill(
        root=root,
        partitions=sorted(root.glob("p-*")),
        sources=[str(f) for f in input_files(path)],
        systems=sorted(systems),
        languages=sorted(languages),
        n_rows=n_rows,
        datasets=sorted(datasets),
    )


def spill_input(
    path: str | Path,
    scratch: Path,
    chunk_rows: int,
    n_partitions: int | None,
    numeric: tuple[str, ...] = (),
    select: RowSelection | None = None,
) -> Spill:
    """:func:`spill` ``path`` into ``scratch/input``, in ``n_partitions`` partitions (None:
    as many as the input's size asks, :func:`automatic_partitions`).

    The spill runs in a child process (:func:`in_child_process`), whose memory goes back to
    the system when the spill ends: reading 10M target rows chunk by chunk peaked at ~2 GB
    (``experiments/results/bench_scale_10m*.md``, the spill stage), a heap the driver would
    otherwise keep, fragmented, for the rest of the run."""
    if n_partitions is None:
        n_partitions = automatic_partitions(path)
    return in_child_process(
        spill,
        path,
        scratch / "input",
        chunk_rows=chunk_rows,
        n_partitions=n_partitions,
        numeric=numeric,
        select=select,
    )


def read_partition(folder: Path, columns: list[str] | None = None) -> pd.DataFrame:
    """One partition's rows in input order (file, then row)."""
    parts = [pd.read_parquet(file, columns=columns) for file in _files(folder)]
    frame = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    if columns is None or {SOURCE, ROW} <= set(columns):
        frame = frame.sort_values([SOURCE, ROW], kind="stable", ignore_index=True)
    return frame


def partition_table(folder: Path, sources: list[str]) -> pd.DataFrame:
    """One partition's rows as a transcripts table, in input order (a key given twice is an
    InputError naming both places): what the in-memory run would have read."""
    part = read_partition(Path(folder))
    _check_unique(part, sources)
    return part.drop(columns=[SOURCE, ROW])


def _check_unique(frame: pd.DataFrame, sources: list[str]) -> None:
    """A (dataset, utt_id, system) given twice, named by its second file and row (the
    chunks were validated one by one; duplicates across chunks meet here)."""
    duplicated = frame.duplicated(KEY, keep="first").to_numpy()
    if duplicated.any():
        row = frame.iloc[int(np.flatnonzero(duplicated)[0])]
        key = tuple(row[KEY])
        first = frame[(frame[KEY] == row[KEY]).all(axis=1)].iloc[0]
        seen = f"row {first[ROW]}" + (
            f" of {sources[int(first[SOURCE])]}" if first[SOURCE] != row[SOURCE] else ""
        )
        raise InputError(
            f"duplicate (dataset, utt_id, system) = {key}, first seen at {seen}",
            path=sources[int(row[SOURCE])],
            row=int(row[ROW]),
            column="utt_id",
        )


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


#: Normalised strings kept by this process across the partitions it estimates.
NORMALISED = NormalisationCache()


def estimate_partition(folder: Path, output: Path, context: PartitionContext) -> PartitionResult:
    """Estimate one partition; its rows go to ``output`` (a CSV, written atomically).
    Strings this process normalised for an earlier partition are not normalised again."""
    with cached_normalisation(NORMALISED):
        return _estimate_partition(folder, output, context)


def _estimate_partition(folder: Path, output: Path, context: PartitionContext) -> PartitionResult:
    table = partition_table(Path(folder), context.sources)
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
    ).drop(columns=list(CONTEXT_FEATURES))
    scored = scored_rows(table, utterances, normaliser)
    readable = readable_utterances(utterances, table, normaliser, scored)
    with atomic_path(output) as tmp:
        write_csv(readable, tmp)
    predicted = [c for c in utterances.columns if c.startswith("predicted_")]
    compact = utterances[compact_columns(predicted)].assign(_order=utterance_order(utterances))
    # categories: a string read from Parquet is one object per row, ~60 bytes each, which
    # over 10M target rows would make the compact frame several GB instead of ~100 B a row
    compact = compact.astype(dict.fromkeys(CATEGORIES, "category"))
    truth = truth_sums(scored, utterances) if scored is not None else None
    evidence = evidence_found(utterances)
    return PartitionResult(compact, truth, units, counts, Path(output), evidence)


def compact_columns(predicted: list[str]) -> list[str]:
    """:data:`COMPACT`, the proxy lengths that weigh the ``predicted`` columns in a corpus
    estimate (:func:`werest.estimation.estimate.corpus_length`: ``proxy_chars`` for a CER model) and
    the predictions."""
    lengths = {corpus_length(column) for column in predicted} - set(COMPACT)
    return [*COMPACT, *sorted(lengths), *predicted]


def _empty_compact(models: Models) -> pd.DataFrame:
    predicted = [f"predicted_{target}" for target in models.targets]
    return pd.DataFrame(columns=[*compact_columns(predicted), "_order"])


# --------------------------------------------------------------------------- the whole run

#: ``run_partitions(function, folders, outputs, context)`` -> results in folder order:
#: ``function(folder, output, context)`` for each partition, where ``context`` is what every
#: partition needs (:class:`PartitionContext` here, ``ScoreContext`` for ``werest score``...)
#: and ``output`` the file it writes (None: it writes nothing).
PartitionRunner = Callable[[Callable, list[Path], list, Any], list]


def run_locally(function, folders, outputs, context) -> list:
    """Partitions one after another in this process."""
    pairs = zip(folders, outputs, strict=True)
    progress = tqdm(pairs, total=len(folders), desc="partitions", unit="partition", disable=None)
    return [function(folder, output, context) for folder, output in progress]


#: Partitions a child process estimates before it is replaced (:func:`child_process_runner`).
PARTITIONS_PER_PROCESS = 8
#: The context of the partitions this process runs as a child (set once, by its initializer).
_CHILD_CONTEXT: Any = None


def _receive_context(context: Any, log_level: int) -> None:
    global _CHILD_CONTEXT
    _CHILD_CONTEXT = context
    logs.setup(log_level)


def _run_in_child(function, folder: Path, output: Path):
    return function(folder, output, _CHILD_CONTEXT)


def child_process_runner(per_process: int = PARTITIONS_PER_PROCESS) -> PartitionRunner:
    """A ``run_partitions`` that runs the partitions one at a time in a child process, which
    is replaced by a fresh one after ``per_process`` partitions.

    Why: a long-lived process that estimates partition after partition grows by ~40 MB per
    partition that no Python or Arrow pool accounts for (heap fragmentation: the memory is
    free but cannot go back to the system), so 75 partitions in one process added ~3 GB. A
    replaced child gives all of it back. Each child is started with ``spawn`` (no copy of
    this process's heap, no fork of its threads) and receives the context (models, proxy
    order, targets) once. A partition that raises stops the run with its error; a child that
    dies is a ``BrokenProcessPool``. (One executor per batch, not ``max_tasks_per_child``:
    on Python 3.11 that option can hang the pool when a child retires.)
    """

    def run(function, folders: list[Path], outputs: list[Path], context: Any):
        spawn = multiprocessing.get_context("spawn")
        pairs = list(zip(folders, outputs, strict=True))
        results = []
        with tqdm(total=len(pairs), desc="partitions", unit="partition", disable=None) as bar:
            for start in range(0, len(pairs), per_process):
                with ProcessPoolExecutor(
                    max_workers=1,
                    mp_context=spawn,
                    initializer=_receive_context,
                    initargs=(context, logs.current_level()),
                ) as pool:
                    for folder, output in pairs[start : start + per_process]:
                        results.append(
                            pool.submit(_run_in_child, function, folder, output).result()
                        )
                        bar.update()
        return results

    return run


def local_runner(per_process: int | None = PARTITIONS_PER_PROCESS) -> PartitionRunner:
    """How partitions run without a cluster: in recycled child processes
    (:func:`child_process_runner`), or in this process when ``per_process`` is 0."""
    if per_process is None:
        per_process = PARTITIONS_PER_PROCESS
    return child_process_runner(per_process) if per_process > 0 else run_locally


@dataclass
class PartitionedEstimate:
    """The outputs of :func:`estimate_partitioned` (records and warnings as in-memory)."""

    records: list[dict]
    warnings: list[dict]
    utterance_files: list[Path]
    pairs: pd.DataFrame
    order: Ranking | list[str] | None
    n_rows: int
    n_partitions: int
    seconds: dict[str, float]


def estimate_partitioned(
    path: str | Path,
    models: Models,
    output_dir: str | Path,
    *,
    target=None,
    proxy: str | None = None,
    ranking: str | Path | None = None,
    system_order: list[str] | None = None,
    normaliser: Normaliser | None = None,
    seed: int = 0,
    n_resamples: int = 1000,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    n_partitions: int | None = None,
    chunk_utterances: int = 50_000,
    missing_hypotheses: str = "exclude",
    numeric: tuple[str, ...] = (),
    work_dir: str | Path | None = None,
    run_partitions: PartitionRunner = run_locally,
) -> PartitionedEstimate:
    """``werest estimate`` in bounded memory: the same summary as the in-memory run.

    Writes ``output_dir/utterances/part-NNNNN.csv`` (all of them put in place at once, by
    renaming a finished folder) and ``output_dir/summary.json``; the caller writes the rest.
    ``run_partitions`` maps :func:`estimate_partition` over the partitions
    (:func:`run_locally`, or :func:`werest.partition.cluster.dask_runner`); ``work_dir`` holds the
    spilled partitions (a temporary folder beside ``output_dir`` by default; on a cluster it
    must be a folder every worker can read). ``n_partitions=None`` chooses the count from
    the input's size (:func:`automatic_partitions`).
    """
    refuse_whole_table_settings(models, ranking, missing_hypotheses)
    output_dir = Path(output_dir)
    clock = Stages()
    with workspace(output_dir / "utterances", output_dir, work_dir) as (scratch, staging):
        spilled = spill_input(path, scratch, chunk_rows, n_partitions, numeric)
        clock.lap("spill")
        systems = pd.DataFrame({"system": spilled.systems})
        used = check_normaliser(models, normaliser, pd.DataFrame({"language": spilled.languages}))
        targets = resolve_targets(systems, target, proxy)
        if proxy is not None and proxy not in spilled.systems:
            raise ConfigError(f"proxy system {proxy!r} is not in the input")
        pairs = sample_pairs_partitioned(spilled.partitions, normaliser=used, seed=seed)
        order = choose_ranking(  # with proxy=, the panel's order after the proxy
            models, systems, ranking=ranking, system_order=system_order, pairs=pairs
        )
        clock.lap("sample_and_order")
        context = PartitionContext(
            models, targets, proxy, order, used, spilled.sources, chunk_utterances
        )
        outputs = [staging / f"part-{i:05d}.csv" for i in range(len(spilled.partitions))]
        results = run_partitions(estimate_partition, spilled.partitions, outputs, context)
        clock.lap("partitions")
        records, warnings, compact = _combine(results, models, used, pairs, n_resamples, seed)
        if not (compact["status"] == STATUS_OK).any():
            raise nothing_estimated(compact, path)
        files = put_in_place(staging, output_dir / "utterances", results)
        write_summary(records, output_dir)
        clock.lap("summary")
    return PartitionedEstimate(
        records,
        warnings,
        files,
        pairs,
        order,
        spilled.n_rows,
        len(spilled.partitions),
        clock.seconds,
    )


class Stages:
    """Wall seconds of each stage of a run (``PartitionedEstimate.seconds``)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.seconds[stage] = round(now - self._last, 3)
        self._last = now


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


def in_child_process(function: Callable, /, *args, **kwargs):
    """``function(*args, **kwargs)`` in a fresh spawned process, its result sent back; the
    memory the child used goes back to the system when it exits. An error is raised here,
    as ``function`` raised it; the child logs at this process's level."""
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        max_workers=1, mp_context=spawn, initializer=logs.setup, initargs=(logs.current_level(),)
    ) as pool:
        return pool.submit(function, *args, **kwargs).result()


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
    parts = [pd.read_parquet(f, filters=[("utt_id", "in", ids)]) for f in _files(folder)]
    return pd.concat(parts, ignore_index=True).merge(sample, on=UTTERANCE)


def _files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.parquet"))


def concat_compact(
    frames: list[pd.DataFrame], categories: tuple[str, ...] = CATEGORIES
) -> pd.DataFrame:
    """The partitions' compact rows in one frame whose string columns (``categories``) stay
    categories (with the union of the categories, sorted, so groups come in the in-memory
    run's order): concatenating differing categories would give one Python string per row,
    several GB at 10M target rows."""
    frames = [f for f in frames if len(f)] or frames[:1]  # an empty one adds no row
    compact = pd.concat([f.drop(columns=list(categories)) for f in frames], ignore_index=True)
    for column in categories:
        parts = [f[column].astype("category") for f in frames]
        compact[column] = union_categoricals(parts, sort_categories=True, ignore_order=True)
    return compact[list(frames[0].columns)]


def _combine(results, models, normaliser, pairs, n_resamples, seed):
    """The summary records, warnings and compact rows of all partitions."""
    compact = concat_compact([r.compact for r in results])
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
        n_resamples=n_resamples,
        seed=seed,
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
    per_system = counts.groupby(["dataset", "system"], as_index=False)["n"].sum()
    totals = [r.counts.drop_duplicates("dataset").set_index("dataset")["total"] for r in results]
    total = pd.concat(totals).groupby(level=0).sum()
    return per_system.assign(total=per_system["dataset"].map(total).to_numpy())


@contextmanager
def workspace(
    final: Path, output: Path, work_dir: str | Path | None = None
) -> Iterator[tuple[Path, Path]]:
    """The temporary folders of a partitioned run that writes the folder ``final``:
    ``(scratch, staging)``. ``scratch`` holds the spilled input, in ``work_dir`` (on a
    cluster, a folder every worker reads), else beside ``output``; ``staging`` is beside
    ``final`` (one file system, so :func:`put_in_place` renames it into place). Both are
    removed whatever happens: a failed run leaves nothing half-written, not even the output
    folder it created."""
    created = not final.parent.exists()
    with scratch_folder(output, work_dir) as scratch:
        staging = None
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=final.parent))
            yield scratch, staging
        except BaseException:
            if staging is not None:
                shutil.rmtree(staging, ignore_errors=True)
            if created and final.parent.is_dir() and not any(final.parent.iterdir()):
                final.parent.rmdir()
            raise
        finally:
            if staging is not None:
                shutil.rmtree(staging, ignore_errors=True)


@contextmanager
def scratch_folder(output: Path, work_dir: str | Path | None = None) -> Iterator[Path]:
    """A temporary folder for the spilled input, in ``work_dir`` (on a cluster, a folder
    every worker reads), else beside ``output``; removed whatever happens. (A run that
    writes no partitioned output needs only this, not :func:`workspace`.)"""
    parent = Path(work_dir) if work_dir else Path(output).parent
    parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".werest-partitions-", dir=parent))
    try:
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def put_in_place(staging: Path, final: Path, results: list) -> list[Path]:
    """Rename the finished ``staging`` folder to ``final`` (a previous file or folder there
    is replaced); returns the files of the results that wrote one (their ``output``)."""
    for stale in staging.glob(".*"):
        stale.unlink()
    final.parent.mkdir(parents=True, exist_ok=True)
    if final.is_file():
        final.unlink()
    elif final.exists():
        old = final.with_name(f".{final.name}.old-{os.getpid()}")
        os.replace(final, old)
        shutil.rmtree(old, ignore_errors=True)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(staging, 0o777 & ~umask)  # mkdtemp makes 0700; outputs get the usual mode
    os.replace(staging, final)
    record_write(final, replacing=staging)
    return [final / r.output.name for r in results if r.output is not None]


def wants_partitions(path: str | Path, rows: int | None) -> bool:
    """Whether to estimate in partitions: ``partition.rows`` given (> 0), or unset and the
    input a folder or a file of at least :data:`AUTO_BYTES`; ``0`` means never."""
    if rows is not None:
        return rows > 0
    path = Path(path)
    return path.is_dir() or (path.is_file() and path.stat().st_size >= AUTO_BYTES)
