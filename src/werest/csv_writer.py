"""Writing a DataFrame as CSV the way ``DataFrame.to_csv`` does, byte for byte, faster: the
per-utterance outputs hold millions of cells (:func:`write_csv`; :func:`werest.io.write_csvs`
writes several, atomically). A base module: numpy and pandas are imported when it writes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: the CLI starts without them
    import numpy as np
    import pandas as pd


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
