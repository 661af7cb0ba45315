"""Helpers both test tiers use: running the CLI as a user does, and checking its one-line
errors (the contract in docs/architecture.md)."""

from __future__ import annotations

import shutil
import signal
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from werest.cli.main import main


def werest_command() -> list[str]:
    """The installed console script (the venv's bin beside this Python), else the module."""
    script = Path(sys.executable).with_name("werest")
    if script.is_file():
        return [str(script)]
    found = shutil.which("werest")
    return [found] if found else [sys.executable, "-m", "werest.cli"]


WEREST = werest_command()

#: a two-system table with references, as small as a bad-input case needs
SMALL = (
    "dataset,utt_id,system,hypothesis,reference\n"
    "calls,u1,alpha,hello world,hello world\n"
    "calls,u1,beta,hello word,hello world\n"
    "calls,u2,alpha,good morning,good morning\n"
    "calls,u2,beta,,good morning\n"
)


def run_cli(capsys, *args: object) -> tuple[int, str, str]:
    """``werest ARGS`` in-process: (exit status, stdout, stderr)."""
    status = main([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def assert_one_line_error(status: int, err: str, command: str, *fragments: str) -> str:
    """A user's mistake: exit status 2, one line on stderr, no traceback; the line."""
    assert "Traceback" not in err, err
    assert status == 2, err
    lines = err.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got {len(lines)}:\n{err}"
    assert lines[0].startswith(f"werest {command}: error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], f"{fragment!r} not in {lines[0]!r}"
    return lines[0]


def handles_sigterm(pid: int) -> bool:
    """Whether process ``pid`` catches SIGTERM: the CLI's handlers are in place."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught, 16) >> (signal.SIGTERM - 1) & 1)


def writing(parent: Path, name: str) -> bool:
    """Whether a file (or a temporary one) is in the run's staging folder for ``name``."""
    for staging in parent.glob(f".{name}.staging-*"):
        try:
            if any(staging.iterdir()):
                return True
        except OSError:  # renamed into place or removed meanwhile
            pass
    return False


def system_files(folder: Path, rows: int) -> list[Path]:
    """Two per-system CSV files for ``werest import csv`` (``rows`` utterances each)."""
    rng = np.random.default_rng(0)
    words = np.array(["the", "cat", "sat", "on", "a", "mat", "with", "more", "words"])
    references = [" ".join(rng.choice(words, 8)) for _ in range(rows)]
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for system in ("alpha", "beta"):
        hypotheses = [r if rng.random() < 0.7 else r.rsplit(" ", 1)[0] for r in references]
        frame = pd.DataFrame(
            {
                "id": [f"u{i}" for i in range(rows)],
                "reference": references,
                "hypothesis": hypotheses,
            }
        )
        frame.to_csv(folder / f"{system}.csv", index=False)
        files.append(folder / f"{system}.csv")
    return files


#: the files a whole run of each folder-writing command leaves in its output_dir
COMMAND_OUTPUTS = {
    "estimate": {
        "utterances.csv",
        "summary.json",
        "resources.json",
        "pairs.csv",
        "config.yaml",
        "winner.json",
    },
    "leaderboard": {
        "leaderboard.csv",
        "datasets.csv",
        "pairs.csv",
        "descriptive.csv",
        "leaderboard.md",
        "leaderboard.png",
        "leaderboard.html",
        "config.yaml",
    },
    "score": {"config.yaml", "ranking.json", "resources.json", "scores.csv", "utterances.csv"},
}


def write_file(path: Path, data: str | bytes) -> Path:
    """``data`` (text as UTF-8, or bytes) as ``path``, its folders made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


def snapshot(path: Path) -> dict[str, bytes] | None:
    """Every file under ``path`` (itself if a file) by relative name, with its bytes; None when
    it does not exist (an output before and after an interrupted run)."""
    if not path.exists():
        return None
    if path.is_file():
        return {path.name: path.read_bytes()}
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*") if p.is_file()}
