"""Fingerprints of what `werest estimate`, `score`, `features`, `leaderboard` and the label
loop (`sample`, `estimate labels=`) write on the shared data and the demo, in memory and in
partitions, so a refactoring can show its outputs did not change byte for byte.

    python experiments/same_outputs.py --out before.json --repo /tmp/before  # at one commit
    python experiments/same_outputs.py --out after.json                      # at this one
    python experiments/same_outputs.py --compare before.json after.json      # exit 1 if any differs

``--repo``: the checkout whose ``src`` runs (default: this one's).

Inputs (imported from ``../shared/data`` in their original layouts): dighr's English folders
(5 systems with references) and mu-bench (9 systems, phone calls, 5 languages), and the
embedded demo table. Each command runs in a fresh process, as a user runs it, once in memory
and once in partitions (``partition.rows``). The label loop runs in memory (the sheets'
references filled from the table's own): ``sample`` with each strategy, then two rounds of
``strategy=winner`` and ``estimate labels=`` on them. Every file it writes is hashed
(sha256), except ``resources.json`` (time and memory of the run) and the saved configs
(``config.yaml``, ``<out>.config.yaml``: they name the run's own folders).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
#: files whose bytes depend on the run, not on the code's results
SKIPPED = {"resources.json", "config.yaml"}
#: the code that runs (``--repo``)
SOURCE = REPO / "src"
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
    from werest.demo import demo_table_path

    paths = {"demo": work / "demo.csv"}
    if not paths["demo"].exists():
        paths["demo"].write_bytes(demo_table_path().read_bytes())
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


def loop(table: Path, out: Path) -> None:
    """The label loop on ``table``: a sheet of each strategy, then two rounds of
    ``strategy=winner``, each sheet filled with the table's references, and ``estimate
    labels=`` on the sheets so far."""
    import pandas as pd

    out.mkdir(parents=True, exist_ok=True)
    for strategy in ("random", "active", "stratified"):
        run(
            [
                "sample",
                f"input={table}",
                "budget=12",
                f"strategy={strategy}",
                f"out={out / strategy}.csv",
            ]
        )
    frame = pd.read_parquet(table) if table.suffix == ".parquet" else pd.read_csv(table, dtype=str)
    truth = frame.dropna(subset=["reference"]).drop_duplicates(["dataset", "utt_id"])
    truth = truth.set_index(["dataset", "utt_id"])["reference"]
    sheets: list[str] = []
    for number in range(2):
        sheet = out / f"winner{number}.csv"
        labels = [f"labels=[{','.join(sheets)}]"] if sheets else []
        run(["sample", f"input={table}", "budget=15", "strategy=winner", f"out={sheet}", *labels])
        if not sheet.exists():  # every dataset answered: sample writes nothing (issue 49)
            break
        rows = pd.read_csv(sheet, dtype=str, keep_default_na=False)
        if rows.empty:  # every dataset answered: before issue 49, an empty sheet
            sheet.unlink()
            break
        keys = pd.MultiIndex.from_frame(rows[["dataset", "utt_id"]])
        rows["reference"] = truth.reindex(keys).fillna("").to_numpy()
        rows.to_csv(sheet, index=False)
        sheets.append(str(sheet))
        run(
            [
                "estimate",
                f"input={table}",
                f"labels=[{','.join(sheets)}]",
                f"output_dir={out / f'estimate{number}'}",
            ]
        )


def run(args: list[str]) -> None:
    env = dict(os.environ, PYTHONPATH=str(SOURCE))
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


def compare(before: Path, after: Path, write: Path | None = None) -> int:
    """Print the files whose bytes differ (and, with ``write``, keep the lines there)."""
    old = json.loads(before.read_text(encoding="utf-8"))
    new = json.loads(after.read_text(encoding="utf-8"))
    names = old.keys() | new.keys()
    differ = sorted(k for k in names if old.get(k) != new.get(k))
    lines = []
    for name in differ:
        state = "missing before" if name not in old else "missing after" if name not in new else ""
        lines.append(f"differs: {name} {state}".rstrip())
    lines.append(f"{len(names) - len(differ)} of {len(names)} files identical")
    print("\n".join(lines))
    if write is not None:
        write.write_text(
            f"python experiments/same_outputs.py --compare {before.name} {after.name}\n\n"
            + "\n".join(lines)
            + "\n",
            encoding="utf-8",
        )
    return 1 if differ else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the fingerprints here (JSON)")
    parser.add_argument("--work", default=str(REPO / "outputs" / "same_outputs"))
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--write", help="with --compare: keep its lines in this file")
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout whose src runs")
    options = parser.parse_args()
    global SOURCE
    SOURCE = options.repo.resolve() / "src"
    if options.compare:
        write = Path(options.write) if options.write else None
        raise SystemExit(compare(*map(Path, options.compare), write))
    work = Path(options.work)
    work.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(work / "runs", ignore_errors=True)  # an earlier run's outputs: not rewritten
    found: dict[str, str] = {}
    for name, table in inputs(work).items():
        for mode, extra in (("memory", []), ("partitions", [f"partition.rows={PARTITION_ROWS}"])):
            out = work / "runs" / name / mode
            for command, args in commands(table, out).items():
                run([*args, *extra])
                print(f"{name} {mode} {command}: done", flush=True)
            found |= {f"{name}/{mode}/{k}": v for k, v in fingerprints(out).items()}
        loop(table, work / "runs" / name / "loop")
        print(f"{name} loop: done", flush=True)
        found |= {
            f"{name}/loop/{k}": v for k, v in fingerprints(work / "runs" / name / "loop").items()
        }
    Path(options.out).write_text(json.dumps(found, indent=1, sort_keys=True), encoding="utf-8")
    print(f"{len(found)} files fingerprinted -> {options.out}")


if __name__ == "__main__":
    main()
