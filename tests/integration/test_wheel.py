"""The built wheel carries the configs and the default model: `werest demo` runs from a fresh
virtual environment holding only the wheel (issue 13, item 6).

The wheel is built without build isolation (hatchling from the test extra) and installed with
``--no-deps --no-index`` into a new venv; its dependencies come from the running environment
through a ``.pth`` line, after the venv's own site-packages, so werest itself can only be
imported from the wheel: nothing is downloaded.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = [pytest.mark.test_extra]


def _run(*args, **kwargs) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        list(map(str, args)), capture_output=True, text=True, timeout=600, check=False, **kwargs
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def test_the_wheel_runs_the_demo_in_a_fresh_venv(tmp_path):
    _run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "-q",
        "-w",
        tmp_path / "dist",
        REPO,
    )
    (wheel,) = (tmp_path / "dist").glob("werest-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"werest/models/default.skops", "werest/models/default.json"} <= names
    assert {"werest/conf/estimate.yaml", "werest/data/demo_transcripts.csv"} <= names
    # every config (commands and group options) and every model file ships: the top-level conf/
    # and models/ of the repository land inside the package
    for folder in ("conf", "models"):
        top = REPO / folder
        files = {f"werest/{folder}/{p.relative_to(top).as_posix()}" for p in top.rglob("*.*")}
        assert files and files <= names, sorted(files - names)
    assert not any(n.startswith(("conf/", "models/")) for n in names)  # nothing outside werest/

    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv)
    python = venv / "bin" / "python"
    _run(python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel)
    site = _run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    deps = sysconfig.get_paths()["purelib"]
    (Path(site.stdout.strip()) / "werest_test_deps.pth").write_text(deps + "\n")

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = _run(python, "-c", "import werest; print(werest.__file__)", env=env, cwd=tmp_path)
    assert where.stdout.startswith(str(venv)), where.stdout
    # the installed package finds its own conf/ and models/, not the repository's
    found = _run(
        python,
        "-c",
        "from werest.io import shipped; from werest.model.files import default_model_path;"
        "print(shipped('conf')); print(default_model_path())",
        env=env,
        cwd=tmp_path,
    )
    conf, model = found.stdout.split()
    assert Path(conf).is_dir() and conf.startswith(str(venv)), found.stdout
    assert Path(model).is_file() and model.startswith(str(venv)), found.stdout
    usage = _run(venv / "bin" / "werest", "estimate", "--help", env=env, cwd=tmp_path)
    assert "werest estimate" in usage.stdout and "model_path" in usage.stdout, usage.stdout
    demo = _run(
        venv / "bin" / "werest", "demo", f"output_dir={tmp_path / 'demo'}", env=env, cwd=tmp_path
    )
    assert "est. WER %" in demo.stdout and "true WER %" in demo.stdout
    assert (tmp_path / "demo" / "summary.json").is_file()
