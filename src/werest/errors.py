"""Errors a user can cause.

Every error that bad input, a bad file or a bad config can cause is a :class:`WerestError`.
Its message is one line that names the file and, where known, the row and column, so the CLI
can print it as is and exit with status 2. Anything else escaping the library is a bug.
"""

from __future__ import annotations

from pathlib import Path


class WerestError(Exception):
    """Base class of the errors a user can cause (bad input, config or model file)."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        row: int | None = None,
        column: str | None = None,
    ) -> None:
        self.message = " ".join(str(message).split())
        self.path = str(path) if path is not None else None
        self.row = row
        self.column = column
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = [self.path] if self.path else []
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.column is not None:
            where.append(f"column {self.column!r}")
        return f"{', '.join(where)}: {self.message}" if where else self.message


class InputError(WerestError):
    """A data file is missing, unreadable or does not follow its format."""


class ConfigError(WerestError):
    """A configuration value is wrong (unknown name, wrong type, impossible combination)."""
