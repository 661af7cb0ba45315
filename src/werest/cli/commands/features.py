"""``werest features input=T out=F [ranking=R | proxy=S]``: proxies and agreement features.

One orchestrator (:func:`werest.partition.features.features_input`) runs the input in memory
(the table as its one partition) or, for large inputs or a named Dask cluster, partition by
partition: ``out`` is then a folder of Parquet files whose rows are the in-memory table's.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from werest.cli.commands._common import (
    name_list,
    normaliser_setting,
    partitioning,
    save_config,
    stage_source,
)
from werest.cli.schema import FeaturesSettings
from werest.features.proxy import Ranking
from werest.ingest.table import write_table
from werest.io import staged_output
from werest.partition.features import features_input

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger("werest.features.agreement")


def run(settings: FeaturesSettings) -> pd.DataFrame | None:
    """Choose proxies and write the agreement feature table with its config (a partitioned
    run returns None: its table is never whole in memory)."""
    # the table (or folder of parts) and its config, put in place as one at the end
    with staged_output(settings.out, file=True) as out, partitioning(settings) as parts:
        result = features_input(
            stage_source(settings),
            out,
            ranking=_given_ranking(settings),
            targets=name_list(settings.targets),
            proxy=settings.proxy,
            normaliser=normaliser_setting(settings),
            n_jobs=settings.n_jobs,
            partitioning=parts,
        )
        if result.features is not None:
            write_table(result.features, out)
        save_config(settings, out)
    if result.features is None:
        log.info(
            "wrote %s: %d rows in %d files", settings.out, result.n_features, len(result.files)
        )
        return None
    log.info("wrote %s: %d rows", settings.out, len(result.features))
    return result.features


def _given_ranking(settings: FeaturesSettings) -> Ranking | None:
    """``ranking=`` (a file), ``proxy=`` (one system), else None: rank on the references."""
    if settings.ranking:
        return Ranking.load(settings.ranking)
    if settings.proxy:
        return Ranking.from_order([settings.proxy])
    return None
