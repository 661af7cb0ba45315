"""Progress on every wait (werest.logs): each stage a person waits on shows a progress bar on
stderr when stderr is a terminal, none otherwise and none with ``progress=false``, and logs its
duration at INFO ("features: 3.2 s")."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys

import pytest

from tests.conftest import REPO
from werest import logs
from werest.cli.main import main

#: a stage of one blocking call, then one over items, as the library runs them
STAGES = (
    "import time\n"
    "from werest import logs\n"
    "logs.setup('WARNING', progress={progress})\n"
    "with logs.stage('predict'):\n"
    "    time.sleep(0.6)\n"
    "for _ in logs.track(range(3), desc='bootstrap', unit='cell'):\n"
    "    time.sleep(0.1)\n"
)


@pytest.fixture(autouse=True)
def _restore_progress(monkeypatch):
    """The CLI sets WEREST_PROGRESS for the process (its children inherit it): undo it."""
    monkeypatch.setenv(logs.PROGRESS_ENV, "1")


def on_a_terminal(code: str) -> str:
    """What ``python -c code`` writes to a terminal (a pseudo-terminal 120 columns wide)."""
    pty = pytest.importorskip("pty")
    import fcntl
    import struct
    import termios

    pid, fd = pty.fork()
    if pid == 0:  # the child: its stdout and stderr are the terminal
        os.environ["PYTHONPATH"] = str(REPO / "src")
        os.execv(sys.executable, [sys.executable, "-c", code])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    out = bytearray()
    try:
        while data := os.read(fd, 4096):
            out.extend(data)
    except OSError:  # the child closed the terminal
        pass
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, out.decode(errors="replace")
    return out.decode(errors="replace")


def test_a_stage_logs_its_time_at_info(caplog):
    with caplog.at_level(logging.INFO, logger="werest"):
        with logs.stage("features"):
            pass
        list(logs.track([1, 2], desc="bootstrap", unit="cell"))
    lines = [r.getMessage() for r in caplog.records if r.name == "werest"]
    assert len(lines) == 2
    assert re.fullmatch(r"features: \d+\.\d s", lines[0]), lines
    assert re.fullmatch(r"bootstrap: \d+\.\d s", lines[1]), lines


def test_a_failed_stage_logs_no_time(caplog):
    with (
        caplog.at_level(logging.INFO, logger="werest"),
        pytest.raises(ValueError),
        logs.stage("features"),
    ):
        raise ValueError("boom")
    assert not [r for r in caplog.records if r.getMessage().startswith("features:")]


def test_bars_on_a_terminal_and_none_with_progress_false():
    shown = on_a_terminal(STAGES.format(progress=True))
    assert "\rpredict: 00:00" in shown and "bootstrap: 100%" in shown, shown
    hidden = on_a_terminal(STAGES.format(progress=False))
    assert "predict" not in hidden and "bootstrap" not in hidden and "\r" not in hidden, hidden


def test_no_bar_when_stderr_is_not_a_terminal():
    result = subprocess.run(
        [sys.executable, "-c", STAGES.format(progress=True)],
        capture_output=True,
        text=True,
        env=os.environ | {"PYTHONPATH": str(REPO / "src")},
        check=True,
    )
    assert result.stderr == "", result.stderr


def test_progress_false_reaches_the_library(tmp_path, capsys):
    table = tmp_path / "t.csv"
    table.write_text(
        "dataset,utt_id,system,hypothesis,reference\n"
        "d,u1,a,hello world,hello world\nd,u1,b,hello word,hello world\n",
        encoding="utf-8",
    )
    args = ["score", f"input={table}", f"output_dir={tmp_path / 'out'}"]
    assert main([*args, "progress=false"]) == 0
    assert not logs.progress_on() and os.environ[logs.PROGRESS_ENV] == "0"
    assert logs.bar(range(2), desc="x").disable  # even on a terminal
    assert main([*args, "log_level=INFO"]) == 0  # the default turns them back on
    assert logs.progress_on()
    err = capsys.readouterr().err
    assert re.search(r"^INFO werest: bootstrap: \d+\.\d s$", err, flags=re.M), err
    assert re.search(r"^INFO werest: read \(t\.csv\): \d+\.\d s$", err, flags=re.M), err


def test_the_estimate_stages_log_their_time(tmp_path, capsys):
    """``werest demo`` (``werest estimate`` on the example) at INFO: one line per stage."""
    assert main(["demo", f"output_dir={tmp_path}", "log_level=INFO", "progress=false"]) == 0
    err = capsys.readouterr().err
    for stage in ("read \\(demo_transcripts.csv\\)", "features", "predict", "bootstrap", "write"):
        assert len(re.findall(rf"^INFO werest: {stage}: \d+\.\d s$", err, flags=re.M)) == 1, (
            stage,
            err,
        )


def test_help_shows_the_setting(capsys):
    assert main(["estimate", "--help"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^  progress=true +# progress bars on stderr", out, flags=re.M), out


def test_model_loading_importing_and_the_leaderboard_pairs_log_their_time(tmp_path, capsys):
    """The stages issue 36 found silent: loading the model (estimate), importing and writing a
    table (import), and the leaderboard's paired tests."""
    from werest.demo import demo_table_path

    def stages(*args: str) -> str:
        assert main([*args, "log_level=INFO", "progress=false"]) == 0
        return capsys.readouterr().err

    seconds = r": \d+\.\d s$"
    err = stages("estimate", f"input={demo_table_path()}", f"output_dir={tmp_path / 'est'}")
    assert re.search(rf"^INFO werest: load model \(default\.skops\){seconds}", err, re.M), err
    err = stages("leaderboard", f"input={demo_table_path()}", f"output_dir={tmp_path / 'lb'}")
    assert re.search(rf"^INFO werest: pairs \(bootstrap\){seconds}", err, re.M), err
    system = tmp_path / "inputs" / "test" / "alpha.csv"  # dataset folder / system file
    system.parent.mkdir(parents=True)
    system.write_text("id,reference,hypothesis\nu1,hello world,hello word\n", encoding="utf-8")
    err = stages("import", "csv", str(system), "--out", str(tmp_path / "t.parquet"))
    for stage in (r"import \(csv\)", "write"):
        assert re.search(rf"^INFO werest: {stage}{seconds}", err, re.M), (stage, err)


@pytest.mark.parametrize("shown", [True, False])
def test_the_normalising_and_features_bars_move_in_steps(tmp_path, monkeypatch, shown):
    """Issue 43: on a 10,000-row table the "normalising" bar sat at 0/1 for seconds and the
    features bar at "0/1 chunk" for the whole stage. Both now advance in steps
    (experiments/bench_progress.py measures the waits on a terminal: under 1 s). The features'
    chunks are that small only for a bar that shows: without one, a chunk holds at least
    ``STEP_ROWS`` rows (each chunk has a cost of its own)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "bench_progress", REPO / "experiments" / "bench_progress.py"
    )
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.write_table(tmp_path / "t.csv", 10_000)
    totals: dict[str, list] = {}
    real_bar = logs.bar

    def bar(iterable=None, *, desc="", total=None, **kwargs):
        totals.setdefault(desc, []).append(total)
        return real_bar(iterable, desc=desc, total=total, **kwargs)

    monkeypatch.setattr(logs, "bar", bar)
    monkeypatch.setattr(logs, "bars_shown", lambda: shown)  # as on a terminal, or not
    args = ["estimate", f"input={tmp_path / 't.csv'}", f"output_dir={tmp_path / 'o'}"]
    assert main([*args, "progress=false"]) == 0
    assert max(totals["normalising"]) >= 10, totals  # 1,000 distinct strings a step
    # 2,500 utterances, 500 a step (track's bar); without a bar, the 10,000 rows in one chunk
    assert totals["features"] == ([5] if shown else [1]), totals
