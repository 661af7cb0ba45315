"""What ``werest estimate`` is asked (:class:`EstimateOptions`) and what a run gives back
(:class:`EstimateRun`): light declarations, shared by the pipeline
(:mod:`werest.estimation.pipeline`), its run cache (:mod:`werest.estimation.run_cache`) and
the partitioned run (:mod:`werest.partition.estimate`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from werest.errors import ConfigError

if TYPE_CHECKING:
    from werest.features.proxy import Ranking
    from werest.text import Normaliser

#: Utterances per processing chunk (a memory bound; :func:`werest.estimation.estimate.
#: estimate_utterances` makes chunks smaller where many systems are compared).
CHUNK_UTTERANCES = 50_000


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


@dataclass
class EstimateRun:
    """The outputs of a run (:func:`estimate_frame`, or a partitioned one:
    :func:`werest.partition.estimate.estimate_input`)."""

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
