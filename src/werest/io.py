"""Writing files safely and turning values into text: the plumbing every stage shares.

Every output goes through :func:`atomic_path`, so a failed or interrupted run leaves nothing
half-written; :func:`recorded_writes` lets the CLI name what a run wrote without each stage
printing it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from werest.errors import InputError


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it into place only on success.

    Nothing half-written is ever left at ``path``: an exception (or an interrupt) removes
    the temporary file and leaves any previous ``path`` untouched. Inside
    :func:`recorded_writes`, each file put in place is recorded (the CLI's "wrote ..." line).
    """
    path = Path(path)
    if path.is_dir():
        raise InputError("is a folder, expected a file to write", path=path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as error:
        raise InputError(f"cannot write here: {error.strerror}", path=path) from None
    os.close(handle)
    tmp = Path(tmp_name)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; outputs get the usual mode
    try:
        yield tmp
        try:
            os.replace(tmp, path)
        except OSError as error:
            raise InputError(f"cannot write: {error.strerror}", path=path) from None
        for record in _RECORDERS:
            record.append(path)
    finally:
        tmp.unlink(missing_ok=True)


_RECORDERS: list[list[Path]] = []


def record_write(path: Path, *, replacing: Path | None = None) -> None:
    """Record a path put in place by other means than :func:`atomic_path` (a renamed
    folder), in place of the files recorded under ``replacing`` (the folder's former name)."""
    for record in _RECORDERS:
        if replacing is not None:
            record[:] = [p for p in record if not p.is_relative_to(replacing)]
        record.append(Path(path))


@contextmanager
def recorded_writes() -> Iterator[list[Path]]:
    """Collect the paths :func:`atomic_path` puts in place while the block runs."""
    written: list[Path] = []
    _RECORDERS.append(written)
    try:
        yield written
    finally:
        _RECORDERS.remove(written)


def first_line(error: BaseException) -> str:
    """The first non-blank line of an exception's message (or its class name)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


def json_default(value):
    """``json.dumps(default=...)`` for numpy scalars and paths (cards, summaries)."""
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def save_figure(fig, path: str | Path, *, dpi: int = 110) -> Path:
    """Write a matplotlib :class:`~matplotlib.figure.Figure` as PNG, atomically.

    Figures are built with ``Figure()`` (the object API), never through ``pyplot``: the library
    must not switch the backend of a notebook that imports it, nor keep figures alive in
    pyplot's registry.
    """
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=dpi, format="png")
    return Path(path)


def write_csv(frame: pd.DataFrame, path: str | Path, *, float_format: str = "%.6g") -> None:
    """``frame.to_csv(path, index=False, float_format=float_format)``, byte for byte, faster:
    each float column's distinct values are formatted once, where pandas formats every cell
    in Python (the utterances of a run with many systems repeat the same rates: 2/25, 0, 1)."""
    shown = frame.copy(deep=False)
    for column, values in frame.items():
        if values.dtype.kind != "f":
            continue
        codes, distinct = pd.factorize(values)  # a null is -1: the last entry, ""
        text = np.array([float_format % value for value in distinct] + [""], dtype=object)
        cells = text[codes]
        negative_zero = (values.to_numpy() == 0) & np.signbit(values.to_numpy(dtype=float))
        cells[negative_zero] = float_format % -0.0  # factorize takes -0.0 for 0.0
        shown[column] = cells
    shown.to_csv(path, index=False)


def write_csvs(output_dir: str | Path, name: str, frames: dict) -> list[Path]:
    """Each DataFrame of ``frames`` (suffix -> frame) as ``<name>_<suffix>.csv`` in
    ``output_dir`` (created), atomically, floats to 6 significant digits; their paths."""
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for suffix, frame in frames.items():
        path = output_dir / f"{name}_{suffix}.csv"
        with atomic_path(path) as tmp:
            write_csv(frame, tmp)
        paths.append(path)
    return paths
