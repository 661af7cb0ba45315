"""Reading a stage's input a chunk at a time (:func:`read_chunks`): the files of a path (a
CSV/TSV file, a Parquet file or a folder of them, Hive-style partition folders' values as
columns), each chunk validated as the table is, and how many partitions an input wants
(:func:`automatic_partitions`). The partition engine (:mod:`werest.partition.engine`) spills
what it reads."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from werest.errors import ConfigError, InputError
from werest.frames import concat_compact  # noqa: F401 (re-exported: the stages' orchestrators)
from werest.ingest.table import (
    CSV_SUFFIXES,
    NO_HYPOTHESES,
    check_text,
    resolve_audio,
    table_format,
    validate_table,
)

log = logging.getLogger(__name__)

#: The columns a partition carries besides the table's: the input file and row of each row.
SOURCE, ROW = "_source", "_row"


#: Inputs at least this large are estimated in partitions when ``partition.rows`` is unset.
AUTO_BYTES = 1_000_000_000


DEFAULT_CHUNK_ROWS = 1_000_000


#: ``n_partitions=None``: one partition per this many input rows (at least ``MIN_PARTITIONS``),
#: about 330 MB of rows and features in memory each, whatever the input's size.
ROWS_PER_PARTITION = 500_000


MIN_PARTITIONS = 16


def input_files(path: str | Path) -> list[Path]:
    """The table files of ``path``: itself, or a folder's Parquet files (a Parquet dataset,
    e.g. hive-partitioned ``dataset=x/part-0.parquet``), in name order."""
    path = Path(path)
    if not path.exists():
        raise InputError("no such file or folder", path=path)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.parquet") if not p.name.startswith((".", "_")))
        if not files:
            raise InputError("the folder holds no .parquet file", path=path)
        return files
    if table_format(path) == "jsonl":
        raise ConfigError(
            f"{path}: partitioned runs read Parquet or CSV/TSV; convert the JSON Lines table "
            "(werest import or pandas), or unset partition.rows"
        )
    return [path]


def read_chunks(
    path: str | Path, *, chunk_rows: int, numeric: tuple[str, ...] = ()
) -> Iterator[tuple[int, pd.DataFrame]]:
    """Validated chunks of at most ``chunk_rows`` rows: ``(file index, frame)`` with the
    input row of each row in ``_row`` (counted from 1 in its file, as errors name it)."""
    root = Path(path)
    for index, file in enumerate(input_files(root)):
        offset = 0
        for frame in _raw_chunks(file, chunk_rows):
            frame = _with_hive_columns(frame, file, root)
            rows = list(range(offset + 1, offset + len(frame) + 1))
            offset += len(frame)
            if frame.empty:
                continue
            frame[ROW] = np.asarray(rows, dtype=np.int64)
            table = validate_table(frame, source=file, line_of=rows, numeric=numeric, whole=False)
            silent = table.attrs.get(NO_HYPOTHESES, [])
            table = resolve_audio(table, file.parent)
            table.attrs[NO_HYPOTHESES] = silent  # the chunk's; spill says what the input's are
            yield index, table


def automatic_partitions(path: str | Path) -> int:
    """The partition count that keeps each partition near ``ROWS_PER_PARTITION`` input rows:
    Parquet files are counted from their footers, CSV/TSV files estimated from their size and
    the length of their first lines (a bound, not an exact count)."""
    rows = sum(_approximate_rows(file) for file in input_files(path))
    return max(MIN_PARTITIONS, -(-rows // ROWS_PER_PARTITION))


def _approximate_rows(file: Path) -> int:
    if table_format(file) == "parquet":
        try:
            return pq.ParquetFile(file).metadata.num_rows
        except (pa.ArrowException, OSError):
            return 0  # reading it says what is wrong, with the file's name
    size = file.stat().st_size
    with file.open("rb") as handle:
        head = handle.read(4_000_000)
    return int(size * max(head.count(b"\n"), 1) / max(len(head), 1))


def _raw_chunks(file: Path, chunk_rows: int) -> Iterator[pd.DataFrame]:
    if table_format(file) == "parquet":
        try:
            reader = pq.ParquetFile(file)
            for batch in reader.iter_batches(batch_size=chunk_rows):
                yield batch.to_pandas()
        except (pa.ArrowException, OSError) as error:
            message = " ".join(str(error).split())
            raise InputError(f"not a readable Parquet file: {message}", path=file) from None
        return
    with open(file, "rb") as handle:
        check_text(handle.read(16), file)
    try:
        yield from pd.read_csv(
            file,
            sep=CSV_SUFFIXES[file.suffix.lower()],
            dtype=str,
            keep_default_na=False,
            na_filter=False,
            index_col=False,
            encoding="utf-8-sig",
            chunksize=chunk_rows,
        )
    except UnicodeDecodeError as error:
        raise InputError(
            f"not valid UTF-8 ({error.reason}); werest reads UTF-8 only: re-encode the file, "
            "e.g. iconv -f latin1 -t utf-8",
            path=file,
        ) from None
    except (pd.errors.ParserError, ValueError) as error:
        message = " ".join(str(error).split())
        raise InputError(f"not a well-formed table: {message}", path=file) from None


def _with_hive_columns(frame: pd.DataFrame, file: Path, root: Path) -> pd.DataFrame:
    """Columns named by ``key=value`` folders between ``root`` and ``file`` (a Parquet
    dataset partitioned by dataset keeps ``dataset`` in the folder name, not in the file)."""
    if file == root:
        return frame
    for part in file.relative_to(root).parts[:-1]:
        key, sep, value = part.partition("=")
        if sep and key not in frame.columns:
            frame[key] = value
    return frame


#: ``select(chunk) -> rows``: the rows of a validated chunk a run keeps (e.g. some datasets).
RowSelection = Callable[[pd.DataFrame], pd.DataFrame]
