"""``werest import FORMAT PATH... --out table.parquet``: real layouts -> one transcripts table."""

from __future__ import annotations

import logging

import pandas as pd
from omegaconf import DictConfig

from werest.cli.commands._common import print_blocks, save_config
from werest.ingest.importers import OPTIONS, import_table, summarise
from werest.ingest.table import table_format, write_table
from werest.io import staged_output

log = logging.getLogger("werest.ingest.importers")


def run(cfg: DictConfig) -> pd.DataFrame:
    """Write the imported table and its config beside it; show rows per dataset and system."""
    options = {k: cfg[k] for k in OPTIONS if k in cfg}
    table_format(cfg.out, writing=True)  # a wrong --out is refused before the import
    table = import_table(cfg.format, list(cfg.paths), **options)
    with staged_output(cfg.out, file=True) as out:  # the table and its config as one
        write_table(table, out)
        save_config(cfg, out)
    log.info("wrote %s: %d rows", cfg.out, len(table))
    print_blocks(summarise(table).to_string(index=False))
    return table
