"""Fingerprints of what `werest estimate`, `score`, `features` and `leaderboard` write on the
shared data, in memory and in partitions, so a refactoring can show its outputs did not
change byte for byte.

    PYTHONPATH=src python experiments/same_outputs.py --out before.json      # at one commit
    PYTHONPATH=src python experiments/same_outputs.py --out after.json       # at another
    python experiments/same_outputs.py --compare before.json after.json      # exit 1 if any differs

Inputs (imported from ``../shared/data`` in their original layouts): dighr's English folders
(5 systems with references) and mu-bench (9 systems, phone calls, 5 languages). Each command
runs in a fresh process, as a user runs it, once in memory and once in partitions
(``partition.rows``). Every file it writes is hashed (sha256), except ``resources.json``
(time and memory of the run) and the saved configs (``config.yaml``, ``<out>.config.yaml``: they
name the run's own folders).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
#: files whose bytes depend on the run, not on the code's results
SKIPPED = {"resources.json", "config.yaml"}
#: input rows read at a time in the partitioned runs (several partitions on these inputs)
PARTITION_ROWS = 5000


def inputs(work: Path) -> dict[str, Path]:
    """The input tables, imported once into ``work`` (and reused from there: a run on other
    code compares the same inputs)."""
    tables = {
        "dighr": ("dighr", [SHARED / "dighr" / "en"]),
        "mubench": ("mubench", [SHARED / "mubench"]),
    }
    paths = {}
    for name, (layout, sources) in tables.items():
        path = work / f"{name}.parquet"
        if not path.exists():
            from werest.ingest.importers import import_table

            import_table(layout, sources).to_parquet(path)
        paths[name] = path
    return paths


def commands(table: Path, out: Path) -> dict[str, list[str]]:
    """Each command's arguments, writing under ``out``."""
    return {
        "estimate": ["estimate", f"input={table}", f"output_dir={out / 'estimate'}"],
        "score": ["score", f"input={table}", f"output_dir={out / 'score'}"],
        "features": ["features", f"input={table}", f"out={out / 'features.parquet'}"],
        "leaderboard": ["leaderboard", f"input={table}", f"output_dir={out / 'leaderboard'}"],
    }


def run(args: list[str]) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    command = [sys.executable, "-m", "werest.cli", *args, "log_level=ERROR"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"failed: werest {' '.join(args)}\n{done.stderr[-2000:]}")


def fingerprints(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` (relative path -> digest), skipped names aside."""
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name not in SKIPPED and not path.name.endswith(".config.yaml")
    }


def compare(before: Path, after: Path) -> int:
    old = json.loads(before.read_text(encoding="utf-8"))
    new = json.loads(after.read_text(encoding="utf-8"))
    names = old.keys() | new.keys()
    differ = sorted(k for k in names if old.get(k) != new.get(k))
    for name in differ:
        state = "missing before" if name not in old else "missing after" if name not in new else ""
        print(f"differs: {name} {state}".rstrip())
    print(f"{len(names) - len(differ)} of {len(names)} files identical")
    return 1 if differ else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the fingerprints here (JSON)")
    parser.add_argument("--work", default=str(REPO / "outputs" / "same_outputs"))
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    options = parser.parse_args()
    if options.compare:
        raise SystemExit(compare(*map(Path, options.compare)))
    work = Path(options.work)
    work.mkdir(parents=True, exist_ok=True)
    found: dict[str, str] = {}
    for name, table in inputs(work).items():
        for mode, extra in (("memory", []), ("partitions", [f"partition.rows={PARTITION_ROWS}"])):
            out = work / "runs" / name / mode
            for command, args in commands(table, out).items():
                run([*args, *extra])
                print(f"{name} {mode} {command}: done", flush=True)
            found |= {f"{name}/{mode}/{k}": v for k, v in fingerprints(out).items()}
    Path(options.out).write_text(json.dumps(found, indent=1, sort_keys=True), encoding="utf-8")
    print(f"{len(found)} files fingerprinted -> {options.out}")


if __name__ == "__main__":
    main()
