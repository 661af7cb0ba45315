"""Experiments call the API or the CLI, not its internals (issue 43): a script in experiments/
uses the public Python API (werest.api), the library's stages, or the CLI entry
``werest.cli.main.main([...argv])``; from ``werest.cli`` it may import that function and
nothing else (its settings objects, config composition and command modules are the CLI's own
business, free to change). Checked on the source with ``ast``, so no script is run."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

EXPERIMENTS = sorted((REPO / "experiments").glob("*.py"))
#: what a script may import from the CLI: its entry point
ALLOWED = {("werest.cli.main", "main")}


def cli_imports(path: Path) -> list[str]:
    """Every import of ``werest.cli`` in ``path`` other than ``from werest.cli.main import
    main``, as ``module.name`` (module level and inside functions alike), with its line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [
                f"{node.lineno}: import {alias.name}"
                for alias in node.names
                if alias.name == "werest.cli" or alias.name.startswith("werest.cli.")
            ]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "werest" and any(a.name == "cli" for a in node.names):
                found.append(f"{node.lineno}: from werest import cli")
            if node.module == "werest.cli" or node.module.startswith("werest.cli."):
                found += [
                    f"{node.lineno}: from {node.module} import {alias.name}"
                    for alias in node.names
                    if (node.module, alias.name) not in ALLOWED
                ]
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and str(node.args[0].value).startswith("werest.cli")
        ):
            found.append(f"{node.lineno}: import_module({node.args[0].value!r})")
    return found


def test_the_scripts_are_found():
    names = {path.name for path in EXPERIMENTS}
    assert {"audio_systems.py", "lodo_ablation.py", "fairness_glmm.py"} <= names


@pytest.mark.parametrize("path", EXPERIMENTS, ids=lambda p: p.name)
def test_an_experiment_imports_only_the_cli_entry(path):
    assert cli_imports(path) == []


def test_the_check_sees_every_way_in(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import importlib\n"
        "from werest.cli.main import main as werest\n"
        "from werest.cli.main import _quote, main\n"
        "from werest.cli.config import load_settings\n"
        "import werest.cli.commands.estimate\n"
        "from werest import cli\n"
        "def f():\n"
        "    from werest.cli.commands._common import build\n"
        "    return importlib.import_module('werest.cli.schema')\n"
        "subprocess_argv = ['python', '-m', 'werest.cli', 'estimate']\n"
    )
    assert cli_imports(sample) == [
        "3: from werest.cli.main import _quote",
        "4: from werest.cli.config import load_settings",
        "5: import werest.cli.commands.estimate",
        "6: from werest import cli",
        "8: from werest.cli.commands._common import build",
        "9: import_module('werest.cli.schema')",
    ]
