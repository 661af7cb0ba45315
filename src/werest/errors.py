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


def unknown_name(what: str, name: str, known, plural: str) -> ConfigError:
    """The ConfigError for a setting that names ``name``, which matches none of ``known``:
    ``"<what> 'afri-dve' is not in the input; did you mean 'afri-dev'?"`` with the closest
    names (difflib), else ``"(<plural>: a, b, …)"`` listing what there is."""
    import difflib

    names = sorted({str(k) for k in known})
    close = difflib.get_close_matches(str(name), names, n=3, cutoff=0.6)
    if close:
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?"
    else:
        shown = ", ".join(names[:12]) + (f", … ({len(names)} in all)" if len(names) > 12 else "")
        hint = f" ({plural}: {shown})"
    return ConfigError(f"{what} {name!r} is not in the input{hint}")
