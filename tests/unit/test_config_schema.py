"""The commands' schemas (werest.cli.schema) and the YAML files agree key for key, for every
option of every config group, and a setting renamed on one side only is caught."""

from __future__ import annotations

import itertools
from dataclasses import fields

import pytest
from omegaconf import OmegaConf, open_dict

from werest.cli.config import check_settings, compose, conf_dir
from werest.cli.main import COMMANDS
from werest.cli.schema import SCHEMAS, settings_of
from werest.errors import ConfigError

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
        assert set(OmegaConf.structured(schema)) == {item.name for item in fields(schema)}


@pytest.mark.parametrize(("command", "overrides"), CASES, ids=lambda v: str(v))
def test_the_yaml_and_the_schema_agree(command, overrides):
    check_settings(command, compose(command, overrides))


def test_a_setting_renamed_in_the_yaml_alone_is_caught(monkeypatch):
    cfg = compose("estimate", ["input=x.csv"])
    with open_dict(cfg):
        cfg["chunk_rows"] = cfg.pop("chunk_utterances")
    with pytest.raises(
        ConfigError, match=r"chunk_utterances: in werest.cli.schema.EstimateSettings"
    ):
        check_settings("estimate", cfg)
    cfg = compose("estimate", ["input=x.csv"])
    with open_dict(cfg):
        cfg["chunk_rows"] = 5
    # a key the user added (+chunk_rows=5) is named as theirs, with the closest setting
    with pytest.raises(ConfigError, match=r"no setting 'chunk_rows' \(did you mean chunk_utt"):
        check_settings("estimate", cfg)
    # the same key written in conf/estimate.yaml without a schema entry is the developer's
    monkeypatch.setattr("werest.cli.config._in_yaml", lambda command, key: True)
    with pytest.raises(ConfigError, match=r"chunk_rows: a setting of conf/estimate.yaml"):
        check_settings("estimate", cfg)


def test_closed_blocks_are_checked_and_group_blocks_stay_open():
    cfg = compose("score", ["input=x.csv"])
    with open_dict(cfg):
        cfg.bootstrap["resamples"] = 10
    with pytest.raises(ConfigError, match=r"bootstrap.resamples: a setting"):
        check_settings("score", cfg)
    cfg = compose("train", ["model=stack"])
    assert "param_grids" in cfg.model and "model.param_grids" not in settings_of("train")
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
