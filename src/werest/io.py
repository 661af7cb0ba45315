"""Writing files safely and turning values into text: the plumbing every stage shares.

Every output goes through :func:`atomic_path`, so a failed or interrupted run leaves nothing
half-written; :func:`recorded_writes` lets the CLI name what a run wrote without each stage
printing it.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from werest.errors import InputError

if TYPE_CHECKING:  # numpy and pandas are imported where used: the CLI starts without them
    import numpy as np
    import pandas as pd


def shipped(folder: str) -> Path:
    """A folder shipped inside the package, ``conf`` (the Hydra configs) or ``models`` (the
    shipped models), found with :mod:`importlib.resources` (``src/werest/<folder>`` in the
    repository; the package is always on disk, installed editable or from the wheel)."""
    return Path(str(resources.files("werest") / folder))


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
    """``frame.to_csv(path, index=False, float_format=float_format)``, byte for byte, faster.

    pandas formats and quotes every cell in Python; a run with many systems writes millions
    of them. Here each float column's distinct values are formatted once (the rates repeat:
    2/25, 0, 1), each column becomes one list of cells (quoted as the csv module's
    ``QUOTE_MINIMAL`` quotes: only a cell holding a comma, a quote or a line break), and the
    rows are joined in one pass. A frame with another kind of column (dates, categories)
    goes to pandas as it is."""
    columns = [_csv_cells(values, float_format) for _, values in frame.items()]
    if len(columns) < 2 or any(cells is None for cells in columns):  # "" alone is quoted
        frame.to_csv(path, index=False, float_format=float_format)
        return
    header = ",".join(_quoted(str(name)) for name in frame.columns)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(header + "\n")
        step = 100_000  # rows joined at a time: memory stays a small multiple of the chunk
        for start in range(0, len(frame), step):
            rows = zip(*(cells[start : start + step] for cells in columns), strict=True)
            handle.write("".join(",".join(row) + "\n" for row in rows))


_NEEDS_QUOTES = re.compile(r'[,"\r\n]')


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"' if _NEEDS_QUOTES.search(text) else text


def _csv_cells(values: pd.Series, float_format: str) -> list[str] | None:
    """A column's cells as pandas' ``to_csv`` writes them; None for a kind it does not
    handle."""
    import numpy as np
    import pandas as pd

    kind = values.dtype.kind
    if kind == "f":
        cells = _each_distinct(values, lambda value: float_format % value)
        numbers = values.to_numpy(dtype=float, na_value=np.nan)
        cells[(numbers == 0) & np.signbit(numbers)] = float_format % -0.0  # factorize: -0 = 0
        return cells.tolist()
    if kind in "iub" and not values.hasnans:
        return values.astype(str).tolist()
    if kind in "OT" or isinstance(values.dtype, pd.StringDtype):
        if pd.api.types.infer_dtype(values, skipna=True) not in ("string", "empty"):
            return None
        return _each_distinct(values, _quoted).tolist()
    return None


def _each_distinct(values: pd.Series, render) -> np.ndarray:
    """``render`` of each cell, called once per distinct value; a null is ``""``."""
    import numpy as np
    import pandas as pd

    codes, distinct = pd.factorize(values)  # a null is -1: the last entry
    return np.array([render(value) for value in distinct] + [""], dtype=object)[codes]


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
