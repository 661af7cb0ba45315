"""The house's structure, measured (issue 48): import chains, floors, module and function
sizes, the CLI's weight, repeated code, the schema's size and the walk of a table through
``werest.api.estimate``.

    python experiments/house_metrics.py [--root DIR] [--label NAME] [--out FILE]

``--root``: the checkout to measure (default: this one), so a commit from before a change
can be measured beside it (``git worktree add /tmp/before REV``). Writes
``experiments/results/house_metrics.md`` and ``.json`` (``--out`` another stem); with
``--label`` the run is added to the file under that name beside the runs already in it.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
#: the limits issue 48 sets
LIMITS = {
    "longest_chain": 9,
    "upward_imports": 0,
    "cli_module_level_numpy_pandas": 0,
    "cli_functions_over_40": 0,
    "modules_over_600": 0,
    "functions_over_60": 0,
    "duplicate_pairs_src": 15,
    "schema_lines": 399,
    "api_estimate_files": 6,
}


def import_graph(root: Path):
    """The architecture test's graph and longest chain, read from ``root``'s own copy."""
    sys.path[:0] = [str(root), str(root / "src")]
    for name in [m for m in sys.modules if m == "tests" or m.startswith(("tests.", "werest"))]:
        del sys.modules[name]
    from tests.unit import test_architecture as arch

    edges = arch.graph()
    upward = sum(
        1
        for name, deps in edges.items()
        for dep in deps
        if arch.stage_of(dep) > arch.stage_of(name)
    )
    return arch.longest_chain(edges), upward


def functions(tree: ast.AST):
    """Every function of a module with its length in lines (decorators and docstring in)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node.name, node.lineno, node.end_lineno - node.lineno + 1


def module_level_imports(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def sizes(root: Path) -> dict:
    src = root / "src" / "werest"
    long_modules, long_functions, cli_long, cli_heavy = [], [], [], []
    for path in sorted(src.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        name = str(path.relative_to(root / "src"))
        lines = len(text.splitlines())
        if lines > 600:
            long_modules.append(f"{name} ({lines})")
        in_cli = name.startswith("werest/cli/")
        for function, line, length in functions(tree):
            if length > 60:
                long_functions.append(f"{name}:{line} {function} ({length})")
            if in_cli and length > 40:
                cli_long.append(f"{name}:{line} {function} ({length})")
        if in_cli and module_level_imports(tree) & {"numpy", "pandas"}:
            cli_heavy.append(name)
    return {
        "modules_over_600": long_modules,
        "functions_over_60": long_functions,
        "cli_functions_over_40": cli_long,
        "cli_module_level_numpy_pandas": cli_heavy,
        "schema_lines": len((src / "cli" / "schema.py").read_text().splitlines()),
    }


def duplicate_pairs(root: Path) -> int:
    """How many pairs ``duplicates`` lists in ``src/`` (the tool's first line counts them)."""
    done = subprocess.run(
        ["duplicates", "--repo", str(root / "src"), "--most", "1", "--seconds", "120"],
        capture_output=True,
        text=True,
        check=False,
    )
    first = done.stdout.splitlines()[0] if done.stdout else ""
    if first.startswith("no duplicates"):
        return 0
    match = re.search(r"(\d+) pairs?", first)
    return int(match.group(1)) if match else -1


WALK = textwrap.dedent(
    """
    import inspect, json, sys
    import werest.api as api
    from werest.demo import demo_table_path

    table = api.as_table(demo_table_path())
    model = api.load_model()
    seen, stack_files, moves = [], [], []
    LAYERS = ("werest/api", "werest/partition/", "werest/estimation/")

    def tracer(frame, event, arg):
        # a function's frame (CO_OPTIMIZED), not a module's or a class body's run at import
        if event != "call" or not frame.f_code.co_flags & inspect.CO_OPTIMIZED:
            return None
        path = frame.f_code.co_filename.replace("\\\\", "/")
        if "/werest/" not in path:
            return None
        name = "werest/" + path.split("/werest/", 1)[1]
        if not name.startswith(LAYERS):
            return None
        if name not in seen:
            seen.append(name)
        moves.append(name.split("/")[1])
        return None

    sys.setprofile(lambda f, e, a: tracer(f, e, a))
    api.estimate(table, model=model, n_resamples=50)
    sys.setprofile(None)
    crossings = sum(
        1 for a, b in zip(moves, moves[1:]) if {a, b} == {"partition", "estimation"}
    )
    print(json.dumps({"files": seen, "crossings": crossings}))
    """
)


def api_walk(root: Path) -> dict:
    """The files of api/, partition/ and estimation/ a table enters in ``werest.api.estimate``
    on the demo table (a function of theirs called; importing a module is not entering it),
    in order, and how often the calls cross between partition/ and estimation/."""
    done = subprocess.run(
        [sys.executable, "-c", WALK],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": f"{root / 'src'}", "PATH": "/usr/bin:/bin"},
    )
    return json.loads(done.stdout.splitlines()[-1])


def measure(root: Path) -> dict:
    chain, upward = import_graph(root)
    walk = api_walk(root)
    return {
        "longest_chain": len(chain),
        "chain": chain,
        "upward_imports": upward,
        **sizes(root),
        "duplicate_pairs_src": duplicate_pairs(root),
        "api_estimate_files": len(walk["files"]),
        "api_estimate_walk": walk["files"],
        "api_estimate_crossings": walk["crossings"],
    }


def count(value) -> int:
    return len(value) if isinstance(value, list) else value


def write(runs: dict, stem: Path) -> None:
    stem.with_suffix(".json").write_text(json.dumps(runs, indent=1) + "\n")
    labels = list(runs)
    lines = [
        "# The house, measured (issue 48)",
        "",
        "Written by `python experiments/house_metrics.py --label NAME [--root CHECKOUT]`, one "
        "column per checkout measured (`before`: 344a4e3, before issue 48).",
        "",
        "| measure | limit | " + " | ".join(labels) + " |",
        "|---|---|" + "---|" * len(labels),
    ]
    for key, limit in LIMITS.items():
        values = [str(count(runs[label].get(key, "?"))) for label in labels]
        bound = f"≤ {limit}"
        lines.append(f"| {key} | {bound} | " + " | ".join(values) + " |")
    lines.append(
        "| api_estimate_crossings (partition ↔ estimation) | – | "
        + " | ".join(str(runs[label].get("api_estimate_crossings", "?")) for label in labels)
        + " |"
    )
    for label in labels:
        run = runs[label]
        lines += ["", f"## {label}", "", "Longest import chain: " + " → ".join(run["chain"])]
        lines += ["", "Walk of `werest.api.estimate`: " + " → ".join(run["api_estimate_walk"])]
        for key in (
            "modules_over_600",
            "functions_over_60",
            "cli_functions_over_40",
            "cli_module_level_numpy_pandas",
        ):
            if run[key]:
                lines += ["", f"{key}:", "", *(f"- {item}" for item in run[key])]
    stem.with_suffix(".md").write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--label", default="now")
    parser.add_argument("--out", type=Path, default=RESULTS / "house_metrics")
    args = parser.parse_args()
    stem = args.out
    runs = (
        json.loads(stem.with_suffix(".json").read_text())
        if stem.with_suffix(".json").exists()
        else {}
    )
    runs[args.label] = measure(args.root.resolve())
    write(runs, stem)
    print(stem.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
