"""The layout the user asked for (issue 36, item 7): conf/ and models/ at the repository's top
level, beside src/, found by werest.io.shipped from the repository (the wheel's copy inside the
package is tests/integration/test_wheel.py's)."""

from __future__ import annotations

from tests.conftest import REPO
from werest.io import shipped


def test_conf_and_models_are_at_the_top_level_and_found_there():
    for folder in ("conf", "models"):
        assert (REPO / folder).is_dir()
        assert not (REPO / "src" / "werest" / folder).exists()
        assert shipped(folder) == REPO / folder
    assert (shipped("conf") / "estimate.yaml").is_file()
    assert (shipped("models") / "default.skops").is_file()


def test_the_wheel_carries_them_inside_the_package():
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    force = config["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert force == {"conf": "werest/conf", "models": "werest/models"}
