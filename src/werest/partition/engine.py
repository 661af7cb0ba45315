"""The partition engine every partitioned stage runs on, knowing nothing of any stage.

An input too large for memory is read a chunk at a time (:func:`read_chunks`) and spilled into
utterance-hash partitions on disk (:func:`spill_input`): every row of an utterance lands in
the same partition, so a stage can process one partition at a time and see whole
utterances. A :data:`PartitionRunner` maps a stage's function over the partitions (in this
process, in recycled child processes, or on a Dask cluster: :mod:`werest.partition.cluster`);
the stage then combines the partitions' results. :func:`workspace` and :func:`put_in_place`
make the run's outputs appear atomically, and only when every partition succeeded.

:func:`stage_input` is where a stage's one orchestrator starts: it gives the input as
partitions, either spilled (as above) or, for a table already in memory, the table itself as
the one partition, run in this process (:func:`whole_table`). So a stage's in-memory and
partitioned runs are one code path.

The stages that run on it: ``werest estimate`` (:mod:`werest.partition.estimate`), ``score``
(:mod:`werest.partition.score`), ``features`` (:mod:`werest.partition.features`) and
``leaderboard`` (:mod:`werest.partition.leaderboard`).
"""

from __future__ import annotations

import logging
import multiprocessing
import shutil
import signal
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

from werest import logs
from werest.errors import InputError
from werest.frames import concat_compact  # noqa: F401 (re-exported: the stages' orchestrators)
from werest.ingest.table import (
    EVERY_HYPOTHESIS_NULL,
    KEY,
    NO_HYPOTHESES,
    UTTERANCE,
    warn_without_hypotheses,
)
from werest.io import deferred_signals, record_write, replace_folder
from werest.partition.reading import (  # noqa: F401 (re-exported: the stages read them here)
    AUTO_BYTES,
    DEFAULT_CHUNK_ROWS,
    MIN_PARTITIONS,
    ROW,
    ROWS_PER_PARTITION,
    SOURCE,
    RowSelection,
    automatic_partitions,
    input_files,
    read_chunks,
)
from werest.partition.settings import PARTITIONS_PER_PROCESS, PartitionSettings
from werest.text import NormalisationCache, reusing_normalisation

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Spill:
    """The input split into utterance-hash partitions on disk (or, in memory, the whole table
    as its one partition: :func:`whole_table`), and what it says globally."""

    root: Path | None
    partitions: list[Path] | list[pd.DataFrame]
    sources: list[str]
    systems: list[str]
    languages: list[str]
    n_rows: int
    datasets: list[str] = field(default_factory=list)  # the whole input's, before ``select``
    #: the systems left out because every hypothesis of theirs is null (not run)
    no_hypotheses: list[str] = field(default_factory=list)
    #: the input's columns (of every file, in the order first seen)
    columns: list[str] = field(default_factory=list)


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
    answered: set[str] = set()  # the systems with a hypothesis, and those with only nulls
    silent: set[str] = set()
    columns: dict[str, None] = {}
    n_rows = n_read = 0
    chunks = read_chunks(path, chunk_rows=chunk_rows, numeric=numeric)
    for number, (source, chunk) in enumerate(chunks):
        datasets.update(chunk["dataset"].unique())
        answered.update(chunk["system"].unique())
        silent.update(chunk.attrs.get(NO_HYPOTHESES, []))
        columns.update(dict.fromkeys(c for c in chunk.columns if c != ROW))
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
    silent -= answered
    if n_read == 0 and silent:
        raise InputError(EVERY_HYPOTHESIS_NULL, path=path, column="hypothesis")
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
        no_hypotheses=sorted(silent),
        columns=list(columns),
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
    parts = [pd.read_parquet(file, columns=columns) for file in partition_files(folder)]
    frame = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    if columns is None or {SOURCE, ROW} <= set(columns):
        frame = frame.sort_values([SOURCE, ROW], kind="stable", ignore_index=True)
    return frame


def partition_table(folder: Path | pd.DataFrame, sources: list[str]) -> pd.DataFrame:
    """One partition's rows as a transcripts table, in input order (a key given twice is an
    InputError naming both places): what the in-memory run would have read. A table (the
    in-memory run's one partition, already validated) is returned as it is."""
    if isinstance(folder, pd.DataFrame):
        return folder
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


#: Normalised strings kept by this process across the partitions it estimates.
NORMALISED = NormalisationCache()


@contextmanager
def partition_rows(folder: Path | pd.DataFrame, sources: list[str]) -> Iterator[pd.DataFrame]:
    """One partition's table (:func:`partition_table`), worked on in the block with this
    process's :data:`NORMALISED` cache: strings it normalised for an earlier partition are
    not normalised again."""
    with reusing_normalisation(NORMALISED):
        yield partition_table(folder, sources)


#: ``run_partitions(function, folders, outputs, context)`` -> results in folder order:
#: ``function(folder, output, context)`` for each partition, where ``context`` is what every
#: partition needs (``PipelineContext`` for ``werest estimate``, ``ScoreContext`` for
#: ``werest score``...) and ``output`` the file it writes (None: it writes nothing).
PartitionRunner = Callable[[Callable, list[Path], list, Any], list]


def run_locally(function, folders, outputs, context) -> list:
    """Partitions one after another in this process."""
    pairs = zip(folders, outputs, strict=True)
    progress = logs.bar(pairs, total=len(folders), desc="partitions", unit="partition")
    return [function(folder, output, context) for folder, output in progress]


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
        pairs = list(zip(folders, outputs, strict=True))
        results = []
        with logs.bar(total=len(pairs), desc="partitions", unit="partition") as bar:
            for start in range(0, len(pairs), per_process):
                with one_child(_receive_context, context, logs.current_level()) as submit:
                    for folder, output in pairs[start : start + per_process]:
                        results.append(submit(_run_in_child, function, folder, output).result())
                        bar.update()
        return results

    return run


def local_runner(per_process: int | None = PARTITIONS_PER_PROCESS) -> PartitionRunner:
    """How partitions run without a cluster: in recycled child processes
    (:func:`child_process_runner`), or in this process when ``per_process`` is 0."""
    if per_process is None:
        per_process = PARTITIONS_PER_PROCESS
    return child_process_runner(per_process) if per_process > 0 else run_locally


@dataclass(frozen=True)
class Partitioning(PartitionSettings):
    """How a stage's input is split into partitions and how they run: the section every
    orchestrator (:func:`stage_input`) takes. The commands build it from their ``partition``
    block (its ``_target_``): its fields and their defaults, rules and help are
    :class:`werest.partition.settings.PartitionSettings`' (``werest <command> --help`` reads
    them there), and a named cluster sets ``runner``.

    Parameters
    ----------
    rows, count, dir, per_process : :class:`~werest.partition.settings.PartitionSettings`.
    runner : how the partitions run (:data:`PartitionRunner`); None: :func:`local_runner` of
        ``per_process``. A Dask cluster's is :func:`werest.partition.cluster.dask_runner`.
    """

    runner: PartitionRunner | None = None

    @property
    def chunk_rows(self) -> int:
        """Input rows read at a time while spilling."""
        return self.rows or DEFAULT_CHUNK_ROWS

    @property
    def run_partitions(self) -> PartitionRunner:
        """The runner that maps a stage's function over the spilled partitions."""
        return self.runner if self.runner is not None else local_runner(self.per_process)

    def wanted(self, path: str | Path) -> bool:
        """Whether a command runs ``path`` in partitions (:func:`wants_partitions`)."""
        return wants_partitions(path, self.rows)


class Stages:
    """Wall seconds of each stage of a run (``EstimateRun.seconds``)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.seconds[stage] = round(now - self._last, 3)
        self._last = now


def in_child_process(function: Callable, /, *args, **kwargs):
    """``function(*args, **kwargs)`` in a fresh spawned process, its result sent back; the
    memory the child used goes back to the system when it exits. An error is raised here,
    as ``function`` raised it; the child logs at this process's level."""
    with one_child(logs.setup, logs.current_level()) as submit:
        return submit(function, *args, **kwargs).result()


@contextmanager
def one_child(initializer: Callable, *initargs) -> Iterator[Callable]:
    """A pool of one spawned child process, as its ``submit``; the child runs
    ``initializer(*initargs)`` first.

    Interrupts stop the run in this process only: the child ignores SIGINT (a terminal's
    Ctrl-C reaches the whole process group), a task is handed over with SIGINT and SIGTERM
    held (:func:`werest.io.deferred_signals`: a cut-off handover would be a traceback in the
    child), and on KeyboardInterrupt (or SIGTERM's :class:`werest.io.Terminated`) the child
    is ended and waited for, so that it writes nothing after the run's folders are removed.
    """
    pool = ProcessPoolExecutor(
        max_workers=1,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_child_setup,
        initargs=(initializer, *initargs),
    )

    def submit(function: Callable, /, *args, **kwargs):
        with deferred_signals():
            return pool.submit(function, *args, **kwargs)

    try:
        yield submit
    except KeyboardInterrupt:
        with deferred_signals():
            for child in list((getattr(pool, "_processes", None) or {}).values()):
                child.terminate()  # its task stops and cleans up (_child_setup)
            pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)


def _child_setup(initializer: Callable, *initargs) -> None:
    """A child of :func:`one_child`: SIGINT ignored; once set up, SIGTERM ends its task as
    an exception (its temporary files removed, its locks released) and the child exits."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    initializer(*initargs)
    signal.signal(signal.SIGTERM, _stop_child)


def _stop_child(signum: int, frame) -> None:
    raise SystemExit(128 + signum)


def partition_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.parquet"))


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
    is replaced whole: :func:`werest.io.replace_folder`); returns the files of the results
    that wrote one (their ``output``)."""
    for stale in staging.glob(".*"):
        stale.unlink()
    final.parent.mkdir(parents=True, exist_ok=True)
    replace_folder(staging, final)
    record_write(final, replacing=staging)
    return [final / r.output.name for r in results if r.output is not None]


def warn_left_out(spilled: Spill, where: object) -> None:
    """The WARNING that the input's systems without a hypothesis (``Spill.no_hypotheses``)
    are left out; each stage's orchestrator says it once its own settings are checked, so
    that a setting naming one of them is one line, an error, and nothing else."""
    warn_without_hypotheses(where, spilled.no_hypotheses)


def whole_table(table: pd.DataFrame, select: RowSelection | None = None) -> Spill:
    """A validated table as the one partition of an in-memory run, with what :func:`spill`
    says of a spilled input (the rows ``select`` keeps; a selection that keeps none gives no
    partition)."""
    datasets = sorted(table["dataset"].unique())
    silent = list(table.attrs.get(NO_HYPOTHESES, []))
    if select is not None:
        table = select(table)
    languages = table["language"].dropna().unique() if "language" in table.columns else []
    return Spill(
        root=None,
        partitions=[table] if len(table) else [],
        sources=[],
        systems=sorted(table["system"].unique()),
        languages=sorted(languages),
        n_rows=len(table),
        datasets=datasets,
        no_hypotheses=silent,
        columns=list(table.columns),
    )


@dataclass
class StageInput:
    """A stage's input as partitions, and where their files go: the one orchestrator of a
    stage runs on it whether the input is spilled (a partitioned run) or a table in memory
    (its one partition, run in this process, its rows returned instead of written)."""

    spill: Spill
    outputs: list[Path | None]
    staging: Path | None = None
    final: Path | None = None
    #: how the spilled partitions run (:attr:`Partitioning.run_partitions`)
    runner: PartitionRunner = run_locally

    @property
    def in_memory(self) -> bool:
        return self.spill.root is None

    def run(self, function: Callable, context: Any, *, write: bool = True) -> list:
        """``function(partition, output, context)`` of every partition: by :attr:`runner` when
        spilled, else here (the table is not copied to another process). ``output`` is the
        partition's file (None in memory, or with ``write=False``)."""
        if self.in_memory:
            return [function(part, None, context) for part in self.spill.partitions]
        outputs = self.outputs if write else [None] * len(self.outputs)
        return self.runner(function, self.spill.partitions, outputs, context)

    def place(self, results: list) -> list[Path]:
        """The written files put in place at once (:func:`put_in_place`; none in memory)."""
        if self.staging is None or self.final is None:
            return []
        return put_in_place(self.staging, self.final, results)


@contextmanager
def stage_input(
    source: str | Path | pd.DataFrame,
    output: Path,
    partitioning: Partitioning = Partitioning(),
    *,
    final: Path | None = None,
    suffix: str = ".csv",
    numeric: tuple[str, ...] = (),
    select: RowSelection | None = None,
) -> Iterator[StageInput]:
    """The input of a stage's run as a :class:`StageInput`.

    A table (``source`` a DataFrame) is the one partition of an in-memory run, with a
    run-wide normalisation cache (the command's, when it opened one; ``partitioning`` is not
    read). A path is spilled (:func:`spill_input`) as ``partitioning`` says into a scratch
    folder beside ``output`` (or in its ``dir``), and its partitions run by its runner; with
    ``final``, each partition writes ``part-NNNNN{suffix}`` into a staging folder that
    :meth:`StageInput.place` renames to ``final`` (:func:`workspace`). Every temporary
    folder is removed whatever happens.
    """
    if isinstance(source, pd.DataFrame):
        # each distinct string once a run (the command's own cache when it opened one)
        with reusing_normalisation(NormalisationCache()):
            yield StageInput(whole_table(source, select), [None])
        return
    spilling = {"numeric": numeric, "select": select}
    rows, count, work_dir = partitioning.chunk_rows, partitioning.count, partitioning.dir
    runner = partitioning.run_partitions
    if final is None:
        with scratch_folder(output, work_dir) as scratch:
            spilled = spill_input(source, scratch, rows, count, **spilling)
            yield StageInput(spilled, [None] * len(spilled.partitions), runner=runner)
        return
    with workspace(final, output, work_dir) as (scratch, staging):
        spilled = spill_input(source, scratch, rows, count, **spilling)
        outputs = [staging / f"part-{i:05d}{suffix}" for i in range(len(spilled.partitions))]
        yield StageInput(spilled, outputs, staging, final, runner)


def wants_partitions(path: str | Path, rows: int | None) -> bool:
    """Whether to estimate in partitions: ``partition.rows`` given (> 0), or unset and the
    input a folder or a file of at least :data:`AUTO_BYTES`; ``0`` means never."""
    if rows is not None:
        return rows > 0
    path = Path(path)
    return path.is_dir() or (path.is_file() and path.stat().st_size >= AUTO_BYTES)
