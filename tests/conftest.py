"""Shared fixtures: the real data in ../shared/data, skipped with a reason when absent."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def shared_path(*parts: str) -> Path:
    """A path below ../shared/data; skips the test when it is not there."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs the shared data at {path} (../shared beside the repo); absent here")
    return path


def an4_test_utterances(folder: Path, count: int) -> Path:
    """The first ``count`` AN4 test utterances as an utterance table (``werest import
    sphinx``) written to ``folder``; skips the test without the shared data."""
    from werest.ingest.importers import import_table
    from werest.ingest.table import write_table

    table = import_table("sphinx", [shared_path("an4")])
    table = table[table["dataset"] == "an4-test"].head(count).reset_index(drop=True)
    return write_table(table, folder / "an4_test.parquet")


@pytest.fixture(scope="session")
def dighr_table():
    """All dighr English folders imported once per session."""
    from werest.ingest.importers import import_table

    return import_table("dighr", [shared_path("dighr", "en")])


@pytest.fixture(scope="session")
def thennal10_table():
    from werest.ingest.importers import import_table

    return import_table("thennal10", [shared_path("thennal10")])


@pytest.fixture
def immutable():
    """``immutable(path)`` sets the immutable flag (chattr +i), cleared again at teardown
    whatever happens. Needs root (CAP_LINUX_IMMUTABLE) and chattr, on a file system with the
    flag; else the test skips, saying which."""
    if os.geteuid() != 0:
        pytest.skip("chattr +i needs root (CAP_LINUX_IMMUTABLE)")
    if shutil.which("chattr") is None:
        pytest.skip("chattr is not installed")
    locked: list[Path] = []

    def lock(path: Path) -> None:
        done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"no immutable flag on this file system: {done.stderr.strip()}")
        locked.append(path)

    try:
        yield lock
    finally:
        for path in reversed(locked):
            subprocess.run(["chattr", "-i", str(path)], check=False)
