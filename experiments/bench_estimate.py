"""Scale of ``werest estimate``: rows/s and peak memory at 10k, 100k and 1M target rows.

    .venv/bin/python experiments/bench_estimate.py [--sizes 10000 100000 1000000]

The inputs are built from the dighr English import (the four multi-system folders, references
dropped): the real utterances are repeated under new dataset names until the table holds the
wanted number of *target* rows (system ``google``; the other three systems' rows come along,
so a 1M-target input has ~3.4M rows). Repetition keeps the real data's share of distinct
strings, and each distinct hypothesis is normalised once, so this measures the realistic case;
``whisper_english`` normalisation costs ~0.2 ms per *distinct* string on top for inputs where
nothing repeats. Each size runs ``werest estimate`` in a fresh process (timed end to end,
model loading and CSV writing included); peak memory is that process's max RSS. Writes
``experiments/results/bench_estimate.md``.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from werest.ingest.importers import import_table
from werest.ingest.table import write_table

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
RESULTS = Path(__file__).resolve().parent / "results"
TARGET = "google"


def build_input(n_targets: int, real: pd.DataFrame, path: Path) -> int:
    """Write an input with ``n_targets`` target rows; returns its total row count."""
    per_copy = int((real["system"] == TARGET).sum())
    copies = -(-n_targets // per_copy)
    table = pd.concat(
        [real.assign(dataset=real["dataset"] + f"#{i}") for i in range(copies)],
        ignore_index=True,
    )
    targets = table[table["system"] == TARGET].head(n_targets)
    keep = targets[["dataset", "utt_id"]].drop_duplicates()
    table = table.merge(keep, on=["dataset", "utt_id"])
    write_table(table, path)
    return len(table)


def run_estimate(path: Path, output_dir: Path) -> tuple[float, float]:
    """Seconds and peak RSS (MB) of one ``werest estimate`` process."""
    command = [
        sys.executable,
        "-m",
        "werest.cli",
        "estimate",
        f"input={path}",
        f"target={TARGET}",
        f"output_dir={output_dir}",
        "n_jobs=2",
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(peak, before) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    args = parser.parse_args()
    real = import_table("dighr", [SHARED / "dighr" / "en"])
    real = real.loc[
        real["dataset"] != "dighr-181215", ["dataset", "utt_id", "system", "hypothesis"]
    ]
    lines = [
        "# werest estimate at scale",
        "",
        f"`python experiments/bench_estimate.py` ({os.cpu_count()} cores; target `{TARGET}`, "
        "3 other systems per utterance, n_jobs=2, models/default.skops).",
        "",
        "| target rows | input rows | seconds | target rows/s | peak RSS (MB) |",
        "|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as scratch:
        for size in args.sizes:
            path = Path(scratch) / f"input_{size}.parquet"
            total = build_input(size, real, path)
            seconds, peak = run_estimate(path, Path(scratch) / f"out_{size}")
            lines.append(
                f"| {size:,} | {total:,} | {seconds:.1f} | {size / seconds:,.0f} | {peak:,.0f} |"
            )
            print(lines[-1], flush=True)
    report = "\n".join(lines) + "\n"
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_estimate.md").write_text(report, encoding="utf-8")
    print(report)


if __name__ == "__main__":
    main()
