"""The README's Quick start runs as written in a new shell, right after ``make demo``: its
fenced ``bash`` block, taken from README.md (so the test fails when the README drifts), runs in
a fresh ``bash --noprofile --norc`` whose environment holds only what a new terminal has (PATH
without any venv, HOME, LANG) and no PYTHONPATH; the block's own first line,
``. .venv/bin/activate``, is what puts ``werest`` on the PATH.

The venv is a fresh one (``python -m venv --without-pip`` in the test's folder, as ``.venv``
beside the CSVs) holding what an editable install (``pip install -e .``, which ``make demo``
runs) puts there: a ``.pth`` line to this checkout's ``src`` and the ``werest`` console script.
Its dependencies come from the environment running the tests, through a second ``.pth`` line
after it, so nothing is downloaded. The inputs are small CSVs the test writes, one per system,
in ``runs/calls/`` as the Quick start shows them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import REPO

pytestmark = [pytest.mark.slow]

README = REPO / "README.md"

#: the console script pip writes for ``[project.scripts] werest = "werest.cli.main:main"``
SCRIPT = """#!{python}
import sys
from werest.cli.main import main
if __name__ == "__main__":
    sys.exit(main())
"""

HYPOTHESES = {
    "whisper": [
        "turn left at the next junction",
        "the meeting is moved to thursday",
        "please call me back after lunch",
        "my account number is four two seven",
        "i would like to cancel the order",
        "the parcel arrived damaged yesterday",
    ],
    "parakeet": [
        "turn left at the next junction",
        "the meeting is moved to thursday",
        "please call me back after lunch",
        "my account number is for two seven",
        "i would like to cancel the order",
        "the parcel arrived damage yesterday",
    ],
    "vendor-x": [
        "turn left at next junction",
        "the meeting moved to thursday",
        "please call back after lunch",
        "my count number is four to seven",
        "i like to cancel order",
        "the parcel arrive damaged yesterday",
    ],
}


def quick_start_block() -> str:
    """The first ``bash`` block of the README's Quick start section, as written."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```bash\n(.*?)```", section, flags=re.DOTALL).group(1)


def fresh_venv(folder: Path) -> Path:
    """``folder/.venv``: a new venv holding an editable install of this checkout."""
    venv = folder / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    deps = sysconfig.get_paths()["purelib"]
    (Path(site) / "_werest_editable.pth").write_text(f"{REPO / 'src'}\n", encoding="utf-8")
    (Path(site) / "_werest_test_deps.pth").write_text(f"{deps}\n", encoding="utf-8")
    script = venv / "bin" / "werest"
    script.write_text(SCRIPT.format(python=python), encoding="utf-8")
    script.chmod(0o755)
    return venv


def test_the_quick_start_runs_in_a_new_shell(tmp_path):
    block = quick_start_block()
    assert block.splitlines()[0].split("#")[0].split() == [".", ".venv/bin/activate"], block
    runs = tmp_path / "runs" / "calls"
    runs.mkdir(parents=True)
    for system, texts in HYPOTHESES.items():
        rows = pd.DataFrame({"id": [f"call-{i:04d}" for i in range(1, 7)], "hypothesis": texts})
        rows.to_csv(runs / f"{system}.csv", index=False)
    venv = fresh_venv(tmp_path)

    bash = shutil.which("bash") or pytest.skip("needs bash")
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": os.environ.get("HOME", str(tmp_path)),
        "LANG": "C.UTF-8",
    }
    assert (
        subprocess.run(  # before activation, werest is not on this PATH
            [bash, "--noprofile", "--norc", "-c", "command -v werest"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
        ).returncode
        != 0
    ), "werest is on the new shell's PATH without the venv: the test proves nothing"
    result = subprocess.run(
        [bash, "--noprofile", "--norc", "-e", "-c", block],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "command not found" not in result.stderr

    assert sorted(pd.read_parquet(tmp_path / "calls.parquet")["system"].unique()) == sorted(
        HYPOTHESES
    )
    assert (tmp_path / "out" / "calls" / "summary.json").is_file()
    assert (tmp_path / "out" / "calls" / "utterances.csv").is_file()
    for name in ("leaderboard.csv", "leaderboard.md", "leaderboard.html"):
        assert (tmp_path / "out" / "board" / name).is_file(), name
    # the werest that ran is this checkout's, from the new venv
    where = subprocess.run(
        [
            bash,
            "--noprofile",
            "--norc",
            "-c",
            ". .venv/bin/activate; command -v werest; "
            "python -c 'import werest; print(werest.__file__)'",
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert where == [str(venv / "bin" / "werest"), str(REPO / "src" / "werest" / "__init__.py")]
