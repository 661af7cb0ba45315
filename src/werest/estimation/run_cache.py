"""The run cache of the label loop: ``werest estimate`` of a table in memory kept by content
in ``cache_dir``, so each round (``werest sample`` then ``werest estimate labels=``)
estimates the table once (:func:`estimate_cached`)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from werest.estimation.run import UNKEYED, EstimateOptions, EstimateRun
from werest.model.files import Models

log = logging.getLogger(__name__)


def estimate_cached(
    table: pd.DataFrame,
    models: Models,
    options: EstimateOptions = EstimateOptions(),
    *,
    cache_dir: str | Path | None = None,
    name: str | Path | None = None,
    compute: Callable[..., EstimateRun],
) -> EstimateRun:
    """``compute(table, models, options, name=name)`` (:func:`werest.estimation.pipeline.
    estimate_frame`) of a table in memory, kept by
    content in ``cache_dir`` (None: no cache): the same table, models and options give back
    the stored records, warnings and utterance rows, so each round of the label loop
    (``werest sample`` then ``werest estimate labels=``) estimates the table once.
    A stored run that cannot be read is recomputed."""
    if cache_dir is None:
        return compute(table, models, options, name=name)
    folder = Path(cache_dir) / run_key(table, models, options)
    if (folder / "records.json").exists():
        try:
            return _cached_run(folder, len(table))
        except (OSError, ValueError) as error:
            log.info("estimate cache %s unreadable (%s): recomputed", folder, error)
    run = compute(table, models, options, name=name)
    _store(run, folder)
    return run


def run_key(table: pd.DataFrame, models: Models, options: EstimateOptions) -> str:
    """A content hash of what an in-memory estimate depends on: the table's rows, each
    model's file (its card's sha256), the options that change results (all but
    :data:`UNKEYED`) and werest's version."""
    import hashlib
    import json
    from dataclasses import asdict

    from werest.version import __version__

    digest = hashlib.sha256()
    digest.update(pd.util.hash_pandas_object(table, index=False).to_numpy().tobytes())
    digest.update(",".join(map(str, table.columns)).encode())
    for target, model in models:
        card = model.info.get("sha256") or json.dumps(model.info, sort_keys=True, default=str)
        digest.update(f"{target}:{card}".encode())
    kept = {k: v for k, v in asdict(options).items() if k not in UNKEYED}
    digest.update(json.dumps(kept, sort_keys=True, default=str).encode())
    digest.update(__version__.encode())
    return digest.hexdigest()[:32]


def _cached_run(folder: Path, n_rows: int) -> EstimateRun:
    import json

    records = json.loads((folder / "records.json").read_text(encoding="utf-8"))
    warnings = json.loads((folder / "warnings.json").read_text(encoding="utf-8"))
    utterances = pd.read_parquet(folder / "utterances.parquet")
    empty = pd.DataFrame()
    return EstimateRun(
        *(records, warnings, utterances, [], empty, None),
        n_rows=n_rows,
        n_partitions=1,
        seconds={"cache": 0.0},
    )


def _store(run: EstimateRun, folder: Path) -> None:
    """The run's records, warnings and rows in ``folder``, put in place whole (a failure to
    store leaves no cache entry and does not fail the run)."""
    import shutil
    import tempfile

    from werest.io import unrecorded, write_json

    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=folder.parent))
    try:
        with unrecorded():  # a cache entry, not one of the command's outputs
            run.utterances.to_parquet(staging / "utterances.parquet")
            write_json(run.warnings, staging / "warnings.json")
            write_json(run.records, staging / "records.json")
        staging.rename(folder)
    except (OSError, ValueError, TypeError) as error:  # pyarrow's errors are ValueErrors
        log.info("estimate cache not stored (%s)", error)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
