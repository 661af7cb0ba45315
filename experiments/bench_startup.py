"""How long werest takes to start: ``import werest``, ``werest --help`` (the command list) and
``werest estimate --help`` (a command's settings, composed without Hydra: werest.cli.plain).

    PYTHONPATH=src .venv/bin/python experiments/bench_startup.py
    PYTHONPATH=src .venv/bin/python experiments/bench_startup.py --baseline ../other/src

Each measurement is a fresh ``python`` subprocess (this interpreter, ``PYTHONPATH`` set to the
measured source tree, run from an empty folder), timed from start to exit with
``time.perf_counter``; the median of ``--runs`` (5) runs is reported, with the bare interpreter
(``python -c pass``) beside it. ``python -X importtime`` of each gives the top offenders: the
modules with the largest cumulative import time among those imported directly by werest's own
modules or at the top level. ``--baseline`` measures another source tree (an older checkout)
the same way, in the same run, for a before/after table.

The bar (issues "First contact and failure" and 43): ``import werest``, ``werest --help`` and
``werest estimate --help`` at most 0.3 s each (median of 5).

Writes ``experiments/results/bench_startup.md``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
BAR = 0.3

#: what is measured: name -> the interpreter's arguments
CASES = {
    "python -c pass": ["-c", "pass"],
    "import werest": ["-c", "import werest"],
    "werest --help": ["-m", "werest.cli", "--help"],
    "werest estimate --help": ["-m", "werest.cli", "estimate", "--help"],
}
#: the cases the bar applies to
BARRED = ("import werest", "werest --help", "werest estimate --help")


def _env(src: Path) -> dict[str, str]:
    return os.environ | {"PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "0"}


def wall_seconds(args: list[str], src: Path, runs: int, cwd: Path) -> list[float]:
    """Wall seconds of ``runs`` fresh runs of ``python args`` (one untimed warm-up run first, so
    the bytecode caches exist and the file cache is warm)."""
    command = [sys.executable, *args]
    subprocess.run(command, env=_env(src), cwd=cwd, capture_output=True, check=True)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, env=_env(src), cwd=cwd, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return times


def import_times(args: list[str], src: Path, cwd: Path) -> list[tuple[str, int, int]]:
    """``(module, self µs, cumulative µs)`` of every import, from ``python -X importtime``."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        env=_env(src),
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    rows = []
    for line in result.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, cumulative, name = line.removeprefix("import time:").split("|")
        rows.append((name.rstrip(), int(own), int(cumulative)))
    return rows


def offenders(rows: list[tuple[str, int, int]], count: int = 8) -> list[tuple[str, float]]:
    """The ``count`` slowest imports by cumulative time among the outermost ones (a module
    imported at the top level or by werest itself, not one imported inside a third-party
    package), in milliseconds."""
    outer = []
    ancestors: list[str] = []
    for name, _own, cumulative in reversed(rows):  # importtime lists children first
        depth = (len(name) - len(name.lstrip())) // 2
        module = name.strip()
        parent = ancestors[depth - 1] if 0 < depth <= len(ancestors) else ""
        ancestors[depth:] = [module]
        if module.split(".")[0] == "werest":
            continue
        if depth == 0 or parent.split(".")[0] == "werest":
            outer.append((module, cumulative / 1000))
    outer.sort(key=lambda item: -item[1])
    seen: dict[str, float] = {}
    for module, ms in outer:
        seen.setdefault(module, ms)
    return list(seen.items())[:count]


def measure(src: Path, runs: int) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        medians = {}
        for name, args in CASES.items():
            times = wall_seconds(args, src, runs, cwd)
            medians[name] = (statistics.median(times), times)
        worst = {name: offenders(import_times(CASES[name], src, cwd)) for name in BARRED}
        heavy = {
            name: sorted(
                {
                    row[0].strip().split(".")[0]
                    for row in import_times(CASES[name], src, cwd)
                    if row[0].strip().split(".")[0] in HEAVY
                }
            )
            for name in CASES
            if name != "python -c pass"
        }
    return {"medians": medians, "offenders": worst, "heavy": heavy}


#: the libraries the start-up must not import
HEAVY = (
    "pandas",
    "numpy",
    "sklearn",
    "scipy",
    "hydra",
    "omegaconf",
    "jiwer",
    "plotly",
    "matplotlib",
    "pyarrow",
    "statsmodels",
    "skops",
    "tqdm",
    "rapidfuzz",
)


def report(measured: dict[str, dict], runs: int) -> str:
    names = list(measured)
    lines = [
        "# Start-up time",
        "",
        f"Written by `python experiments/bench_startup.py`: each case a fresh `python` process "
        f"(`{Path(sys.executable).name}` {sys.version.split()[0]}, `PYTHONPATH` = the source "
        f"tree), median wall seconds of {runs} runs after one warm-up run; the machine's other "
        f"work adds noise. The bar: {', '.join(f'`{c}`' for c in BARRED)} at most {BAR} s each.",
        "",
        "| case | " + " | ".join(f"{n}: median s" for n in names) + " | "
        + " | ".join(f"{n}: runs" for n in names) + " |",
        "|---|" + "---|" * (2 * len(names)),
    ]  # fmt: skip
    for case in CASES:
        medians = [f"{measured[n]['medians'][case][0]:.3f}" for n in names]
        runs_ = [" ".join(f"{t:.2f}" for t in measured[n]["medians"][case][1]) for n in names]
        lines.append(f"| `{case}` | " + " | ".join(medians + runs_) + " |")
    lines.append("")
    current = measured[names[-1]]["medians"]
    for case in BARRED:
        held = current[case][0] <= BAR
        lines.append(
            f"* `{case}` ({names[-1]}): {current[case][0]:.3f} s, "
            f"{'within' if held else '**over**'} the {BAR} s bar"
        )
    for name in names:
        lines += ["", f"## Heavy libraries imported ({name})", ""]
        for case, modules in measured[name]["heavy"].items():
            lines.append(f"* `{case}`: {', '.join(modules) if modules else 'none'}")
        lines += ["", f"## Top offenders, `python -X importtime` ({name})", ""]
        for case, worst in measured[name]["offenders"].items():
            shown = ", ".join(f"{module} {ms:.0f} ms" for module, ms in worst)
            lines.append(f"* `{case}`: {shown}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the tree measured")
    parser.add_argument(
        "--baseline", type=Path, default=None, help="another source tree, measured first"
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_startup.md")
    args = parser.parse_args()
    measured = {}
    if args.baseline is not None:
        measured["before"] = measure(args.baseline.resolve(), args.runs)
    measured["after" if args.baseline is not None else "now"] = measure(
        args.src.resolve(), args.runs
    )
    text = report(measured, args.runs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
