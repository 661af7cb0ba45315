"""Partitions, transcription chunks and audio clips on a Dask cluster (``dask.distributed``):
no scheduler of werest's own.

``cluster=local`` starts a :class:`distributed.LocalCluster` of ``cluster.workers`` processes
(one thread each: the work is pure Python and holds the GIL); ``cluster.address=tcp://…``
joins a running scheduler (started by ``dask-jobqueue`` on Slurm/PBS, ``dask-kubernetes``, or
``dask scheduler`` / ``dask worker`` by hand: docs/scale.md).

What every partition needs (estimate: the models, the proxy order, the targets; score: the
normaliser; features: the proxies' ranking) is sent to the workers once, as the result of a
task of its own (:func:`map_on_cluster` says why not ``scatter``), and each partition is one
task that reads its spilled Parquet files and writes its rows atomically, so running it twice
is harmless. A task that raises is retried ``retries`` times (a user's error, a
:class:`werest.errors.WerestError`, is raised at once); a task whose worker dies (killed,
out of memory) is rescheduled on another worker by the scheduler (up to
``distributed.scheduler.allowed-failures`` times), and the result equals a clean run's, since
each task is a pure function of its partition. :func:`map_on_cluster` is the same for any
function (``werest transcribe``'s chunks, the likelihood scorer's clips): what every task needs
is broadcast once and the worker builds its model once (:func:`werest.build.instantiate_once`).
Dask is an optional dependency: ``pip install 'werest[cluster]'``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from werest import logs
from werest.errors import ConfigError, WerestError
from werest.partition.engine import PartitionRunner

log = logging.getLogger(__name__)


def _distributed():
    try:
        import distributed
    except ImportError:
        raise ConfigError(
            "cluster= needs Dask: pip install 'werest[cluster]' (dask[distributed])"
        ) from None
    return distributed


@contextmanager
def dask_client(kind: str | None = None, *, address: str | None = None, workers: int = 2):
    """A Dask client: of a running scheduler at ``address``, of a new LocalCluster of
    ``workers`` processes (``kind="local"``), or None (no cluster)."""
    if not address and kind in (None, "none"):
        yield None
        return
    distributed = _distributed()
    logging.getLogger("distributed").setLevel(logging.WARNING)  # its INFO lines are noise here
    if address:
        try:
            client = distributed.Client(address, timeout="30s")
        except OSError as error:
            raise ConfigError(f"cluster.address={address}: cannot connect: {error}") from None
        with client:
            yield client
        return
    if kind != "local":
        raise ConfigError(f"cluster.kind must be none or local, got {kind!r}")
    with (
        distributed.LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",  # any free port: several runs may share a machine
            silence_logs=logging.WARNING,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def map_on_cluster(
    client,
    function: Callable[..., Any],
    *iterables: Sequence[Any],
    shared: Mapping[str, Any] | None = None,
    retries: int = 2,
    desc: str | None = "tasks",
    unit: str = "task",
) -> Iterator[tuple[int, Any]]:
    """``function(*items, **shared)`` for each position of ``iterables``, one Dask task each;
    yields ``(position, result)`` as the tasks finish (so a caller can write what is done).

    ``shared`` (a model's description, a policy, a partition context) is sent once, as the
    result of a task of its own that every worker fetches when its first task needs it, not
    with every task. Not ``scatter(..., broadcast=True)``: Dask's active memory manager
    (``ReduceReplicas``, on by default) keeps one replica of scattered data, and a worker
    that dies holding it loses it for good (the tasks that need it are cancelled as "already
    forgotten"); a task's result is computed again instead. A task that raises is
    retried ``retries`` times, except for a user's error (:class:`WerestError`), raised here
    at once; one whose worker dies is rescheduled by Dask. ``desc`` names the
    progress bar (None: no bar, the caller keeps its own). Stopping early (an error, Ctrl-C)
    releases the futures, and Dask cancels the tasks nobody waits for any more.
    """
    distributed = _distributed()
    names = list(shared or {})
    values = [client.submit(_shared_value, shared[name], pure=False) for name in names]
    futures = client.map(
        partial(_user_errors_returned, function),
        *iterables,
        key=getattr(function, "__name__", "task"),  # tasks named after the function
        retries=retries,
        pure=False,
        **dict(zip(names, values, strict=True)),
    )
    position = {future.key: i for i, future in enumerate(futures)}
    with logs.bar(total=len(futures), desc=desc or "", unit=unit, disable=not desc) as bar:
        for future in distributed.as_completed(futures):
            result = future.result()
            if isinstance(result, _UserError):
                raise result.error
            future.release()
            bar.update(1)
            yield position[future.key], result


@dataclass
class _UserError:
    error: WerestError


def _user_errors_returned(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` on a worker, a user's error (:class:`WerestError`: a bad
    row, a model file missing) returned, not raised: it would be the same on every retry and
    every worker, and a raised one makes the worker log Dask's "Compute Failed" traceback
    before werest's one-line error. Anything else still raises (a bug: its traceback helps)."""
    try:
        return function(*args, **kwargs)
    except WerestError as error:
        return _UserError(error)


def _shared_value(value: Any) -> Any:
    """The task whose result is a shared value (:func:`map_on_cluster`): the scheduler keeps
    how to make it, so a lost copy is made again."""
    return value


def cluster_runner(
    client, function: Callable[..., Any], *, retries: int, **shared: Any
) -> Callable[[Sequence[Any]], Iterator[tuple[int, Any]]] | None:
    """Items -> ``(position, function(item, **shared))`` as tasks on ``client``'s workers,
    each retried up to ``retries`` times (``cluster.retries``), without a bar of its own (the
    caller counts what it gets back); None without a client (the caller works in its own
    process)."""
    if client is None:
        return None
    return lambda items: map_on_cluster(
        client, function, items, shared=shared, retries=retries, desc=None
    )


def in_order(results: Iterable[tuple[int, Any]], count: int) -> list[Any]:
    """The results of :func:`map_on_cluster` by position."""
    ordered: list[Any] = [None] * count
    for position, result in results:
        ordered[position] = result
    return ordered


def dask_runner(client, *, retries: int = 2) -> PartitionRunner:
    """A :data:`werest.partition.engine.PartitionRunner` (``Partitioning.runner`` of an
    estimate, score, features or leaderboard run) that runs each partition as a task on
    ``client``'s workers, the shared context broadcast once."""

    def run(function, folders: list[Path], outputs: list, context: object) -> list:
        results = map_on_cluster(
            client,
            function,
            folders,
            outputs,
            shared={"context": context},
            retries=retries,
            desc="partitions",
            unit="partition",
        )
        return in_order(results, len(folders))

    return run
