"""What every command does around its one library call: read settings, save the config, show.

A command's ``run`` gets one typed settings object, an instance of its class in
:mod:`werest.cli.schema` (:func:`werest.cli.config.settings_from`), and reads its attributes.
The stage modules take plain values (numbers, lists, mappings); these helpers turn the
settings' blocks into them, so no stage module needs to import omegaconf.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from omegaconf import OmegaConf

from werest.build import instantiate_checked
from werest.cli.blocks import Cluster
from werest.cli.declare import composed, given_values
from werest.errors import ConfigError
from werest.ingest.table import read_table
from werest.io import atomic_path
from werest.model.training import TrainingOptions
from werest.model.training import labelled_table as training_table
from werest.partition.cluster import dask_client, dask_runner
from werest.partition.engine import Partitioning, wants_partitions
from werest.text import Normaliser, as_normaliser

if TYPE_CHECKING:
    import pandas as pd

    from werest.model.files import Models

T = TypeVar("T")


def print_blocks(*blocks: str | None) -> None:
    """Print a command's console summary (empty blocks are skipped): the one place a command
    writes to stdout besides the CLI's "wrote ..." line."""
    for block in blocks:
        if block:
            print(block, file=sys.stdout)


def normaliser_setting(settings: Any) -> Normaliser:
    """The run's :class:`~werest.text.Normaliser`, built once from ``settings.normaliser``; an
    unknown name is a ConfigError."""
    return as_normaliser(settings.normaliser)


def build(block: Any, kind: type[T]) -> T:
    """The object a settings block's ``_target_`` names (``bootstrap``: a
    :class:`werest.stats.Bootstrap`), built by ``hydra.utils.instantiate`` from the block's
    keys and checked to be a ``kind`` (:func:`werest.build.instantiate_checked`: a mistake is
    a one-line ConfigError naming the block's key). A key the config left out takes the
    class's own default."""
    return instantiate_checked(given_values(block), kind, block.key, _convert_="all")


def save_config(settings: Any, target: Path) -> Path:
    """Save the run's composed config: ``target`` if it is a ``.yaml`` path, else
    ``<target>.config.yaml`` beside an output file."""
    target = Path(target)
    if target.suffix != ".yaml":
        target = target.with_name(f"{target.name}.config.yaml")
    with atomic_path(target) as tmp:
        tmp.write_text(OmegaConf.to_yaml(OmegaConf.create(composed(settings))), encoding="utf-8")
    return target


def name_list(value) -> list[str] | None:
    """A name-or-list setting (``target``, ``system_order``, ``datasets``) as a list of
    names, or None when unset."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def labelled_table(settings: Any, feature_names: list[str]):
    """The labelled transcripts of ``data`` for ``werest train``/``evaluate``, with the input
    features of ``feature_names`` joined from ``features_table`` when it is set
    (:func:`werest.model.training.labelled_table`)."""
    return training_table(settings.data.as_dict(), feature_names, settings.features_table)


def training_options(settings: Any) -> TrainingOptions:
    """The section :func:`werest.model.training.train`,
    :func:`werest.evaluation.lodo.evaluate_lodo` and
    :func:`werest.evaluation.four_cases.evaluate_four_cases` take, from ``werest train``'s or
    ``werest evaluate``'s settings of the same names."""
    return TrainingOptions(
        normaliser=normaliser_setting(settings),
        two_system_views=settings.two_system_views,
        proxies=settings.proxies,
        seed=settings.seed,
        n_jobs=settings.n_jobs,
    )


# --------------------------------------------------------------------------- clusters


def cluster_named(cluster: Cluster) -> bool:
    """Whether the ``cluster`` settings name a cluster (a kind or an address)."""
    return bool(cluster.address) or cluster.kind != "none"


def cluster_client(cluster: Cluster):
    """:func:`werest.partition.cluster.dask_client` for the ``cluster`` settings: None (no
    cluster) when they name none."""
    return dask_client(cluster.kind, address=cluster.address, workers=cluster.workers)


# --------------------------------------------------------------------------- partitioned runs


def partitioned_run(settings: Any) -> bool:
    """Whether the run goes in partitions (docs/scale.md): a cluster is named,
    ``partition.rows`` is set (> 0), or the input is a Parquet folder or a file of at least
    1 GB."""
    return cluster_named(settings.cluster) or wants_partitions(
        settings.input, settings.partition.rows
    )


def stage_source(settings: Any, numeric: tuple[str, ...] = ()) -> str | pd.DataFrame:
    """What a stage's one orchestrator runs on: the input's path for a partitioned run
    (:func:`partitioned_run`), else the input read whole (:func:`read_table`), its one
    partition."""
    if partitioned_run(settings):
        return str(settings.input)
    # the orchestrator warns of systems without hypotheses, once it has checked the settings
    return read_table(settings.input, numeric=numeric, warn=False)


@contextmanager
def partitioning(settings: Any) -> Iterator[Partitioning]:
    """The ``partition`` block as the library's section (its ``_target_``:
    :class:`werest.partition.engine.Partitioning`), run as ``cluster`` says: one partition
    after another in recycled child processes (``partition.per_process`` each; 0: in this
    process), or as tasks on a Dask cluster whose client lives while the block runs."""
    built = build(settings.partition, Partitioning)
    with cluster_client(settings.cluster) as client:
        if client is None:
            yield built
        else:
            yield replace(built, runner=dask_runner(client, retries=settings.cluster.retries))


# --------------------------------------------------------------------------- the label loop


def labelled_input(settings: Any, models: Models, in_memory: str) -> str | pd.DataFrame:
    """What ``werest estimate`` or ``leaderboard`` runs on (:func:`stage_source`, the models'
    evidence columns read as numbers); ``labels=`` in a partitioned run is a ConfigError
    first, saying to ``in_memory`` in memory instead (the label round:
    :func:`werest.cli.commands.estimate.label_round`)."""
    from werest.estimation.estimate import input_features  # loaded by these two commands only

    if partitioned_run(settings) and settings.labels:
        raise ConfigError(
            f"labels= is not supported in a partitioned run yet: {in_memory} in memory "
            "(partition.rows=0)"
        )
    return stage_source(settings, numeric=input_features(models))
