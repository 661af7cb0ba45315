"""werest's log lines: one format for the CLI and for the child processes a run starts.

A spawned child (:mod:`werest.partition.estimate`) starts with logging unconfigured, so its INFO
lines (e.g. "rows with a null hypothesis dropped") would be lost; it calls :func:`setup` with
the parent's level first.
"""

from __future__ import annotations

import logging
import sys

FORMAT = "%(levelname)s %(name)s: %(message)s"


def setup(level: int | str) -> None:
    """Log ``level`` and above to stderr in werest's format (``level``: a number or a name)."""
    if isinstance(level, str):
        level = getattr(logging, level.upper(), logging.INFO)
    logging.basicConfig(level=level, format=FORMAT, stream=sys.stderr, force=True)


def current_level() -> int:
    """The root logger's level: what a child process should log."""
    return logging.getLogger().level
