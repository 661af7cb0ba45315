"""Outputs whole or absent under real signals (issue "First contact and failure").

``python -m werest.cli estimate | leaderboard | import`` run as subprocesses and get SIGINT or
SIGTERM at seeded random moments after the CLI installed its handlers (read from
``/proc/<pid>/status``), spread over a whole run, and once while the outputs are being
written (as soon as a file appears in the staging folder). After each run: the exit status
is 0 (finished first) or 130/143 with "interrupted" as the last line of stderr and no
traceback; the output is absent, or the previous run's byte for byte, or a whole new run
(every file, config.yaml included, and nothing of the previous run's); nothing else is left
in the parent folder (no ``*.tmp``, no staging or aside folder, no created parent).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.helpers import COMMAND_OUTPUTS, handles_sigterm, snapshot, system_files, writing
from werest.demo import demo_table_path

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc/<pid>/status"),
]

SRC = Path(__file__).resolve().parents[2] / "src"
STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}


def _environment() -> dict[str, str]:
    """This checkout's code in the child, whatever is installed."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH")) if p)
    return env


def run(args: list[str], cwd: Path, signum=None, delay=0.0, output: Path | None = None):
    """Run ``werest args``; ``signum`` after ``delay`` seconds from the handlers' install
    (with ``output``: once the run starts writing it instead). Returns (status, stderr,
    seconds from the install to the exit)."""
    command = [sys.executable, "-m", "werest.cli", *args]
    child = subprocess.Popen(
        command, cwd=cwd, env=_environment(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    while child.poll() is None and not handles_sigterm(child.pid):
        time.sleep(0.005)
    ready = time.perf_counter()
    if signum is not None:
        if output is not None:
            while child.poll() is None and not writing(output.parent, output.name):
                time.sleep(0.002)
        else:
            while child.poll() is None and time.perf_counter() - ready < delay:
                time.sleep(0.005)
        if child.poll() is None:
            child.send_signal(signum)
    _, err = child.communicate(timeout=300)
    return child.returncode, err.decode(), time.perf_counter() - ready


def check_status(status: int, err: str, signum, command: str) -> None:
    assert "Traceback" not in err, err
    assert status in (0, STATUS.get(signum, 0)), (status, err)
    if status:
        assert err.splitlines()[-1] == f"werest {command}: interrupted", err
        assert err.count("interrupted") == 1, err


def check_clean(parent: Path) -> None:
    """No temporary file, staging or aside folder, scratch folder left anywhere."""
    assert not sorted(p.name for p in parent.rglob(".*")), sorted(parent.rglob(".*"))
    assert not list(parent.rglob("*.tmp"))


def folder_outcome(folder: Path, previous: dict | None, expected: set[str]) -> str:
    """'absent', 'previous' or 'new' (a whole run: exactly the expected files, none empty)."""
    now = snapshot(folder)
    if now is None:
        assert previous is None, f"{folder} is gone: the previous run's folder was removed"
        return "absent"
    if now == previous:
        return "previous"
    assert set(now) == expected, f"a mix or a part: {sorted(now)}"
    assert all(now.values()), [name for name, data in now.items() if not data]
    return "new"


def _signals(seed: int, count: int) -> list[tuple[signal.Signals, float]]:
    """``count`` (signal, fraction of a run) pairs, seeded, in order of the fraction: both
    signals, one fraction in each of ``count`` equal spans of the run (and a little past its
    end, where the run finishes first)."""
    rng = np.random.default_rng(seed)
    fractions = (np.arange(count) + rng.random(count)) / count * 1.1
    kinds = [signal.SIGINT, signal.SIGTERM] * count
    return [(kinds[i + seed % 2], float(fractions[i])) for i in range(count)]


FOLDER_COMMANDS = {name: COMMAND_OUTPUTS[name] for name in ("estimate", "leaderboard")}

#: A file an earlier run may have written and a new run does not: whole replacement drops it.
STALE = {"estimate": "utterances/part-00000.csv", "leaderboard": "lid_accuracy.csv"}


def previous_run(folder: Path, command: str) -> dict[str, bytes]:
    """A previous run's folder (its files hold their names, so that any mix shows)."""
    for name in [*FOLDER_COMMANDS[command], STALE[command]]:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(f"{name} of an earlier run\n", encoding="utf-8")
    return snapshot(folder)


@pytest.mark.parametrize("command", sorted(FOLDER_COMMANDS))
def test_an_interrupted_run_leaves_its_output_folder_whole_or_absent(tmp_path, command):
    expected = FOLDER_COMMANDS[command]
    folder = tmp_path / "out"
    previous = previous_run(folder, command)
    args = [command, f"input={demo_table_path()}", f"output_dir={folder}"]
    outcomes = []
    # during the write: the previous run's folder or the new one, never a mix
    (early, early_at), (late, late_at) = _signals(seed=len(command), count=2)
    status, err, seconds = run(args, tmp_path, late, output=folder)  # about a whole run
    check_status(status, err, late, command)
    outcomes.append(folder_outcome(folder, previous, expected))
    previous = snapshot(folder)
    check_clean(tmp_path)
    # late in the run (or after it)
    status, err, _ = run(args, tmp_path, early, delay=late_at * seconds)
    check_status(status, err, early, command)
    outcomes.append(folder_outcome(folder, previous, expected))
    check_clean(tmp_path)
    # early in the run: a new folder (its parents too) is there whole or not at all
    fresh = tmp_path / "new" / "deeper" / "out"
    args = [command, f"input={demo_table_path()}", f"output_dir={fresh}"]
    status, err, _ = run(args, tmp_path, late, delay=early_at * seconds)
    check_status(status, err, late, command)
    outcomes.append(folder_outcome(fresh, None, expected))
    if outcomes[-1] == "absent":
        assert not (tmp_path / "new").exists()  # the parents it made are gone too
    check_clean(tmp_path)
    print(command, outcomes, f"{seconds:.1f} s a run")


ROWS = 10_000  # utterances per system: the import takes a few seconds


def test_an_interrupted_partitioned_estimate_stops_its_children_and_leaves_nothing(tmp_path):
    """Partitions run in spawned children: the interrupt stops them too, without a traceback
    of theirs, before the staging and scratch folders go."""
    folder = tmp_path / "out"
    args = ["estimate", f"input={demo_table_path()}", f"output_dir={folder}"]
    args += ["partition.rows=10", "partition.count=4"]
    delay = float(np.random.default_rng(5).uniform(0.5, 3.0))  # seconds into the partitions
    child = subprocess.Popen(
        [sys.executable, "-m", "werest.cli", *args],
        cwd=tmp_path,
        env=_environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    while child.poll() is None and not list(tmp_path.glob(".werest-partitions-*")):
        time.sleep(0.005)
    time.sleep(delay)
    if child.poll() is None:
        child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=300)
    check_status(child.returncode, err.decode(), signal.SIGTERM, "estimate")
    expected = FOLDER_COMMANDS["estimate"] - {"utterances.csv"}
    now = snapshot(folder)
    assert now is None or {name.split("/")[0] for name in now} == {*expected, "utterances"}
    check_clean(tmp_path)


def test_an_interrupted_import_leaves_its_table_whole_or_absent(tmp_path):
    files = system_files(tmp_path / "inputs" / "test", rows=ROWS)
    out = tmp_path / "results" / "table.parquet"
    args = ["import", "csv", *map(str, files), "--out", str(out)]

    def outcome(previous):
        now = {**(snapshot(out) or {}), **(snapshot(Path(f"{out}.config.yaml")) or {})}
        if not now:
            assert previous is None, "the previous table is gone"
            return "absent"
        if now == previous:
            return "previous"
        assert set(now) == {"table.parquet", "table.parquet.config.yaml"}, sorted(now)
        assert len(pd.read_parquet(out)) == 2 * ROWS
        return "new"

    # while writing into a folder that does not exist yet: the folder comes with the table
    status, err, seconds = run(args, tmp_path, signal.SIGTERM, output=out)  # about a run
    check_status(status, err, signal.SIGTERM, "import")
    if outcome(None) == "absent":
        assert not out.parent.exists()
        out.parent.mkdir()
        for path in (out, Path(f"{out}.config.yaml")):  # a previous run's, to replace whole
            path.write_text(f"{path.name} of an earlier run\n", encoding="utf-8")
    check_clean(tmp_path)
    previous = {**snapshot(out), **snapshot(Path(f"{out}.config.yaml"))}
    for signum, fraction in _signals(seed=3, count=2):
        status, err, _ = run(args, tmp_path, signum, delay=fraction * seconds)
        check_status(status, err, signum, "import")
        outcome(previous)
        previous = {**snapshot(out), **snapshot(Path(f"{out}.config.yaml"))}
        check_clean(tmp_path)
