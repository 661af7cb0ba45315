"""What a ``werest estimate`` run gives back (:class:`EstimateRun`) and what its cache keys
(the options of :class:`~werest.estimation.settings.EstimateOptions`, re-exported here, but
:data:`UNKEYED`): light declarations, shared by the pipeline
(:mod:`werest.estimation.pipeline`), its run cache (:mod:`werest.estimation.run_cache`) and
the partitioned run (:mod:`werest.partition.estimate`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from werest.estimation.settings import (  # noqa: F401 (re-exported)
    CHUNK_UTTERANCES,
    MISSING_HYPOTHESES,
    EstimateOptions,
)
from werest.resources import StageRun

if TYPE_CHECKING:
    from werest.features.proxy_ranking import Ranking

#: What a cached run's key leaves out: options that change how, not what, is computed.
UNKEYED = ("n_jobs",)


@dataclass
class EstimateRun(StageRun):
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
