"""A dataset or system name that matches nothing in the input is a one-line error with the
closest names ("did you mean"), never silently ignored."""

from __future__ import annotations

import pytest

from tests.helpers import assert_one_line_error, run_cli
from werest.demo import demo_table_path
from werest.errors import ConfigError, unknown_name

DEMO = demo_table_path()  # datasets demo-calls, demo-meetings; systems base, large-v3, tiny, …


def test_unknown_name_offers_the_closest_names():
    error = unknown_name("dataset", "afri-dve", ["afri-dev", "afri-test", "libri"], "datasets")
    assert isinstance(error, ConfigError)
    assert str(error) == (
        "dataset 'afri-dve' is not in the input; did you mean 'afri-dev' or 'afri-test'?"
    )


def test_unknown_name_lists_the_names_when_none_is_close():
    error = unknown_name("target system", "zzz", ["b", "a"], "systems")
    assert str(error) == "target system 'zzz' is not in the input (systems: a, b)"
    many = unknown_name("dataset", "zzz", [f"d{i:02d}" for i in range(30)], "datasets")
    assert "… (30 in all)" in str(many)


@pytest.mark.parametrize(
    ("command", "setting", "fragments"),
    [
        ("leaderboard", "exclude_datasets=[demo-cals]", ["exclude_datasets", "'demo-calls'"]),
        ("leaderboard", "datasets=demo-cals", ["dataset 'demo-cals'", "did you mean 'demo-calls'"]),
        ("leaderboard", "system_order=[larg-v3]", ["system_order", "did you mean 'large-v3'"]),
        ("estimate", "target=tinny", ["target system 'tinny'", "did you mean 'tiny'"]),
        ("estimate", "proxy=larg-v3", ["proxy system 'larg-v3'", "did you mean 'large-v3'"]),
        ("estimate", "system_order=[bse]", ["system_order", "did you mean 'base'"]),
        ("features", "targets=[tinny]", ["target system 'tinny'", "did you mean 'tiny'"]),
    ],
)
def test_a_name_that_matches_nothing_is_one_line(capsys, tmp_path, command, setting, fragments):
    out = tmp_path / "out"
    place = f"out={out}.csv" if command == "features" else f"output_dir={out}"
    status, _, err = run_cli(capsys, command, f"input={DEMO}", setting, place)
    assert_one_line_error(status, err, command, *fragments)
    assert not out.exists()


def test_a_misspelt_exclusion_is_caught_in_a_partitioned_run_too(capsys, tmp_path):
    status, _, err = run_cli(
        capsys,
        "leaderboard",
        f"input={DEMO}",
        "exclude_datasets=demo-cals",
        "partition.rows=10",
        f"output_dir={tmp_path / 'out'}",
    )
    assert_one_line_error(status, err, "leaderboard", "did you mean 'demo-calls'")
