"""Shared fixtures: the real data in ../shared/data, skipped with a reason when absent."""

from __future__ import annotations

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


@pytest.fixture(scope="session")
def dighr_table():
    """All dighr English folders imported once per session."""
    from werest.importers import import_table

    return import_table("dighr", [shared_path("dighr", "en")])


@pytest.fixture(scope="session")
def thennal10_table():
    from werest.importers import import_table

    return import_table("thennal10", [shared_path("thennal10")])
