"""Start-up stays cheap: ``import werest``, ``werest --help`` and every ``werest <command>
--help`` import none of the heavy libraries (they are imported where used), so each starts in
well under 0.3 s (``experiments/bench_startup.py`` measures it). Each check runs in a fresh
interpreter, since this one has long imported them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

#: imported by no start-up: the scientific stack, the config stack, the reporting stack
HEAVY = (
    "pandas",
    "numpy",
    "sklearn",
    "scipy",
    "pyarrow",
    "hydra",
    "omegaconf",
    "jiwer",
    "plotly",
    "matplotlib",
    "statsmodels",
    "tqdm",
)


def imported_after(code: str) -> set[str]:
    """The top-level packages in ``sys.modules`` after a fresh interpreter runs ``code``."""
    probe = (
        "import contextlib, io, json, sys\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    {code}\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    env = os.environ | {"PYTHONPATH": str(REPO / "src")}
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True
    )
    return set(json.loads(result.stdout.strip().splitlines()[-1]))


def test_import_werest_imports_no_heavy_library():
    loaded = imported_after("import werest")
    assert "werest" in loaded
    assert not loaded & {"pandas", "numpy", "sklearn"}, sorted(loaded & set(HEAVY))
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


@pytest.mark.parametrize("args", [["--help"], ["--version"]])
def test_the_command_list_imports_no_heavy_library(args):
    """``werest --help`` (the command list) needs neither Hydra nor pandas."""
    loaded = imported_after(f"from werest.cli.main import main; main({args!r})")
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def commands() -> list[str]:
    from werest.cli.main import COMMANDS

    return sorted(COMMANDS)


@pytest.mark.parametrize("command", commands())
def test_every_commands_help_imports_no_heavy_library(command):
    """``werest <command> --help`` composes the command's config without Hydra
    (:mod:`werest.cli.plain`) and reads the library's defaults from its light ``settings``
    modules (:mod:`werest.settings`): no numerical, config or reporting library."""
    loaded = imported_after(f"from werest.cli.main import main; main([{command!r}, '--help'])")
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def experiments() -> list[str]:
    return sorted(p.stem for p in (REPO / "conf" / "experiment").glob("*.yaml"))


@pytest.mark.parametrize("experiment", experiments())
def test_an_experiments_help_imports_no_heavy_library(experiment):
    """An experiment's options name library constants (``${library:...}``): --help shows
    their values, read from the light modules that declare them."""
    code = (
        f"from werest.cli.main import main; main(['evaluate', 'experiment={experiment}', '--help'])"
    )
    loaded = imported_after(code)
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_the_lazy_names_still_resolve():
    """What ``import werest`` no longer imports is there on first use (PEP 562)."""
    code = (
        "import werest; "
        "assert callable(werest.read_table) and callable(werest.validate_table); "
        "assert callable(werest.write_table) and callable(werest.estimate); "
        "assert werest.text.wer('a b', 'a c') == 0.5"
    )
    env = os.environ | {"PYTHONPATH": str(REPO / "src")}
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
