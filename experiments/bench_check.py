"""How long `make check` takes on the core install: a fresh virtual environment with
``pip install -e ".[check]"`` only (no extras), then ``make check`` timed.

    python experiments/bench_check.py            # a new venv under outputs/, removed after
    python experiments/bench_check.py --keep     # keep it (a second run reuses it)

Writes ``experiments/results/bench_check.md`` and ``bench_check.json``: the install time (not
part of the bar: pip's downloads), the check's wall time with its three steps (ruff lint,
ruff format check, the unit tier), and the packages the core install has (to show torch,
Dask and the other extras are absent).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "experiments" / "results"
#: packages of the extras that must not be in the core install
EXTRAS = ("torch", "fairseq2", "sonar-space", "faster-whisper", "dask", "transformers")


def timed(command: list[str], **kwargs) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, **kwargs)
    return time.perf_counter() - start, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", default=str(REPO / "outputs" / "bench_check" / "venv"))
    parser.add_argument("--keep", action="store_true")
    options = parser.parse_args()
    venv = Path(options.venv)
    install, _ = timed(["make", f"VENV={venv}", f"{venv}/.check"], cwd=REPO)
    python = venv / "bin" / "python"
    listed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=json"], capture_output=True, text=True
    )
    installed = {p["name"].lower() for p in json.loads(listed.stdout)}
    load_before = os.getloadavg()[1]
    seconds, done = timed(["make", f"VENV={venv}", "check"], cwd=REPO)
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    record = {
        "status": "passed" if done.returncode == 0 else f"failed ({done.returncode})",
        "check_seconds": round(seconds, 1),
        "install_seconds": round(install, 1),
        "pytest_summary": summary,
        "extras_present": sorted(installed & set(EXTRAS)),
        "cores": os.cpu_count(),
        "load_5min_at_start": round(load_before, 2),
        "load_5min_at_end": round(os.getloadavg()[1], 2),
        "python": sys.version.split()[0],
    }
    lines = [
        "# `make check` on the core install",
        "",
        '`python experiments/bench_check.py`: a fresh venv with `pip install -e ".[check]"` '
        "(no extras), then `make check` (ruff lint, ruff format check, `pytest tests/unit -m "
        '"not shared" -n auto`: pytest-xdist, one worker per core), timed. The bar: under 2 '
        "minutes.",
        "",
        "| measure | value |",
        "|---|---|",
        f"| status | {record['status']} |",
        f"| `make check` wall time | {record['check_seconds']} s |",
        f"| pytest's summary | {summary} |",
        f"| extras' packages present | {', '.join(record['extras_present']) or 'none'} |",
        f"| install (pip, not in the bar) | {record['install_seconds']} s |",
        f"| machine | {record['cores']} cores, 5-minute load {record['load_5min_at_start']} "
        f"at the start and {record['load_5min_at_end']} at the end, Python "
        f"{record['python']} |",
        "",
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_check.md").write_text("\n".join(lines), encoding="utf-8")
    (RESULTS / "bench_check.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    print("\n".join(lines))
    if done.returncode != 0:
        print(done.stdout[-3000:], done.stderr[-3000:], sep="\n")
    if not options.keep:
        shutil.rmtree(venv, ignore_errors=True)


if __name__ == "__main__":
    main()
