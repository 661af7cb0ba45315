"""The web page stays split by view (issue 43): werest.report.page holds one module per view,
none with a function longer than 60 lines, and werest.report.webpage only re-exports.

Read with ``ast``, like tests/unit/test_architecture.py: no module is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO
from tests.unit.test_architecture import graph

PAGE = REPO / "src" / "werest" / "report" / "page"
#: the most lines a function of the page may have (its ``def`` line to its last)
MAX_FUNCTION_LINES = 60


def function_lengths(path: Path) -> dict[str, int]:
    """``name`` (``outer.inner`` when nested) -> its length in lines, of every function."""
    lengths: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                lengths[name] = child.end_lineno - child.lineno + 1
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return lengths


def test_the_length_finder(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "def f():\n    def g():\n        pass\n    return g\n\n\n"
        "class C:\n    def m(self):\n        return 1\n"
    )
    assert function_lengths(sample) == {"f": 4, "f.g": 2, "C.m": 2}


def test_no_page_function_is_long():
    long = {
        f"{path.name}: {name}": lines
        for path in sorted(PAGE.glob("*.py"))
        for name, lines in function_lengths(path).items()
        if lines > MAX_FUNCTION_LINES
    }
    assert long == {}, f"split them (at most {MAX_FUNCTION_LINES} lines each)"


def test_webpage_only_reexports():
    """werest.report.webpage keeps the names the tests and experiments import, and defines
    nothing: the page's code is in werest.report.page."""
    tree = ast.parse((PAGE.parent / "webpage.py").read_text(encoding="utf-8"))
    defined = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]
    assert defined == []
    imported = {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("werest.report.page")
        for alias in node.names
    }
    used_today = {"chromium", "html_table", "measure_tabs", "screenshot", "plotly_js"}
    assert used_today | {"render", "write_page", "METRICS"} <= imported


def test_only_the_document_imports_the_leaderboard_report():
    """The views get leaderboard_report's readable views from page.document: a view importing
    it would make the leaderboard command's chain of imports 12 files long."""
    importers = sorted(
        name
        for name, deps in graph().items()
        if name.startswith("werest.report.page") and "werest.report.leaderboard_report" in deps
    )
    assert importers == ["werest.report.page.document"]
    # and the leaderboard's files (the command's, werest.write_leaderboard's) import the
    # document itself, not through the webpage re-export, which would add a file to the chain
    assert "werest.report.page.document" in graph()["werest.report.leaderboard_files"]
    assert "werest.report.leaderboard_files" in graph()["werest.cli.commands.leaderboard"]
