"""The partition stage's section, declared once (:mod:`werest.settings`) in a module that
imports nothing heavy, so ``werest <command> --help`` reads their defaults, rules and help."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from werest.settings import Section, param

#: Partitions a child process estimates before it is replaced
#: (:func:`werest.partition.engine.child_process_runner`).
PARTITIONS_PER_PROCESS = 8


@dataclass(frozen=True)
class PartitionSettings(Section):
    """How a stage's input is split into partitions: the fields of
    :class:`werest.partition.engine.Partitioning` a ``partition`` block sets (the runner is
    the cluster's business).

    Parameters
    ----------
    rows : input rows read at a time while spilling (None or 0:
        :data:`werest.partition.engine.DEFAULT_CHUNK_ROWS`). A command also reads it to decide
        whether to partition at all: None chooses by the input's size, 0 never partitions.
    count : utterance-hash partitions (None: one per
        :data:`werest.partition.engine.ROWS_PER_PARTITION` input rows, at least
        :data:`werest.partition.engine.MIN_PARTITIONS`).
    dir : where the input is spilled (None: beside the stage's output; on a cluster, a folder
        every worker reads).
    per_process : without a runner, the partitions a child process runs before a fresh one
        replaces it (0: every partition in this process).
    """

    SECTION: ClassVar[str] = "partition"

    rows: int | None = param(
        None,
        "input rows read at a time; null: automatic (a Parquet folder or a file >= 1 GB, "
        "1,000,000 rows); 0: never",
        minimum=0,
    )
    count: int | None = param(
        None,
        "utterance-hash partitions, one in memory per worker at a time; null: one per 500,000 "
        "input rows, at least 16",
        minimum=1,
    )
    dir: str | Path | None = param(
        None,
        "where the input is split (default: beside the command's output; on a cluster, a "
        "folder every worker reads)",
    )
    per_process: int | None = param(
        PARTITIONS_PER_PROCESS,
        "without a cluster: partitions a child process runs before a fresh one replaces it "
        "(gives its heap back); 0: all in this process",
        minimum=0,
    )
