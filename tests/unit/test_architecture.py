"""The house rules of docs/architecture.md, checked on the source: no import cycle within
werest, and stage modules that know nothing of the CLI (no omegaconf, no print).

Imports are read with ``ast`` (module level and inside functions alike: a late import is
still a dependency), so the check sees every module, including backends whose optional
libraries are not installed here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

SOURCE = REPO / "src" / "werest"
#: the command-line layer: composing configs, their types, help text and the commands
CLI_LAYER = ("werest.cli",)
#: the stages in data-flow order: a module may import its own stage and earlier ones only
STAGES = (
    ("base", ("werest.errors", "werest.io", "werest.logs", "werest.resources",
              "werest.formatting", "werest.build", "werest.stats", "werest.demo",
              "werest.codes", "werest.version", "werest.frames", "werest.columns",
              "werest.csv_writer", "werest.settings", "werest.resampling",
              "werest.forked")),
    ("ingest", ("werest.ingest",)),
    ("text", ("werest.text",)),
    ("features", ("werest.features",)),
    ("model", ("werest.model",)),
    ("estimation", ("werest.estimation",)),
    ("evaluation", ("werest.evaluation",)),
    ("ranking", ("werest.ranking",)),
    ("partition", ("werest.partition",)),
    ("report", ("werest.report",)),
    ("api", ("werest.api", "werest")),
    ("cli", ("werest.cli",)),
)  # fmt: skip
#: the commands: on the command line (cli) and as functions on DataFrames (api)
COMMANDS = ("api", "cli")
#: the longest chain of imports (in files) the house may have (issue 43 found 12, then 13;
#: issue 48: 11, then 9)
LONGEST_CHAIN = 9


def stage_of(name: str) -> int:
    """The index in :data:`STAGES` of the stage holding module ``name``."""
    for index, (_, prefixes) in enumerate(STAGES):
        if any(name == p or name.startswith(f"{p}.") for p in prefixes if p != "werest"):
            return index
    if name == "werest":
        return [stage for stage, _ in STAGES].index("api")
    raise AssertionError(f"{name} is in no stage of STAGES: add it")


def module_name(path: Path) -> str:
    parts = path.relative_to(SOURCE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(SOURCE.rglob("*.py"))}


def is_cli(name: str) -> bool:
    return any(name == layer or name.startswith(f"{layer}.") for layer in CLI_LAYER)


def imported(path: Path) -> set[str]:
    """Every werest module ``path`` imports (``from werest.x import y`` counts ``werest.x.y``
    when that is a module, else ``werest.x``)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if dynamic := dynamic_import(node):
            names.add(dynamic)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                names.add(full if full in MODULES else node.module)
    return {name for name in names if name in MODULES}


def dynamic_import(node: ast.AST) -> str | None:
    """The werest module an ``importlib.import_module(...)`` call names: a string constant, or
    the constant part of an f-string before its first field (``f"werest.cli.commands.{name}"``
    imports one of that package's modules: the package stands for it)."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute | ast.Name)
        and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
        == "import_module"
        and node.args
    ):
        return None
    argument = node.args[0]
    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        return argument.value
    if isinstance(argument, ast.JoinedStr) and isinstance(argument.values[0], ast.Constant):
        return str(argument.values[0].value).rstrip(".")
    return None


def graph() -> dict[str, set[str]]:
    """module -> the werest modules it imports (a package's own ``__init__`` excluded)."""
    return {
        name: {dep for dep in imported(path) if dep != name and not name.startswith(f"{dep}.")}
        for name, path in MODULES.items()
    }


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of modules (first = last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(edges.get(node, ())):
            if state.get(dep) == 1:
                return [*stack[stack.index(dep) :], dep]
            if dep not in state and (cycle := visit(dep)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_graph_reads_real_imports():
    """The checker itself: it sees estimate's dependency on the agreement features, and
    finds a cycle where there is one."""
    edges = graph()
    assert "werest.features.agreement" in edges["werest.estimation.estimate"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_within_werest():
    assert find_cycle(graph()) is None


def test_importlib_imports_are_seen(tmp_path):
    """``importlib.import_module`` with a constant or an f-string's constant prefix is an
    import like any other (the CLI loads its commands that way)."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import importlib\n"
        "def f(name):\n"
        "    importlib.import_module('werest.api')\n"
        "    return importlib.import_module(f'werest.cli.commands.{name}')\n"
    )
    assert imported(sample) == {"werest.api", "werest.cli.commands"}
    assert "werest.cli.commands" in graph()["werest.cli.main"]


def test_no_module_imports_a_later_stage():
    """Data flows from ingest to reports: a stage never imports a later one
    (docs/architecture.md)."""
    backward = sorted(
        f"{name} ({STAGES[stage_of(name)][0]}) imports {dep} ({STAGES[stage_of(dep)][0]})"
        for name, deps in graph().items()
        for dep in deps
        if stage_of(dep) > stage_of(name)
    )
    assert backward == []


def test_every_module_is_in_a_stage():
    assert all(stage_of(name) >= 0 for name in MODULES)


def test_stage_modules_never_import_the_cli_layer():
    """Data flows from the commands into the stages, never back."""
    backward = {
        (name, dep)
        for name, deps in graph().items()
        if not is_cli(name)
        for dep in deps
        if is_cli(dep)
    }
    assert backward == set()


@pytest.mark.parametrize(
    "name", sorted(name for name in MODULES if not is_cli(name) and name != "werest.__main__")
)
def test_stage_module_has_no_omegaconf_and_no_print(name):
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    omegaconf = [
        node.lineno
        for node in ast.walk(tree)
        if (
            isinstance(node, ast.Import) and any(a.name.startswith("omegaconf") for a in node.names)
        )
        or (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("omegaconf"))
    ]
    prints = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "print"
    ]
    assert (omegaconf, prints) == ([], []), f"{name}: omegaconf at {omegaconf}, print at {prints}"


def private_imports(path: Path) -> list[str]:
    """``module.name`` of each private name (``_x``) that ``path`` imports from another werest
    module; a private *module* of its own package (``werest.ingest.importers._common``) is
    allowed."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("werest"):
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                dunder = alias.name.startswith("__") and alias.name.endswith("__")
                if alias.name.startswith("_") and not dunder and full not in MODULES:
                    found.append(full)
    return found


def test_private_names_do_not_cross_modules():
    """A name another module needs is public; a private one is its module's own business."""
    assert private_imports(SOURCE / "ingest" / "table.py") == []
    crossing = {name: private_imports(path) for name, path in MODULES.items()}
    assert {name: found for name, found in crossing.items() if found} == {}


def test_the_private_import_check_sees_one(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from werest.ingest.table import _hidden, KEY\nfrom werest.ingest.importers import "
        "_common\n"
    )
    assert private_imports(sample) == ["werest.ingest.table._hidden"]


def test_report_is_imported_by_the_commands_only():
    """report/ only presents: the statistics it shows are computed below (ranking/,
    estimation/, evaluation/), so no stage below the commands imports it (docs/architecture.md).
    """
    importers = sorted(
        f"{name} ({STAGES[stage_of(name)][0]})"
        for name, deps in graph().items()
        if STAGES[stage_of(name)][0] not in ("report", *COMMANDS)
        for dep in deps
        if STAGES[stage_of(dep)][0] == "report"
    )
    assert importers == []


def longest_chain(edges: dict[str, set[str]]) -> list[str]:
    """The longest chain of imports ``a -> b -> ...`` (``edges`` has no cycle), as its
    modules; the first of the longest in name order."""
    memo: dict[str, list[str]] = {}

    def chain(node: str) -> list[str]:
        if node not in memo:
            below = [chain(dep) for dep in sorted(edges.get(node, ()))]
            memo[node] = [node, *max(below, key=len, default=[])]
        return memo[node]

    return max((chain(node) for node in sorted(edges)), key=len)


def test_the_longest_chain_finder():
    edges = {"a": {"b", "c"}, "b": {"d"}, "c": set(), "d": set(), "e": {"a"}}
    assert longest_chain(edges) == ["e", "a", "b", "d"]


def test_the_longest_import_chain_is_short():
    """A change deep down (the errors, the table's schema) reaches every module above it
    through at most ``LONGEST_CHAIN`` files; ``python -m tests.unit.test_architecture``
    prints the longest chain."""
    chain = longest_chain(graph())
    assert len(chain) <= LONGEST_CHAIN, " -> ".join(chain)


def test_the_partition_engine_knows_no_stage():
    """werest.partition.engine spills, reads and places partitions for every stage: it imports
    only the base, ingest (the table's schema) and text (the normalisation cache), never a
    stage that runs on it; of its own stage, only its declarations (``partition.settings``,
    which imports the base alone)."""
    allowed = {"base", "ingest", "text"}
    edges = graph()
    for part in ("werest.partition.engine", "werest.partition.reading"):  # its input reader
        deps = edges[part] - {"werest.partition.reading", "werest.partition.settings"}
        stages = {STAGES[stage_of(dep)][0] for dep in deps}
        assert stages <= allowed, (part, stages)
    assert {STAGES[stage_of(dep)][0] for dep in edges["werest.partition.settings"]} == {"base"}
    score = {STAGES[stage_of(dep)][0] for dep in graph()["werest.partition.score"]}
    assert "estimation" not in score and "model" not in score


#: the longest a function of the command-line layer may be, in lines (issue 48)
CLI_FUNCTION_LINES = 40
#: the CLI's functions allowed to be longer: none (the label-round object took the bodies of
#: estimate's and sample's, issue 48); one added here must be split later (the test says so)
LONG_CLI_FUNCTIONS: set[str] = set()
#: imported at a CLI module's top by none: ``werest <command> --help`` must not pay for them, and
#: a command imports them where it uses them
NOT_AT_THE_CLIS_TOP = {"numpy", "pandas"}


def module_level_imports(tree: ast.Module) -> set[str]:
    """The top-level packages a module imports at its top (not inside a function, nor under
    ``if TYPE_CHECKING:``)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def long_functions(tree: ast.AST, limit: int) -> dict[str, int]:
    """``{qualified name: lines}`` of the functions (methods and nested ones too) longer than
    ``limit`` lines, from ``def`` to their last line."""
    found: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = prefix
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}.{child.name}"
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                length = child.end_lineno - child.lineno + 1
                if length > limit:
                    found[name.lstrip(".")] = length
            visit(child, name)

    visit(tree, "")
    return found


def cli_modules() -> dict[str, Path]:
    return {name: path for name, path in MODULES.items() if is_cli(name)}


def test_no_cli_module_imports_numpy_or_pandas_at_its_top():
    heavy = {
        name: sorted(
            module_level_imports(ast.parse(path.read_text(encoding="utf-8"))) & NOT_AT_THE_CLIS_TOP
        )
        for name, path in cli_modules().items()
    }
    assert {name: found for name, found in heavy.items() if found} == {}


def test_cli_functions_are_short():
    """Every function of werest.cli reads at a glance: at most CLI_FUNCTION_LINES lines."""
    long = {}
    for name, path in cli_modules().items():
        for function, lines in long_functions(
            ast.parse(path.read_text(encoding="utf-8")), CLI_FUNCTION_LINES
        ).items():
            long[f"{name}.{function}"] = lines
    assert set(long) - LONG_CLI_FUNCTIONS == set(), {
        k: v for k, v in long.items() if k not in LONG_CLI_FUNCTIONS
    }
    split = LONG_CLI_FUNCTIONS - set(long)
    assert not split, f"{sorted(split)}: short now, take them off LONG_CLI_FUNCTIONS"


def test_the_cli_checks_find_what_they_look_for():
    source = (
        "import numpy as np\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    import pandas as pd\n"
        "def run():\n"
        "    import pandas\n"
        "    return 1\n"
        "class Settings:\n"
        "    def long(self):\n" + "        x = 1\n" * 40 + "        return x\n"
    )
    tree = ast.parse(source)
    assert module_level_imports(tree) & NOT_AT_THE_CLIS_TOP == {"numpy"}
    assert long_functions(tree, CLI_FUNCTION_LINES) == {"Settings.long": 42}
    assert long_functions(tree, 42) == {}


if __name__ == "__main__":
    found = longest_chain(graph())
    print(f"longest import chain: {len(found)} files")
    print("\n".join(f"  {name}" for name in found))
