"""The commands' settings classes (werest.cli.schema) are their configs: the composed config
has exactly the declared keys, for every option of every config group; the annotations give
the types; no command YAML declares a setting a second time."""

from __future__ import annotations

import itertools
from dataclasses import fields
from pathlib import Path
from typing import Any, Literal

import pytest
from omegaconf import OmegaConf, open_dict

from tests.helpers import run_cli
from werest.cli.config import check_settings, compose, conf_dir
from werest.cli.declare import (
    ABSENT,
    Names,
    Setting,
    defaults_of,
    entries,
    setting_of,
    settings_of,
)
from werest.cli.main import COMMANDS
from werest.cli.schema import SCHEMAS
from werest.errors import ConfigError
from werest.settings import Rule

#: command -> the config groups its YAML chooses from
GROUPS = {
    "transcribe": ["asr"],
    "embed": ["embedder"],
    "estimate": ["cluster", "partition"],
    "leaderboard": ["cluster", "partition", "bootstrap"],
    "score": ["cluster", "partition", "bootstrap"],
    "features": ["cluster", "partition"],
    "train": ["data", "features", "model"],
    "evaluate": ["data", "features", "model", "experiment"],
}


def options(group: str) -> list[str]:
    return sorted(path.stem for path in (conf_dir() / group).glob("*.yaml"))


def variants(command: str) -> list[list[str]]:
    """The default config and one override per option of each of its groups."""
    singles = [[f"{g}={o}"] for g in GROUPS.get(command, []) for o in options(g)]
    return [[], *singles]


CASES = [(command, overrides) for command in COMMANDS for overrides in variants(command)]


def test_every_command_has_a_schema():
    assert set(SCHEMAS) == set(COMMANDS)
    for schema in SCHEMAS.values():
        declared = [entry.key for entry in entries(schema) if "." not in entry.key]
        assert declared == [item.name for item in fields(schema)]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_no_command_yaml_declares_a_setting(command):
    """conf/<command>.yaml holds its usage comment and its defaults list, nothing else: a
    setting's default (and help) lives in its declaration only."""
    path = conf_dir() / f"{command}.yaml"
    node = OmegaConf.load(path)
    assert set(node) == {"defaults"}, f"{path} declares {sorted(set(node) - {'defaults'})}"
    assert node.defaults[0] == f"settings_{command}"
    assert path.read_text(encoding="utf-8").startswith(f"# werest {command}")


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_composed_defaults_are_the_declared_ones(command):
    """Without overrides, every declared default reaches the composed config unchanged, unless
    the default option of one of the command's config groups sets that key."""
    cfg = OmegaConf.to_container(compose(command), resolve=False, throw_on_missing=False)
    set_by_options = option_keys(command)
    checked = 0
    for entry in entries(SCHEMAS[command]):
        if entry.setting is None or entry.default is ABSENT or entry.key in set_by_options:
            continue
        value = cfg
        for part in entry.key.split("."):
            value = value[part]
        expected = str(entry.default) if isinstance(entry.default, Path) else entry.default
        if isinstance(expected, dict):  # ablation: a group may add to it (ablation.model)
            value = {key: value[key] for key in expected}
        assert value == expected, entry.key
        checked += 1
    assert checked >= 3


def option_keys(command: str) -> set[str]:
    """The dotted keys the default options of ``command``'s config groups set."""
    keys: set[str] = set()
    for item in OmegaConf.load(conf_dir() / f"{command}.yaml").defaults[1:]:
        ((choice, option),) = OmegaConf.to_container(item).items()
        group, _, package = choice.partition("@")  # model@ablation.model: hgb
        path = conf_dir() / group / f"{option}.yaml"
        body = OmegaConf.to_container(OmegaConf.load(path)) or {}
        body.pop("defaults", None)
        is_global = "@package _global_" in path.read_text(encoding="utf-8")
        keys |= set(_dotted(body, "" if is_global else f"{package or group}."))
    return keys


def _dotted(node, prefix: str = "") -> list[str]:
    if isinstance(node, dict):
        out = [prefix.rstrip(".")] if prefix else []
        for key, value in node.items():
            out += _dotted(value, f"{prefix}{key}.")
        return out
    return [prefix.rstrip(".")]


def test_the_defaults_node_is_plain_and_skips_what_groups_give():
    node = defaults_of(SCHEMAS["evaluate"])
    assert node["model"] == {} and node["data"] == {}  # open blocks: the groups fill them
    assert "lodo" not in node  # optional: only experiment=lodo has it
    assert node["cases"]["source_system"] == "???"  # required until the experiment sets it
    assert node["output_dir"] == "experiments/results"  # a Path default, as text
    assert defaults_of(SCHEMAS["score"])["bootstrap"]["n_resamples"] == 1000


@pytest.mark.parametrize(
    ("annotation", "metadata", "expected"),
    [
        (int, {"rule": Rule(minimum=1)}, Setting(int, minimum=1)),
        (int, {"rule": Rule(nonzero=True)}, Setting(int, nonzero=True)),
        (str, {"rule": Rule(choices=("a", "b"))}, Setting(str, choices=("a", "b"))),
        (float | None, {}, Setting(float, nullable=True)),
        (bool, {}, Setting(bool)),
        (Literal["a", "b"] | None, {}, Setting(str, nullable=True, choices=("a", "b"))),
        (Path, {}, Setting("path")),
        (Path | None, {}, Setting("path", nullable=True)),
        (list[str], {}, Setting("list")),
        (Names, {}, Setting("names")),
        (Names | None, {}, Setting("names", nullable=True)),
        (Any, {}, Setting("any")),
        (Any | None, {}, Setting("any", nullable=True)),
    ],
)
def test_the_annotation_gives_the_type(annotation, metadata, expected):
    assert setting_of(annotation, metadata) == expected


@pytest.mark.parametrize("annotation", [dict[str, int], list[int], int | float, tuple])
def test_an_annotation_without_a_werest_type_is_refused(annotation):
    with pytest.raises(TypeError, match="no werest type"):
        setting_of(annotation, {})


@pytest.mark.parametrize(("command", "overrides"), CASES, ids=lambda v: str(v))
def test_the_yaml_and_the_schema_agree(command, overrides):
    check_settings(command, compose(command, overrides))


def test_a_key_lost_or_added_is_caught():
    cfg = compose("estimate", ["input=x.csv", "~chunk_utterances"])
    with pytest.raises(
        ConfigError,
        match=r"chunk_utterances: declared in werest.cli.schema.EstimateSettings but missing",
    ):
        check_settings("estimate", cfg)
    cfg = compose("estimate", ["input=x.csv", "+chunk_rows=5"])
    # a key nobody declared is named, with the closest setting
    with pytest.raises(ConfigError, match=r"no setting 'chunk_rows' \(did you mean chunk_utt"):
        check_settings("estimate", cfg)


def test_closed_blocks_are_checked_and_group_blocks_stay_open():
    cfg = compose("score", ["input=x.csv"])
    with open_dict(cfg):
        cfg.bootstrap["resamples"] = 10
    with pytest.raises(
        ConfigError,
        match=r"no setting 'bootstrap.resamples' \(did you mean bootstrap.n_resamples",
    ):
        check_settings("score", cfg)
    cfg = compose("train", ["model=stack"])
    assert "param_grids" in cfg.model and "model.param_grids" not in settings_of(SCHEMAS["train"])
    check_settings("train", cfg)  # the model group's own keys are fine


def test_types_come_from_the_schema():
    cfg = compose("estimate", ["input=x.csv", "n_jobs='2'", "chunk_utterances=10.0"])
    check_settings("estimate", cfg)
    assert (cfg.n_jobs, cfg.chunk_utterances) == (2, 10)
    for bad, message in (("n_jobs=0", "other than 0"), ("trust_model=maybe", "true or false")):
        with pytest.raises(ConfigError, match=message):
            check_settings("estimate", compose("estimate", ["input=x.csv", bad]))


def test_every_group_option_is_covered():
    """The variants above reach every file of every group the commands use."""
    used = set(itertools.chain.from_iterable(GROUPS.values()))
    assert used == {p.name for p in conf_dir().iterdir() if p.is_dir()}


@pytest.mark.parametrize(
    ("args", "unset"),
    [
        (["score", "input="], "input"),
        (["transcribe", "input=t.parquet", "out="], "out"),
        (["sample", "input=t.parquet", "budget=''"], "budget"),
        (["features", "input=", "out=f.parquet"], "input"),
    ],
)
def test_a_required_setting_given_empty_is_unset(capsys, args, unset):
    """A setting declared without a default (``???``) is required; given empty it is as
    unset, one line naming it, whichever command (no command checks it again itself)."""
    status, out, err = run_cli(capsys, *args)
    assert status == 2 and out == ""
    assert err.strip() == (
        f"werest {args[0]}: error: missing required setting(s) {unset}, e.g. {unset}=... "
        f"(werest {args[0]} --help lists the settings)"
    )
