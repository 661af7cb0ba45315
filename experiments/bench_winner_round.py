"""How long one round of the label loop takes: ``werest sample strategy=winner`` then
``werest estimate labels=[...]``, through the real CLI, each a fresh process as a user runs
them, on two tables (the references removed):

* ``afrispeech``: about 5,000 utterances and 8 systems (AfriSpeech's test split, clinical
  and general as one dataset);
* ``librispeech``: LibriSpeech test-clean, 2,620 utterances and 54 systems: verli's 27
  engines (``werest import verli``), AfriSpeech's 23 and dighr's 4 (``190423``), joined into
  one dataset as ``conf/data/all_shared.yaml`` joins them.

    python experiments/bench_winner_round.py [--rounds 3] [--repeats 3] [--systems 8]
        [--tables ...] [--fingerprints FILE] [--src DIR]

Writes ``experiments/results/bench_winner_round.md`` and ``.json``: the seconds of each
command of each round (the first round fills the cache, the later ones read it), the CPU
seconds of the round, and the machine's load when it started and ended. The rounds run
``--repeats`` times per table, each run in a fresh folder (a cold cache), and each bar is read
on the median over the runs: on a shared 2-core machine one round varies by a second or two
from run to run. The bars (issue
41, issue 47): on 2 cores, a round on the 8-system table in at most 10 s, the first one
(cache filling) included; any round on the 54-system table in at most 30 s.
``--fingerprints FILE`` also writes the sha256 of what each round wrote (the sheet,
``winner.json``, ``summary.json``, ``utterances.csv``, ``pairs.csv``), so two commits can be
shown to write the same bytes (``--compare A B``). Each command runs this checkout's code
(``python -m werest.cli`` with ``src/`` first on ``PYTHONPATH``), not whatever an installed
``werest`` script imports; ``--src DIR`` runs another checkout's ``src/`` instead (e.g. the
commit before a change, for its fingerprints) and prints its timings without writing them.
The commands write werest's bytecode (``__pycache__``, git-ignored) and read it after, as an
installed werest does, whatever ``PYTHONDONTWRITEBYTECODE`` says.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
SHARED = ROOT.parent / "shared" / "data"
#: the ``werest`` each command runs: this checkout's code (``src/``) with this interpreter,
#: not whatever an installed ``werest`` script imports (``--src`` runs another tree's code)
WEREST = [sys.executable, "-m", "werest.cli"]
SOURCE = {"src": ROOT / "src"}
#: per table: the bar of its first round and of its later rounds (seconds, 2 cores)
BARS = {"afrispeech": (10.0, 10.0), "librispeech": (30.0, 30.0)}
#: what a round writes that the fingerprints hash (``est/``: werest estimate's folder)
WRITTEN = ("winner.json", "summary.json", "utterances.csv", "pairs.csv")


def timed(*args: str, cwd: Path) -> tuple[float, float]:
    """The seconds a ``werest`` command takes, and the CPU seconds it used (user and
    system: on a busy machine the first grows with the load, the second much less)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    path = os.pathsep.join([str(SOURCE["src"]), os.environ.get("PYTHONPATH", "")])
    # werest's bytecode is written once and read after, as an installed werest's is: with
    # PYTHONDONTWRITEBYTECODE set, each command would compile its modules again (~0.15 s)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(
        [*WEREST, *args, "progress=false"],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env=env | {"PYTHONPATH": path.rstrip(os.pathsep)},
    )
    if done.returncode:
        sys.exit(f"werest {' '.join(args)} failed:\n{done.stderr}")
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return seconds, cpu


def fill(sheet: Path, truth: pd.Series) -> None:
    rows = pd.read_csv(sheet, keep_default_na=False, dtype={"utt_id": str})
    keys = list(zip(rows["dataset"], rows["utt_id"], strict=True))
    rows["reference"] = [truth[k] for k in keys]
    rows.to_csv(sheet, index=False)


def afrispeech_table(work: Path, n_systems: int) -> pd.DataFrame:
    """AfriSpeech's test split (clinical and general as one dataset), its first systems."""
    timed("import", "afrispeech", str(SHARED / "afrispeech"), "--out", "all.parquet", cwd=work)
    table = pd.read_parquet(work / "all.parquet")
    table = table[table["dataset"].str.startswith("afrispeech-test")].assign(
        dataset="afrispeech-test"
    )
    systems = sorted(table["system"].unique())[:n_systems]
    return table[table["system"].isin(systems)]


def librispeech_table(work: Path) -> pd.DataFrame:
    """LibriSpeech test-clean with 54 systems: dighr's ``190423``, AfriSpeech's and verli's
    runs joined into one dataset (verli's references are dighr's), as
    ``conf/data/all_shared.yaml`` joins them."""
    from werest.model.training import load_sources

    return load_sources(
        {
            "sources": [
                {"format": "dighr", "paths": [str(SHARED / "dighr" / "en" / "190423")]},
                {
                    "format": "afrispeech",
                    "paths": [str(SHARED / "afrispeech")],
                    "datasets": ["librispeech-test-clean"],
                },
                {
                    "format": "verli",
                    "paths": [str(SHARED / "verli")],
                    "reference": str(SHARED / "dighr" / "en" / "190423"),
                },
            ],
            "rename": {"dighr-190423": "librispeech-test-clean"},
        }
    )


def run_rounds(work: Path, table: pd.DataFrame, n_rounds: int, fingerprints: list) -> list:
    """The rounds on ``table`` (written to ``work/calls.parquet`` without references)."""
    truth = table.drop_duplicates(["dataset", "utt_id"]).set_index(["dataset", "utt_id"])
    truth = truth["reference"]
    table.drop(columns=["reference"]).to_parquet(work / "calls.parquet")
    sheets: list[str] = []
    rounds = []
    for number in range(n_rounds):
        sheet = f"s{number}.csv"
        given = [f"labels=[{','.join(sheets)}]"] if sheets else []
        sample = timed(
            "sample",
            "input=calls.parquet",
            "strategy=winner",
            "budget=10",
            f"out={sheet}",
            *given,
            cwd=work,
        )
        fingerprints.append({"round": number + 1, "sheet": digest(work / sheet)})
        fill(work / sheet, truth)
        sheets.append(sheet)
        estimate = timed(
            "estimate",
            "input=calls.parquet",
            f"labels=[{','.join(sheets)}]",
            "output_dir=est",
            cwd=work,
        )
        fingerprints[-1] |= {name: digest(work / "est" / name) for name in WRITTEN}
        rounds.append(
            {
                "round": number + 1,
                "sample_s": round(sample[0], 2),
                "estimate_s": round(estimate[0], 2),
                "round_s": round(sample[0] + estimate[0], 2),
                "round_cpu_s": round(sample[1] + estimate[1], 2),
            }
        )
    return rounds


def digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="runs of the rounds per table, each from a cold cache",
    )
    parser.add_argument("--systems", type=int, default=8, help="of the afrispeech table")
    parser.add_argument("--tables", nargs="+", choices=list(BARS), default=list(BARS))
    parser.add_argument("--fingerprints", type=Path, help="write each round's output hashes")
    parser.add_argument("--compare", nargs=2, type=Path, help="two fingerprint files")
    parser.add_argument(
        "--src",
        type=Path,
        help="run the werest of this src/ folder (another commit's checkout); its timings "
        "are not written to experiments/results, only its --fingerprints",
    )
    args = parser.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    if args.src:
        SOURCE["src"] = args.src.resolve()
    for folder in ("afrispeech", "dighr", "verli"):
        if not (SHARED / folder).is_dir():
            sys.exit(f"needs {SHARED / folder} (../shared beside the repo)")
    load_start = os.getloadavg()
    tables, prints = [], {}
    for name in args.tables:
        with tempfile.TemporaryDirectory() as folder:
            work = Path(folder)
            table = (
                afrispeech_table(work, args.systems)
                if name == "afrispeech"
                else librispeech_table(work)
            )
            prints[name] = []
            rounds = []
            for run in range(1, args.repeats + 1):  # each in a fresh folder: a cold cache
                folder = work / f"run{run}"
                folder.mkdir()
                kept = prints[name] if run == 1 else []
                rounds += [{"run": run} | r for r in run_rounds(folder, table, args.rounds, kept)]
            first, later = BARS[name]
            tables.append(
                {
                    "table": name,
                    "utterances": int(table[["dataset", "utt_id"]].drop_duplicates().shape[0]),
                    "systems": int(table["system"].nunique()),
                    "bar_first_s": first,
                    "bar_later_s": later,
                    "rounds": rounds,
                }
            )
    result = {
        "cores": os.cpu_count(),
        "load_start": round(load_start[0], 2),
        "load_end": round(os.getloadavg()[0], 2),
        "repeats": args.repeats,
        "tables": tables,
    }
    if args.src:
        print(json.dumps(result, indent=2))
    else:
        (RESULTS / "bench_winner_round.json").write_text(json.dumps(result, indent=2) + "\n")
        write_markdown(result)
    if args.fingerprints:
        args.fingerprints.write_text(json.dumps(prints, indent=2) + "\n")


def compare(before: Path, after: Path) -> int:
    """1 if any round wrote other bytes (or a file one run wrote and the other did not)."""
    old, new = (json.loads(Path(p).read_text()) for p in (before, after))
    differ = [
        f"{table} round {a['round']}: {key}"
        for table in sorted(set(old) & set(new))
        for a, b in zip(old[table], new[table], strict=False)
        for key in sorted(set(a) | set(b))
        if a.get(key) != b.get(key)
    ]
    print("\n".join(differ) if differ else "the same bytes in every round compared")
    return 1 if differ else 0


TITLES = {
    "afrispeech": "AfriSpeech test, 8 systems",
    "librispeech": "LibriSpeech test-clean, 54 systems",
}


def write_markdown(result: dict) -> None:
    from werest.formatting import markdown_table

    lines = [
        "# One round of the label loop",
        "",
        "Written by `python experiments/bench_winner_round.py`: `werest sample "
        "strategy=winner budget=10 labels=[...]` then `werest estimate labels=[...]`, each a "
        "fresh process as a user runs them (the first round with no labels: it fills the "
        "cache; werest's bytecode compiled once, as an installed werest's is), references "
        f"removed, {result['cores']} cores, 1-minute load "
        f"{result['load_start']} at the start and {result['load_end']} at the end "
        "(`round_cpu_s`: the CPU seconds of the round's two processes, which grow less with "
        "the load of other work on the machine than the seconds a person waits). Each table's "
        f"rounds ran {result.get('repeats', 1)} times, each run from a cold cache in a fresh "
        "folder; a bar is read on the median over the runs of its round (a later round's: "
        "the slowest round's median), beside the slowest single round.",
    ]
    bars = []
    for table in result["tables"]:
        rounds = pd.DataFrame(table["rounds"])
        typical = rounds.groupby("round")["round_s"].median()  # over the runs
        first, later = typical[typical.index == 1], typical[typical.index > 1]
        worst = rounds.groupby(rounds["round"] > 1)["round_s"].max()
        title = TITLES.get(table["table"], table["table"])
        lines += [
            "",
            f"## {title}: {table['utterances']:,} utterances × {table['systems']} systems",
            "",
            markdown_table(rounds),
        ]
        if len(first):
            bars.append((f"{title}: the first round", table["bar_first_s"], first, worst[False]))
        if len(later):
            bars.append((f"{title}: a later round", table["bar_later_s"], later, worst[True]))
    held = pd.DataFrame(
        [
            {
                "round": name,
                "bar_s": f"≤ {bar:g}",
                "median_s": f"{seconds.max():.1f}",
                "slowest_s": f"{slowest:.1f}",
                "holds": "yes" if seconds.max() <= bar else "no",
            }
            for name, bar, seconds, slowest in bars
        ]
    )
    lines[3:3] = ["", "## The bars", "", markdown_table(held)] if len(held) else []
    (RESULTS / "bench_winner_round.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS / 'bench_winner_round.md'}")


if __name__ == "__main__":
    main()
