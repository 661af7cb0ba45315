"""``werest import FORMAT PATH... --out table.parquet``: real layouts -> one transcripts table."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from werest import logs
from werest.cli.commands._common import print_blocks, save_config
from werest.cli.schema import ImportSettings
from werest.ingest.importers import OPTIONS, import_table, summarise
from werest.ingest.table import table_format, write_table
from werest.io import check_output, staged_output

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger("werest.ingest.importers")


def run(settings: ImportSettings) -> pd.DataFrame:
    """Write the imported table and its config beside it; show rows per dataset and system."""
    options = {key: _plain(getattr(settings, key)) for key in OPTIONS}
    table_format(settings.out, writing=True)  # a wrong --out is refused before the import
    check_output(settings.out, file=True)  # and so is one that cannot be replaced
    with logs.stage(f"import ({settings.format})"):
        table = import_table(settings.format, list(settings.paths), **options)
    with staged_output(settings.out, file=True) as out:  # the table and its config as one
        with logs.stage("write"):
            write_table(table, out)
        save_config(settings, out)
    log.info("wrote %s: %d rows", settings.out, len(table))
    print_blocks(summarise(table).to_string(index=False))
    return table


def _plain(value):
    """An importer's option as the importers take it: a path as text."""
    return str(value) if isinstance(value, Path) else value
