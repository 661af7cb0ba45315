"""Partitions on a Dask cluster (``dask.distributed``): no scheduler of werest's own.

``cluster=local`` starts a :class:`distributed.LocalCluster` of ``cluster.workers`` processes
(one thread each: the work is pure Python and holds the GIL); ``cluster.address=tcp://…``
joins a running scheduler (started by ``dask-jobqueue`` on Slurm/PBS, ``dask-kubernetes``, or
``dask scheduler`` / ``dask worker`` by hand: README "Beyond one machine").

What every partition needs (the models, the proxy order, the targets) is sent to every worker
once (``client.scatter(..., broadcast=True)``), and each partition is one task that reads its
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
from werest.partitioned import (
    DEFAULT_CHUNK_ROWS,
    PartitionContext,
    PartitionRunner,
    estimate_partitioned,
    run_locally,
    wants_partitions,
)

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
    """A ``run_partitions`` (:func:`werest.partitioned.estimate_partitioned`) that runs each
    partition as a task on ``client``'s workers, the shared context broadcast once."""
    distributed = _distributed()

    def run(function, folders: list[Path], outputs: list[Path], context: PartitionContext):
        [shared] = client.scatter([context], broadcast=True, hash=False)
        futures = client.map(
            function, folders, outputs, context=shared, retries=retries, pure=False
        )
        position = {future.key: i for i, future in enumerate(futures)}
        results: list = [None] * len(futures)
        done = distributed.as_completed(futures)
        for future in tqdm(done, total=len(futures), desc="partitions", disable=None):
            results[position[future.key]] = future.result()
            future.release()
        return results

    return run


def partitioned_run(cfg) -> bool:
    """Whether ``werest estimate`` runs in partitions: a cluster is named, ``partition.rows``
    is set (> 0), or the input is a Parquet folder or a file of at least 1 GB."""
    cluster = cfg.get("cluster") or {}
    if cluster.get("address") or cluster.get("kind") not in (None, "none"):
        return True
    return wants_partitions(cfg.input, (cfg.get("partition") or {}).get("rows"))


def run_estimate(cfg, models) -> list[dict]:
    """``werest estimate`` in partitions (the CLI's side: settings in, files and lines out)."""
    from werest.config import save_config
    from werest.estimate import _input_features, estimate_settings, format_summary
    from werest.guards import format_warnings
    from werest.resources import ResourceMonitor, write_resources

    partition = cfg.get("partition") or {}
    cluster = cfg.get("cluster") or {}
    output_dir = Path(cfg.output_dir)
    with (
        ResourceMonitor() as monitor,
        dask_client(
            cluster.get("kind"),
            address=cluster.get("address"),
            workers=int(cluster.get("workers") or 2),
        ) as client,
    ):
        runner = (
            run_locally
            if client is None
            else dask_runner(client, retries=int(cluster.get("retries") or 0))
        )
        result = estimate_partitioned(
            cfg.input,
            models,
            output_dir,
            **estimate_settings(cfg),
            chunk_rows=int(partition.get("rows") or DEFAULT_CHUNK_ROWS),
            n_partitions=int(partition.get("count") or 16),
            numeric=_input_features(models),
            work_dir=partition.get("dir"),
            run_partitions=runner,
        )
    stages = {"stage_seconds": result.seconds, "partitions": result.n_partitions}
    write_resources({**monitor.summary, **stages}, output_dir / "resources.json")
    save_config(cfg, output_dir / "config.yaml")
    print(format_summary(result.records))
    if result.warnings:
        print(format_warnings(result.warnings))
    return result.records
