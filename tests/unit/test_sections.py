"""The library takes typed sections, not long keyword lists (issue 43): below the commands,
one frozen dataclass per group of settings that travel together (what a stage is asked, how its
input is partitioned, how training rows are built), built by the commands from their one
settings object and by :mod:`werest.api` from its arguments, with their defaults declared once,
in the library."""

from __future__ import annotations

import inspect
from dataclasses import fields
from pathlib import Path

import pytest

import werest
from werest.cli.commands._common import build, training_options
from werest.cli.commands.estimate import estimate_options
from werest.cli.config import load_settings
from werest.cli.declare import entries
from werest.cli.main import main
from werest.cli.schema import SCHEMAS
from werest.demo import demo_table_path
from werest.errors import ConfigError
from werest.estimation.pipeline import EstimateOptions, estimate_frame
from werest.evaluation.fairness import FairnessSettings
from werest.evaluation.lodo import evaluate_lodo, fold_training_rows
from werest.model.training import TrainingOptions, train
from werest.partition.engine import Partitioning, stage_input
from werest.partition.estimate import estimate_input
from werest.partition.features import features_input
from werest.partition.leaderboard import leaderboard_input
from werest.partition.score import score_input
from werest.text import AUTO

#: the orchestrators and the other long-list functions that take sections now
TAKING_SECTIONS = (
    estimate_input,
    estimate_frame,
    leaderboard_input,
    score_input,
    features_input,
    stage_input,
    train,
    evaluate_lodo,
    fold_training_rows,
)
#: what a section holds and no signature repeats any more
IN_SECTIONS = {
    "chunk_rows",
    "n_partitions",
    "work_dir",
    "run_partitions",
    "system_order",
    "proxy_choice",
    "missing_hypotheses",
    "two_system_views",
    "boot",
    "held_out",
    "interval",
}


@pytest.mark.parametrize("function", TAKING_SECTIONS, ids=lambda f: f.__name__)
def test_the_long_lists_are_sections(function):
    parameters = inspect.signature(function).parameters
    assert len(parameters) <= 10, list(parameters)
    assert IN_SECTIONS.isdisjoint(parameters), sorted(IN_SECTIONS & set(parameters))


def test_estimate_input_takes_its_options_and_partitioning():
    parameters = list(inspect.signature(estimate_input).parameters)
    assert parameters == ["source", "models", "output_dir", "options", "partitioning", "name"]


def _library_settings() -> list[tuple[str, str, type]]:
    """(command, setting, library section) of every top-level setting a library section of
    that name declares (``library(Section, name)``)."""
    return [
        (command, entry.key, entry.source[0])
        for command, schema in SCHEMAS.items()
        for entry in entries(schema)
        if entry.source is not None and "." not in entry.key
    ]


def test_sections_are_where_the_commands_settings_get_their_defaults():
    """estimate's, leaderboard's, train's and evaluate's settings that a section takes are
    declared there, once: the section's default is the one the config, --help and the
    settings object see (train's and evaluate's n_jobs: theirs, on purpose)."""
    found = _library_settings()
    assert {command for command, _, _ in found} == {"estimate", "leaderboard", "train", "evaluate"}
    for command, name, section in found:
        entry = next(e for e in entries(SCHEMAS[command]) if e.key == name)
        library = next(f for f in fields(section) if f.name == name).default
        settings = load_settings(command, ["input=t.csv"] if command != "train" else [])
        value = getattr(settings, name)
        if entry.own_default:
            assert (command, name) in {("train", "n_jobs"), ("evaluate", "n_jobs")}
            continue
        expected = list(library) if isinstance(library, tuple) else library
        assert value == expected or str(value) == str(expected), (command, name, value, library)


def test_the_clis_normalisers_are_the_librarys():
    from typing import get_args

    from werest.cli.blocks import Normaliser, Strategy
    from werest.estimation.sampling import STRATEGIES
    from werest.text import NORMALISERS

    assert set(get_args(Normaliser)) == set(NORMALISERS)
    # auto and winner: werest sample's own (auto picks one of them; winner: the label loop's)
    assert set(get_args(Strategy)) == {*STRATEGIES, "auto", "winner"}


def test_the_commands_build_their_sections_from_their_settings():
    estimate = load_settings("estimate", ["input=t.csv", "target=[a,b]", "n_jobs=2"])
    options = estimate_options(estimate)
    assert options == EstimateOptions(target=["a", "b"], n_jobs=2)
    train_settings = load_settings("train", ["proxies=ranking"])
    assert training_options(train_settings) == TrainingOptions(
        normaliser=AUTO, proxies="ranking", n_jobs=train_settings.n_jobs
    )
    assert build(estimate.partition, Partitioning) == Partitioning()


def test_sections_refuse_what_no_run_can_do():
    with pytest.raises(ConfigError, match="missing_hypotheses must be one of exclude, deletions"):
        EstimateOptions(missing_hypotheses="zero")
    with pytest.raises(ConfigError, match="proxies must be one of label_free, ranking"):
        TrainingOptions(proxies="oracle")
    assert EstimateOptions(ranking=Path("model")).ranking == "model"


def test_the_api_builds_the_sections_it_hands_down(monkeypatch):
    """werest.estimate's keywords stay; they become one EstimateOptions."""
    from werest.estimation import pipeline

    seen = []
    original = pipeline.estimate_frame

    def spy(table, models, options=EstimateOptions(), **kwargs):
        seen.append(options)
        return original(table, models, options, **kwargs)

    monkeypatch.setattr(pipeline, "estimate_frame", spy)
    werest.estimate(demo_table_path(), targets="tiny", seed=3, n_resamples=50)
    assert seen == [EstimateOptions(target="tiny", seed=3, n_resamples=50)]


def test_the_api_leaderboard_takes_fairness_settings_and_writes_the_commands_files(tmp_path):
    """werest.leaderboard(fairness=FairnessSettings(...)) audits as the command's fairness.*
    settings do, and werest.write_leaderboard writes the files werest leaderboard writes, the
    same bytes."""
    demo = demo_table_path()
    args = ["leaderboard", f"input={demo}", "bootstrap.n_resamples=20"]
    assert main([*args, f"output_dir={tmp_path / 'cli'}"]) == 0
    audit = FairnessSettings()
    board = werest.leaderboard(demo, n_resamples=20, fairness=audit)
    written = werest.write_leaderboard(board, tmp_path / "api", n_resamples=20, fairness=audit)
    names = {path.name for path in written}
    assert {"leaderboard.csv", "leaderboard.md", "leaderboard.png", "leaderboard.html"} <= names
    for name in sorted(names - {"leaderboard.png"}):
        cli, api = tmp_path / "cli" / name, tmp_path / "api" / name
        assert api.read_bytes() == cli.read_bytes(), name
