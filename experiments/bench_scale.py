"""Bounded-memory ``werest estimate`` at 1M (and 10M) target rows: 1 process vs a 2-worker
Dask LocalCluster, wall time, peak memory, per-row cost by stage, and an extrapolation.

    PYTHONPATH=src .venv/bin/python experiments/bench_scale.py --sizes 1000000 [10000000]

The input is built from the dighr English import (the four multi-system folders, references
dropped, as in ``bench_estimate.py``): its real utterances are resampled under new utterance
ids (``<id>#<copy>``, same four datasets) until the table holds the wanted number of target
rows (system ``google``; the three other systems' rows come along: 1M targets = ~3.7M rows).
It is written as a folder of Parquet files, one per ~1M rows, never whole in memory. Each
configuration runs ``werest estimate`` in a fresh process; its memory is sampled every 0.2 s
over the whole process tree (the CLI, the Dask scheduler and nannies and workers): the peak of
the sum is what the machine must hold. Stage seconds come from the run's ``resources.json``.
The normaliser's share is measured apart: ``normalised_columns`` (each distinct string once)
on the first input file, scaled to the input. Writes ``experiments/results/bench_scale.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import psutil

from werest.ingest.importers import import_table
from werest.partition.engine import PARTITIONS_PER_PROCESS
from werest.text import AUTO, normalised_columns

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
RESULTS = Path(__file__).resolve().parent / "results"
TARGET = "google"
ROWS_PER_FILE = 1_000_000


def build_input(n_targets: int, real: pd.DataFrame, folder: Path) -> int:
    """Write a Parquet folder with ``n_targets`` target rows; returns its total row count."""
    utterances = real.loc[real["system"] == TARGET, ["dataset", "utt_id"]]
    per_copy = len(utterances)
    folder.mkdir(parents=True)
    written, copy, batch, number = 0, 0, [], 0
    remaining = n_targets
    while remaining > 0:
        keep = utterances.head(min(per_copy, remaining))
        rows = real.merge(keep, on=["dataset", "utt_id"])
        batch.append(rows.assign(utt_id=rows["utt_id"] + f"#{copy}"))
        remaining -= len(keep)
        copy += 1
        if sum(map(len, batch)) >= ROWS_PER_FILE or remaining <= 0:
            frame = pd.concat(batch, ignore_index=True)
            frame.to_parquet(folder / f"part-{number:04d}.parquet", index=False)
            written += len(frame)
            batch, number = [], number + 1
    return written


def run(input_folder: Path, output_dir: Path, overrides: list[str]) -> dict:
    """One ``werest estimate`` process: seconds, peak tree RSS (MB) and stage seconds."""
    command = [
        sys.executable,
        "-m",
        "werest.cli",
        "estimate",
        f"input={input_folder}",
        f"target={TARGET}",
        f"output_dir={output_dir}",
        *overrides,
    ]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    root = psutil.Process(process.pid)
    peak_single = 0.0
    timeline: list[tuple[float, float]] = []  # (seconds since start, tree MB)
    while process.poll() is None:
        try:
            tree = [root, *root.children(recursive=True)]
            sizes = [p.memory_info().rss for p in tree]
        except psutil.Error:
            sizes = []
        timeline.append((time.perf_counter() - start, sum(sizes) / 2**20))
        peak_single = max([peak_single, *(s / 2**20 for s in sizes)])
        time.sleep(0.2)
    seconds = time.perf_counter() - start
    load = os.getloadavg()[1]  # 5-minute load average: the machine is shared
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode})")
    resources = json.loads((output_dir / "resources.json").read_text())
    stages = resources.get("stage_seconds", {})
    return {
        "seconds": seconds,
        "peak_mb": max((mb for _, mb in timeline), default=0.0),
        "peak_single_mb": peak_single,
        "stage_peak_mb": stage_peaks(timeline, stages, seconds),
        "stages": stages,
        "partitions": resources.get("partitions"),
        "load": load,
    }


def stage_peaks(
    timeline: list[tuple[float, float]], stages: dict[str, float], seconds: float
) -> dict[str, float]:
    """The tree's peak MB within each stage. The stages are timed inside the run; the time
    they do not cover (start-up: imports, model load; and the last writes) is put before the
    first, so the windows are placed to within that tail (a second or two)."""
    peaks, end = {}, seconds - sum(stages.values())
    for stage, length in stages.items():
        begin, end = end, end + length
        peaks[stage] = max((mb for t, mb in timeline if begin <= t <= end), default=float("nan"))
    return peaks


def normaliser_cost(input_folder: Path) -> tuple[float, int, int]:
    """Seconds to normalise the first file's hypotheses (each distinct string once), its
    rows and its distinct strings."""
    frame = pd.read_parquet(sorted(input_folder.glob("*.parquet"))[0])
    start = time.perf_counter()
    normalised_columns(frame, AUTO, ("hypothesis",))
    return time.perf_counter() - start, len(frame), frame["hypothesis"].nunique()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--configs", nargs="+", default=["1 worker", "2 workers"])
    parser.add_argument("--work", type=Path, default=None, help="scratch folder")
    parser.add_argument(
        "--partitions", type=int, default=None, help="partition.count (default: automatic)"
    )
    parser.add_argument("--out", default="bench_scale", help="results/<out>.md and .json")
    args = parser.parse_args()
    common = ["partition.rows=1000000"]
    if args.partitions:
        common.append(f"partition.count={args.partitions}")
    configs = {
        # partitions in child processes, each replaced after partition.per_process (default)
        "1 worker": common,
        # every partition in the CLI's own process: the run before child processes
        "1 process": [*common, "partition.per_process=0"],
        "2 workers": [*common, "cluster=local"],
    }
    real = import_table("dighr", [SHARED / "dighr" / "en"])
    real = real.loc[
        real["dataset"] != "dighr-181215", ["dataset", "utt_id", "system", "hypothesis"]
    ]
    work = Path(tempfile.mkdtemp(prefix="bench-scale-", dir=args.work))
    measured = []
    try:
        for size in args.sizes:
            folder = work / f"input-{size}"
            n_rows = build_input(size, real, folder)
            for name in args.configs:
                result = run(folder, work / f"out-{size}-{name.replace(' ', '_')}", configs[name])
                result |= {"targets": size, "rows": n_rows, "config": name}
                result["partitions_setting"] = args.partitions
                measured.append(result)
                print(json.dumps(result), flush=True)
            norm_seconds, norm_rows, distinct = normaliser_cost(folder)
            measured.append(
                {
                    "normaliser": True,
                    "targets": size,
                    "rows": n_rows,
                    "seconds_first_file": norm_seconds,
                    "rows_first_file": norm_rows,
                    "distinct_first_file": distinct,
                }
            )
            print(json.dumps(measured[-1]), flush=True)
            shutil.rmtree(folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.out}.json").write_text(json.dumps(measured, indent=2) + "\n")
    (RESULTS / f"{args.out}.md").write_text(report(measured, " ".join(sys.argv[1:])))


def report(measured: list[dict], arguments: str) -> str:
    """The results table, the per-row cost by stage and the extrapolation, as markdown."""
    runs = [m for m in measured if not m.get("normaliser")]
    lines = [
        "# werest estimate in bounded memory (partitions, Dask)",
        "",
        f"`PYTHONPATH=src .venv/bin/python experiments/bench_scale.py {arguments}` on this "
        "2-core machine (shared with other jobs), target `google` with 3 other systems per "
        "utterance, default model, 1,000,000 input rows per chunk. Peak memory "
        "is the sum over the process tree (CLI + Dask scheduler, nannies and workers); load is "
        "the machine's 5-minute load average at the end of the run (other jobs share it).",
        "",
        "| target rows | input rows | partitions | configuration | seconds | target rows/s | "
        "peak MB (tree) | peak MB (largest process) | load |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for m in runs:
        lines.append(
            f"| {m['targets']:,} | {m['rows']:,} | {m['partitions']} | {m['config']} | "
            f"{m['seconds']:.1f} | "
            f"{m['targets'] / m['seconds']:,.0f} | {m['peak_mb']:,.0f} | "
            f"{m['peak_single_mb']:,.0f} | {m.get('load', float('nan')):.1f} |"
        )
    lines += [
        "",
        "Per-row cost by stage (µs per input row, wall; `spill` reads, validates and splits "
        "the input, in one child process; `sample_and_order` draws the guards' sample and the "
        "label-free order; `partitions` normalises, chooses proxies, computes features, "
        "predicts and writes each partition; `summary` sums and bootstraps):",
        "",
        "| target rows | configuration | spill | sample_and_order | partitions | summary |",
        "|---|---|---|---|---|---|",
    ]
    stages = ("spill", "sample_and_order", "partitions", "summary")
    for m in runs:
        cost = {k: 1e6 * v / m["rows"] for k, v in m["stages"].items()}
        cells = " | ".join(f"{cost.get(k, float('nan')):.1f}" for k in stages)
        lines.append(f"| {m['targets']:,} | {m['config']} | {cells} |")
    lines += [
        "",
        "Peak memory of the process tree within each stage (MB; start-up counts with spill):",
        "",
        "| target rows | configuration | spill | sample_and_order | partitions | summary |",
        "|---|---|---|---|---|---|",
    ]
    for m in (m for m in runs if "stage_peak_mb" in m):
        peaks = m["stage_peak_mb"]
        cells = " | ".join(f"{peaks.get(k, float('nan')):,.0f}" for k in stages)
        lines.append(f"| {m['targets']:,} | {m['config']} | {cells} |")
    for m in (m for m in measured if m.get("normaliser")):
        per_string = m["seconds_first_file"] / m["distinct_first_file"]
        for run in (r for r in runs if r["targets"] == m["targets"]):
            processes = {
                "2 workers": 2,
                "1 worker": -(-run["partitions"] // PARTITIONS_PER_PROCESS),  # recycled children
            }.get(run["config"], 1)
            cached = per_string * m["distinct_first_file"] * processes
            share = 100 * cached / run["stages"]["partitions"]
            uncached = 100 * per_string * m["distinct_first_file"] * run["partitions"]
            lines.append(
                f"\nNormaliser, {run['config']} ({m['targets']:,} targets): "
                f"{1e3 * per_string:.2f} ms per distinct string ({m['distinct_first_file']:,} "
                f"distinct hypotheses in the input, measured on its first file's "
                f"{m['rows_first_file']:,} rows: {m['seconds_first_file']:.1f} s). With the "
                f"per-process cache each is normalised once per process: {cached:.0f} s, "
                f"{share:.0f} % of the partition stage; without it, up to once per "
                "partition: up to "
                f"{uncached / run['stages']['partitions']:.0f} % (the resampled input repeats "
                "its strings; on traffic where every hypothesis differs the normaliser costs "
                f"{1e3 * per_string:.2f} ms per row and dominates)."
            )
    lines += ["", *extrapolation(runs)]
    return "\n".join(lines) + "\n"


def extrapolation(runs: list[dict]) -> list[str]:
    """1B target rows and a 100-node cluster, from the largest measured single-worker run."""
    single = [m for m in runs if m["config"] in ("1 worker", "1 process")]
    if not single:
        return []
    m = max(single, key=lambda r: r["targets"])
    rows_per_target = m["rows"] / m["targets"]
    per_row = {k: v / m["rows"] for k, v in m["stages"].items()}
    rows = 1e9 * rows_per_target
    hours = {k: v * rows / 3600 for k, v in per_row.items()}
    nodes, cores = 100, 32
    partitions_h = hours.get("partitions", 0) / (nodes * cores)
    return [
        "## Extrapolation",
        "",
        f"From the {m['targets']:,}-target single-worker run ({rows_per_target:.2f} input rows "
        f"per target row): 1B target rows are {rows / 1e9:.1f}B input rows. On one core: "
        f"spill {hours.get('spill', 0):.0f} h, guards' sample and order "
        f"{hours.get('sample_and_order', 0):.1f} h (it reads every utterance key once), "
        f"partitions {hours.get('partitions', 0):.0f} h, summary "
        f"{hours.get('summary', 0):.1f} h (mostly the bootstrap, linear in utterances).",
        "",
        f"A 100-node cluster of {cores}-core workers runs the partition stage in "
        f"{60 * partitions_h:.0f} min ({hours.get('partitions', 0):.0f} core-hours / "
        f"{nodes * cores} cores, partitions being independent; partition.count must then be "
        f"≥ {nodes * cores}, i.e. ~{rows / (nodes * cores) / 1e6:.1f}M input rows each, "
        f"~{2.4 * 1e9 / (nodes * cores) / 1e6:.1f} GB each at the in-memory run's 2.4 kB per "
        "target row: more partitions keep each one under a worker's memory). What does not "
        "shrink with nodes is what one process does: the spill "
        f"({hours.get('spill', 0):.0f} h on one core today: an input already written as a "
        "hash-partitioned Parquet folder skips it only once the spill reads files in "
        "parallel, which this version does not) and the summary's compact frame (the summary "
        "stage's peak grew ~175 B per target row from the 1M to the 10M run: ~175 GB at 1B "
        "rows; the exact bootstrap needs one (prediction·n̂, n̂) pair per utterance; beyond "
        "~20M rows on 4 GB a Poisson bootstrap accumulated per partition would bound it, at "
        "the price of intervals that "
        "are no longer identical to the in-memory run's).",
    ]


if __name__ == "__main__":
    main()
