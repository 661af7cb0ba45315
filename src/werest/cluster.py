"""Partitions on a Dask cluster (``dask.distributed``): no scheduler of werest's own.

``cluster=local`` starts a :class:`distributed.LocalCluster` of ``cluster.workers`` processes
(one thread each: the work is pure Python and holds the GIL); ``cluster.address=tcp://…``
joins a running scheduler (started by ``dask-jobqueue`` on Slurm/PBS, ``dask-kubernetes``, or
``dask scheduler`` / ``dask worker`` by hand: README "Beyond one machine").

What every partition needs (estimate: the models, the proxy order, the targets; score: the
normaliser; features: the proxies' ranking) is sent to every worker once
(``client.scatter(..., broadcast=True)``), and each partition is one task that reads its
spilled Parquet files and writes its rows atomically, so running it twice is harmless. A task
that raises is retried ``retries`` times; a task whose worker dies (killed, out of memory) is
rescheduled on another worker by the scheduler (up to ``distributed.scheduler.
allowed-failures`` times), and the result equals a clean run's, since each task is a pure
function of its partition. Dask is an optional dependency: ``pip install 'werest[cluster]'``.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from pathlib import Path

from tqdm.auto import tqdm

from werest.errors import ConfigError
from werest.partitioned import PartitionRunner

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


def dask_runner(client, *, retries: int = 2) -> PartitionRunner:
    """A ``run_partitions`` (:data:`werest.partitioned.PartitionRunner`: estimate, score and
    features runs) that runs each partition as a task on ``client``'s workers, the shared
    context broadcast once."""
    distributed = _distributed()

    def run(function, folders: list[Path], outputs: list, context: object) -> list:
        [shared] = client.scatter([context], broadcast=True, hash=False)
        futures = client.map(
            function, folders, outputs, context=shared, retries=retries, pure=False
        )
        position = {future.key: i for i, future in enumerate(futures)}
        results: list = [None] * len(futures)
        done = distributed.as_completed(futures)
        for future in tqdm(
            done, total=len(futures), desc="partitions", unit="partition", disable=None
        ):
            results[position[future.key]] = future.result()
            future.release()
        return results

    return run
