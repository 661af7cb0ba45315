"""How `werest estimate` scales with the number of systems S and of utterances N, against the
floor of the same normalisation and alignment work done by a bare rapidfuzz loop.

    PYTHONPATH=src .venv/bin/python experiments/bench_systems.py            # the whole grid
    PYTHONPATH=src .venv/bin/python experiments/bench_systems.py --quick    # S ≤ 8, N = 1k

Tables (built from ``../shared/data`` in their original layouts, written under ``--work``):

* **LibriSpeech test-clean with ~50 systems**: dighr's 190423 folder (4 systems), AfriSpeech's
  LibriSpeech results and verli's engines join on the same 2,620 utterance ids (as
  ``conf/data/all_shared.yaml`` joins them). For each S the S systems with the most
  utterances (ties by name) are kept; for each N, N utterances are drawn (seeded), and for N
  above 2,620 the utterances are repeated under new ids. References are dropped: every
  system is a target, as a user without references runs it.
* **AfriSpeech test** (25 systems × 5,471 utterances, no references) and the **whole
  AfriSpeech table** (one target, ``openai/whisper-large``, and the leaderboard of every
  system, references kept).

Each run is ``werest estimate`` (or ``werest leaderboard``) in a fresh process under
``/usr/bin/time``: wall seconds and peak resident memory (maximum RSS of the process). The
floor, per (S, N): each distinct hypothesis normalised once (the same normaliser), then, per
utterance, every pair werest compares (its panel's pairs, plus every pair on the guards'
sample of utterances) aligned once in words and characters with rapidfuzz's
``Levenshtein.distance``, and each target's pair with its proxy split into S/D/I
(``Levenshtein.editops``), in a plain Python loop. The growth exponent is the slope of
log(time) against log(S) (or log(N)), fitted by least squares.

Writes ``experiments/results/bench_systems.md`` and ``bench_systems.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from werest.features.agreement import PANEL_SIZE

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
RESULTS = REPO / "experiments" / "results"
LIBRISPEECH = "librispeech-test-clean"
SYSTEMS = (2, 4, 8, 16, 25, 50)
UTTERANCES = (1000, 4000, 16000)


def librispeech_table(work: Path) -> pd.DataFrame:
    """Every LibriSpeech test-clean system of the shared data, one dataset."""
    from werest.ingest.importers import import_table

    path = work / "librispeech.parquet"
    if path.exists():
        return pd.read_parquet(path)
    dighr = import_table("dighr", [SHARED / "dighr" / "en" / "190423"])
    dighr["dataset"] = LIBRISPEECH
    afri = import_table("afrispeech", [SHARED / "afrispeech"])
    afri = afri[afri["dataset"] == LIBRISPEECH]
    verli = import_table("verli", [SHARED / "verli"], reference=SHARED / "dighr" / "en" / "190423")
    columns = ["dataset", "utt_id", "system", "hypothesis"]
    table = pd.concat([frame[columns] for frame in (dighr, afri, verli)], ignore_index=True)
    table = table.drop_duplicates(["dataset", "utt_id", "system"], ignore_index=True)
    table.to_parquet(path)
    return table


def subset(table: pd.DataFrame, systems: int, utterances: int, seed: int = 0) -> pd.DataFrame:
    """``systems`` systems (most utterances first) on ``utterances`` utterances (repeated under
    new ids beyond the table's own)."""
    counts = table.groupby("system").size().reset_index(name="n")
    chosen = counts.sort_values(["n", "system"], ascending=[False, True])["system"][:systems]
    rows = table[table["system"].isin(chosen)]
    ids = np.sort(rows["utt_id"].unique())
    rng = np.random.default_rng(seed)
    copies, parts = 0, []
    while sum(len(p) for p in parts) < utterances:
        take = rng.permutation(ids)[: utterances - sum(len(p) for p in parts)]
        parts.append(pd.DataFrame({"utt_id": take, "copy": copies}))
        copies += 1
    picked = pd.concat(parts, ignore_index=True)
    out = rows.merge(picked, on="utt_id")
    out["utt_id"] = out["utt_id"] + np.where(out["copy"] > 0, "#" + out["copy"].astype(str), "")
    return out.drop(columns="copy").reset_index(drop=True)


def timed_run(args: list[str], timeout: float) -> dict:
    """One werest command in a fresh process: wall seconds and peak RSS (MB), or a timeout."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    command = ["/usr/bin/time", "-f", "%e %M", sys.executable, "-m", "werest.cli", *args]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        return {"status": f"timeout {timeout:.0f} s", "seconds": None, "peak_mb": None}
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-2:]
        return {"status": f"failed: {' | '.join(tail)}", "seconds": None, "peak_mb": None}
    seconds, kilobytes = done.stderr.strip().splitlines()[-1].split()
    return {"status": "ok", "seconds": float(seconds), "peak_mb": int(kilobytes) / 1024}


def floor_seconds(table: pd.DataFrame, pairs_per_utterance) -> float:
    """The bare normalise-and-align loop for ``table`` (see the module docstring)."""
    from rapidfuzz.distance import Levenshtein

    from werest.estimation.guards import sample_keys
    from werest.text import get_normaliser

    start = time.perf_counter()
    normalise = get_normaliser("whisper_english", None)
    distinct = {text: normalise(text) for text in table["hypothesis"].unique()}
    vocabulary: dict[str, int] = {}
    words = {
        text: [vocabulary.setdefault(w, len(vocabulary)) for w in text.split()]
        for text in distinct.values()
    }
    sampled = set(sample_keys(table[["dataset", "utt_id"]]).itertuples(index=False, name=None))
    for utterance, group in table.groupby(["dataset", "utt_id"], sort=False):
        texts = [distinct[h] for h in group["hypothesis"]]
        pairs = list(pairs_per_utterance(len(texts)))
        if utterance in sampled:  # the guards' sample aligns every pair once more
            pairs += list(all_pairs(len(texts)))
        for i, j in pairs:
            Levenshtein.distance(words[texts[i]], words[texts[j]])
            Levenshtein.distance(texts[i].strip(), texts[j].strip())
        for i in range(1, len(texts)):  # each target against a proxy: the S/D/I split
            Levenshtein.editops(words[texts[i]], words[texts[0]])
            Levenshtein.editops(texts[i].strip(), texts[0].strip())
    return time.perf_counter() - start


def panel_pairs(n: int, size: int = PANEL_SIZE):
    """The unordered pairs werest's features align among n systems (best first): the panel's
    ``size + 1`` members with each other, every other system with the ``size`` best
    (:class:`werest.features.agreement.Panel`)."""
    members = min(n, size + 1)
    yield from ((i, j) for i in range(members) for j in range(i + 1, members))
    yield from ((i, j) for j in range(members, n) for i in range(min(size, n)))


def all_pairs(n: int):
    """Every unordered pair of n systems: the guards' and the proxy order's sample."""
    return ((i, j) for i in range(n) for j in range(i + 1, n))


def exponent(xs, ys) -> float | None:
    """The least-squares slope of log y against log x (None with fewer than two points)."""
    points = [(x, y) for x, y in zip(xs, ys, strict=True) if y]
    if len(points) < 2:
        return None
    x, y = np.log([p[0] for p in points]), np.log([p[1] for p in points])
    return float(np.polyfit(x, y, 1)[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=str(REPO / "outputs" / "bench_systems"))
    parser.add_argument("--quick", action="store_true", help="S ≤ 8 and N = 1k only")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--out", default="bench_systems")
    parser.add_argument(
        "--report-only", action="store_true", help="rewrite the report from <out>.json"
    )
    options = parser.parse_args()
    if options.report_only:
        saved = json.loads((RESULTS / f"{options.out}.json").read_text(encoding="utf-8"))
        frame = pd.DataFrame(saved["grid"])
        growth_s = {int(k): v for k, v in saved["growth_in_systems"].items()}
        growth_n = {int(k): v for k, v in saved["growth_in_utterances"].items()}
        write_report(
            options.out,
            frame,
            growth_s,
            growth_n,
            saved["afrispeech"],
            saved["startup_seconds"],
            saved.get("load_5min"),
        )
        return
    work = Path(options.work)
    work.mkdir(parents=True, exist_ok=True)
    systems = [s for s in SYSTEMS if s <= 8] if options.quick else list(SYSTEMS)
    sizes = [1000] if options.quick else list(UTTERANCES)
    table = librispeech_table(work)
    # the fixed cost of a run (imports, loading the model): werest estimate on the demo table
    from werest.demo import demo_table_path

    startup = timed_run(
        ["estimate", f"input={demo_table_path()}", f"output_dir={work / 'startup'}"],
        options.timeout,
    )["seconds"]
    grid = []
    for n in sizes:
        for s in systems:
            rows = subset(table, s, n)
            path = work / f"ls_{s}_{n}.parquet"
            rows.drop(columns=["reference"], errors="ignore").to_parquet(path)
            run = timed_run(
                [
                    "estimate",
                    f"input={path}",
                    f"output_dir={work / f'out_{s}_{n}'}",
                    "log_level=ERROR",
                ],
                options.timeout,
            )
            floor = floor_seconds(rows, panel_pairs)
            record = {
                "systems": s,
                "utterances": n,
                "rows": len(rows),
                **run,
                "rows_per_s": len(rows) / run["seconds"] if run["seconds"] else None,
                "floor_seconds": floor,
                "ratio_to_floor": run["seconds"] / floor if run["seconds"] else None,
                "ratio_after_startup": (run["seconds"] - startup) / floor
                if run["seconds"]
                else None,
            }
            grid.append(record)
            print(json.dumps(record), flush=True)
    frame = pd.DataFrame(grid)
    growth_s = {n: _growth(frame[frame["utterances"] == n], "systems", 8) for n in sizes}
    growth_n = {s: _growth(frame[frame["systems"] == s], "utterances", 0) for s in systems}
    afrispeech = [] if options.quick else afrispeech_runs(work, options.timeout)
    load = os.getloadavg()[1]
    write_report(options.out, frame, growth_s, growth_n, afrispeech, startup, load)


def afrispeech_runs(work: Path, timeout: float) -> list[dict]:
    """The AfriSpeech runs: every system of the test split, one target over
    the whole table, and the whole table's leaderboard."""
    from werest.ingest.importers import import_table

    whole = work / "afrispeech.parquet"
    if not whole.exists():
        import_table("afrispeech", [SHARED / "afrispeech"]).to_parquet(whole)
    table = pd.read_parquet(whole)
    test = work / "afrispeech_test.parquet"
    rows = table[table["dataset"].str.startswith("afrispeech-test")]
    rows.drop(columns=["reference"]).to_parquet(test)
    runs = [
        (
            f"every system of AfriSpeech test ({rows['system'].nunique()} systems, "
            f"{rows[['dataset', 'utt_id']].drop_duplicates().shape[0]:,} utterances, "
            f"{len(rows):,} rows, no references)",
            ["estimate", f"input={test}", f"output_dir={work / 'afri_test'}"],
        ),
        (
            f"one target (openai/whisper-large) over all AfriSpeech ({len(table):,} rows)",
            [
                "estimate",
                f"input={whole}",
                "target=openai/whisper-large",
                f"output_dir={work / 'afri_one'}",
            ],
        ),
        (
            f"leaderboard of every AfriSpeech system ({table['system'].nunique()} systems)",
            ["leaderboard", f"input={whole}", f"output_dir={work / 'afri_board'}"],
        ),
    ]
    out = []
    for name, args in runs:
        record = {"run": name, **timed_run([*args, "log_level=ERROR"], timeout)}
        print(json.dumps(record), flush=True)
        out.append(record)
    return out


def write_report(
    name: str,
    frame: pd.DataFrame,
    growth_s,
    growth_n,
    afrispeech,
    startup: float,
    load: float | None,
) -> None:
    """The markdown report and the JSON beside it; ``load``: the 5-minute load average when
    the runs ended (None: not recorded)."""
    from werest.formatting import markdown_table

    shown = frame.assign(
        seconds=frame["seconds"].map(lambda v: f"{v:.1f}" if v else ""),
        peak_mb=frame["peak_mb"].map(lambda v: f"{v:,.0f}" if v else ""),
        rows_per_s=frame["rows_per_s"].map(lambda v: f"{v:,.0f}" if v else ""),
        floor_seconds=frame["floor_seconds"].map(lambda v: f"{v:.1f}"),
        ratio_to_floor=frame["ratio_to_floor"].map(lambda v: f"{v:.2f}" if v else ""),
        ratio_after_startup=frame["ratio_after_startup"].map(lambda v: f"{v:.2f}" if v else ""),
    )
    at_end = "not recorded" if load is None else f"{load:.1f}"
    lines = [
        "# `werest estimate` against the number of systems",
        "",
        f"`python experiments/bench_systems.py` on {os.cpu_count()} cores (5-minute load "
        f"{at_end} at the end). Every system is a target; no references. Peak MB: the "
        "process's maximum resident memory. Floor: the same normalisations and alignments in "
        "a bare rapidfuzz loop (module docstring). Start-up: a run's fixed cost (imports, "
        f"loading the model), `werest estimate` on the 56-row demo table: {startup:.1f} s; "
        "`ratio_after_startup` = (seconds − start-up) / floor.",
        "",
        "## LibriSpeech test-clean, S systems × N utterances",
        "",
        markdown_table(shown),
        "",
        "## Growth exponents",
        "",
        "Slope of log(seconds) against log(S) for S ≥ 8 at each N, and against log(N) at "
        "each S (1 = linear).",
        "",
        markdown_table(
            pd.DataFrame([{"N": n, "exponent in S (S ≥ 8)": _fmt(v)} for n, v in growth_s.items()])
        ),
        "",
        markdown_table(
            pd.DataFrame([{"S": s, "exponent in N": _fmt(v)} for s, v in growth_n.items()])
        ),
        "",
        "## Memory guide",
        "",
        memory_guide(frame),
        "",
    ]
    if afrispeech:
        runs = pd.DataFrame(afrispeech)
        runs["seconds"] = runs["seconds"].map(lambda v: f"{v:.1f}" if v else "")
        runs["peak_mb"] = runs["peak_mb"].map(lambda v: f"{v:,.0f}" if v else "")
        lines += ["## AfriSpeech", "", markdown_table(runs), ""]
    (RESULTS / f"{name}.md").write_text("\n".join(lines), encoding="utf-8")
    payload = {
        "grid": frame.to_dict(orient="records"),
        "growth_in_systems": {str(k): v for k, v in growth_s.items()},
        "growth_in_utterances": {str(k): v for k, v in growth_n.items()},
        "afrispeech": afrispeech,
        "startup_seconds": startup,
        "load_5min": load,
    }
    (RESULTS / f"{name}.json").write_text(json.dumps(payload, indent=1), encoding="utf-8")
    print("\n".join(lines))


def memory_guide(frame: pd.DataFrame) -> str:
    """Peak memory as a fixed cost plus a cost per target row: the least-squares line of
    peak MB against rows over the grid's runs, with the largest relative miss."""
    done = frame.dropna(subset=["peak_mb"])
    per_row, fixed = np.polyfit(done["rows"], done["peak_mb"], 1)
    fitted = fixed + per_row * done["rows"]
    miss = float(np.max(np.abs(done["peak_mb"] - fitted) / done["peak_mb"]))
    return (
        f"Peak resident memory ≈ {fixed:,.0f} MB + {per_row * 1e5:,.0f} MB per 100,000 target "
        f"rows (least squares over the {len(done)} LibriSpeech runs of the grid, 2 to 50 "
        f"systems; the largest miss is {miss:.0%} of a run's peak, on the smallest runs): "
        "budget by the number of target rows, and check the grid's runs nearest yours."
    )


def _growth(rows: pd.DataFrame, column: str, smallest: int) -> float | None:
    """The growth exponent of seconds in ``column`` over the rows with ``column`` ≥
    ``smallest``."""
    kept = rows[rows[column] >= smallest]
    return exponent(kept[column].tolist(), kept["seconds"].tolist())


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


if __name__ == "__main__":
    main()
