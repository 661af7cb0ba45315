"""What every command does around its one library call: read settings, save the config, show.

The stage modules take plain values (numbers, lists, mappings); these helpers turn the
composed Hydra config into them, so no stage module needs to import omegaconf.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import pandas as pd
from omegaconf import DictConfig, OmegaConf

from werest.build import instantiate_checked
from werest.features.inputs import input_columns, with_feature_table
from werest.ingest.table import KEY, read_table
from werest.io import atomic_path
from werest.model.training import load_sources
from werest.partition.cluster import dask_client, dask_runner
from werest.partition.engine import (
    DEFAULT_CHUNK_ROWS,
    PartitionRunner,
    local_runner,
    wants_partitions,
)
from werest.text import Normaliser, as_normaliser

T = TypeVar("T")


def print_blocks(*blocks: str | None) -> None:
    """Print a command's console summary (empty blocks are skipped): the one place a command
    writes to stdout besides the CLI's "wrote ..." line."""
    for block in blocks:
        if block:
            print(block, file=sys.stdout)


def normaliser_setting(cfg: DictConfig) -> Normaliser:
    """The run's :class:`~werest.text.Normaliser`, built once from ``cfg.normaliser`` (unset:
    ``auto``); an unknown name is a ConfigError."""
    return as_normaliser(cfg.get("normaliser"))


def instantiate_block(cfg: DictConfig, key: str, kind: type[T]) -> T:
    """The ``key:`` block built by ``hydra.utils.instantiate`` from its ``_target_``, checked
    to be a ``kind`` (:func:`werest.build.instantiate_checked`: a mistake is a one-line
    ConfigError naming ``key``)."""
    return instantiate_checked(OmegaConf.select(cfg, key), kind, key, _convert_="all")


def save_config(cfg: DictConfig, target: Path) -> Path:
    """Save the run's composed config: ``target`` if it is a ``.yaml`` path, else
    ``<target>.config.yaml`` beside an output file."""
    target = Path(target)
    if target.suffix != ".yaml":
        target = target.with_name(f"{target.name}.config.yaml")
    with atomic_path(target) as tmp:
        tmp.write_text(OmegaConf.to_yaml(cfg, resolve=True), encoding="utf-8")
    return target


def name_list(value) -> list[str] | None:
    """A name-or-list setting (``target``, ``system_order``, ``datasets``) as a list of
    names, or None when unset."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def plain_dict(node) -> dict:
    """A config block as a plain dict (``{}`` when unset), for a library call."""
    if node is None:
        return {}
    if OmegaConf.is_config(node):
        return OmegaConf.to_container(node, resolve=True)
    return dict(node) if isinstance(node, Mapping) else node


def output_dir(cfg: DictConfig) -> Path:
    """The run's output folder."""
    return Path(cfg.output_dir)


def labelled_table(cfg: DictConfig, feature_names: list[str]):
    """The labelled transcripts of ``data`` for ``werest train``/``evaluate``, with the input
    features of ``feature_names`` joined by key from ``features_table`` when it is set (a
    feature table of ``werest features`` + ``werest embed``: similarity, likelihoods)."""
    table = load_sources(plain_dict(cfg.data))
    path = cfg.get("features_table")
    if not path:
        return table
    features = read_table(path, required=tuple(KEY), numeric=tuple(input_columns(feature_names)))
    return with_feature_table(table, features, feature_names, source=path)


# --------------------------------------------------------------------------- partitioned runs


def partitioned_run(cfg: DictConfig) -> bool:
    """Whether the run goes in partitions (docs/scale.md): a cluster is named,
    ``partition.rows`` is set (> 0), or the input is a Parquet folder or a file of at least
    1 GB."""
    cluster = cfg.get("cluster") or {}
    if cluster.get("address") or cluster.get("kind") not in (None, "none"):
        return True
    return wants_partitions(cfg.input, (cfg.get("partition") or {}).get("rows"))


def stage_source(cfg: DictConfig, numeric: tuple[str, ...] = ()) -> str | pd.DataFrame:
    """What a stage's one orchestrator runs on: the input's path for a partitioned run
    (:func:`partitioned_run`), else the input read whole (:func:`read_table`), its one
    partition."""
    if partitioned_run(cfg):
        return cfg.input
    return read_table(cfg.input, numeric=numeric)


def partition_settings(cfg: DictConfig) -> dict:
    """The ``partition.*`` block as keyword arguments of a partitioned run (``chunk_rows``,
    ``n_partitions``, ``work_dir``)."""
    partition = cfg.get("partition") or {}
    return {
        "chunk_rows": int(partition.get("rows") or DEFAULT_CHUNK_ROWS),
        "n_partitions": partition.get("count"),
        "work_dir": partition.get("dir"),
    }


@contextmanager
def partition_runner(cfg: DictConfig) -> Iterator[PartitionRunner]:
    """How the partitions run (``cluster.*``): one after another in recycled child processes
    (``partition.per_process`` each; 0: in this process), or as tasks on a Dask cluster whose
    client lives while the block runs."""
    cluster = cfg.get("cluster") or {}
    with dask_client(
        cluster.get("kind"),
        address=cluster.get("address"),
        workers=int(cluster.get("workers") or 2),
    ) as client:
        if client is None:
            yield local_runner((cfg.get("partition") or {}).get("per_process"))
        else:
            yield dask_runner(client, retries=int(cluster.get("retries") or 0))
