"""Throughput of normalisation and agreement features on 100k rows built from the shared data.

    .venv/bin/python experiments/bench_features.py [--rows 100000] [--out experiments/results]

Two 100k-row tables are built from the dighr English import (the four multi-system folders):
``tiled``, the real rows repeated under new dataset names (as many distinct strings as the real
data has: systems often agree and utterances repeat), and ``distinct``, where each synthetic
utterance joins the hypotheses (per system) of two real utterances, so nearly every string is
new and the each-distinct-string-once cache cannot help (the worst case). Measured: rows/s of
whisper_english normalisation of every hypothesis, and of the end-to-end agreement features
(proxy choice + normalisation + word and character alignments), for n_jobs 1 and 2. Writes
``bench_features.md`` in the output folder and prints it.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import time
from pathlib import Path

import pandas as pd

from werest.features.agreement import agreement_features
from werest.features.proxy import Ranking, choose_proxies
from werest.ingest.importers import import_table
from werest.text import normalise_many

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def real_rows() -> pd.DataFrame:
    table = import_table("dighr", [SHARED / "dighr" / "en"])
    keep = table["dataset"] != "dighr-181215"  # one system family: no proxies there
    return table.loc[keep, ["dataset", "utt_id", "system", "hypothesis"]]


def tiled_rows(n_rows: int) -> pd.DataFrame:
    """The real rows repeated under new dataset names, cut at whole utterances."""
    table = real_rows()
    copies = -(-n_rows // len(table))
    rows = pd.concat(
        [table.assign(dataset=table["dataset"] + f"#{i}") for i in range(copies)],
        ignore_index=True,
    )
    return _cut(rows, n_rows)


def distinct_rows(n_rows: int) -> pd.DataFrame:
    """Rows whose hypotheses join two real utterances' (per system): nearly all distinct."""
    table = real_rows()
    parts, offset, total = [], 1, 0
    while total < n_rows:
        wide = table.pivot(index=["dataset", "utt_id"], columns="system", values="hypothesis")
        shifted = wide.groupby(level="dataset").shift(-offset)
        joined = (wide + " " + shifted).stack().dropna().rename("hypothesis").reset_index()
        joined["utt_id"] = joined["utt_id"] + f"+{offset}"
        parts.append(joined)
        total += len(joined)
        offset += 1
    return _cut(pd.concat(parts, ignore_index=True), n_rows)


def _cut(rows: pd.DataFrame, n_rows: int) -> pd.DataFrame:
    """The first utterances (all their systems) holding at most ``n_rows`` rows."""
    utterances = rows[["dataset", "utt_id"]].drop_duplicates()
    counts = rows.groupby(["dataset", "utt_id"], sort=False).size().cumsum()
    keep = utterances.set_index(["dataset", "utt_id"]).index[counts.to_numpy() <= n_rows]
    return rows.set_index(["dataset", "utt_id"]).loc[keep].reset_index()


def timed(function, *args, **kwargs) -> tuple[object, float]:
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    args = parser.parse_args()
    ranking = Ranking.from_order(["azure", "deepspeech", "google", "watson", "deepspeech2"])
    lines = [
        "# Feature throughput",
        "",
        f"`python experiments/bench_features.py --rows {args.rows}` "
        f"({platform.machine()}, {os.cpu_count()} cores).",
        "",
        "| table | rows | distinct hypotheses | step | n_jobs | seconds | rows/s |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, build in (("tiled", tiled_rows), ("distinct", distinct_rows)):
        rows = build(args.rows)
        head = f"| {name} | {len(rows):,} | {rows['hypothesis'].nunique():,} |"
        for n_jobs in (1, 2):
            _, seconds = timed(normalise_many, rows["hypothesis"], n_jobs=n_jobs)
            lines.append(
                f"{head} normalisation (whisper_english) | {n_jobs} | {seconds:.2f} | "
                f"{len(rows) / seconds:,.0f} |"
            )
            start = time.perf_counter()
            features = agreement_features(rows, choose_proxies(rows, ranking), n_jobs=n_jobs)
            seconds = time.perf_counter() - start
            lines.append(
                f"{head} agreement features end to end | {n_jobs} | {seconds:.2f} | "
                f"{len(features) / seconds:,.0f} |"
            )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines += ["", f"Peak resident memory of the main process: {peak:,.0f} MB."]
    report = "\n".join(lines) + "\n"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench_features.md").write_text(report, encoding="utf-8")
    print(report)


if __name__ == "__main__":
    main()
