"""werest's commands for the experiment scripts, through the CLI entry only.

The scripts in experiments/ call the public Python API (:mod:`werest.api`), the library's
stages, or the commands as a user runs them: ``werest.cli.main.main([...argv])``, which is
what this module wraps. They never import the CLI's internals (its settings objects, config
composition or command modules): ``tests/unit/test_experiments.py`` checks it.

    from werest_cli import config, run, value

    run("features", f"input={value(table)}", f"out={value(out)}")   # werest features ...
    model = config("train", "model=hgb")["model"]   # the option as a run would read it
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

import yaml

from werest.cli.main import main


def value(text: str | Path) -> str:
    """A setting's value quoted for the command line, so that a path with spaces, quotes,
    backslashes or ``${`` stays one string: ``f"input={value(path)}"``."""
    escaped = re.sub(r"(\\+)(?='|$)", lambda m: m.group(1) * 2, str(text))
    escaped = escaped.replace("'", "\\'").replace("${", "\\${")
    return f"'{escaped}'"


def run(command: str, *settings: str) -> None:
    """``werest <command> <settings>``; a failure (its one line is on stderr) stops the
    experiment."""
    status = main([command, *settings])
    if status != 0:
        raise SystemExit(f"werest {command} failed (exit status {status})")


def config(command: str, *settings: str) -> dict[str, Any]:
    """The config ``werest <command> <settings>`` would run with, resolved
    (``werest <command> ... --cfg --resolve``), as plain values."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = main([command, *settings, "--cfg", "--resolve"])
    if status != 0:
        raise SystemExit(f"werest {command} --cfg failed (exit status {status})")
    return yaml.safe_load(printed.getvalue())
