"""One typed settings object per command, handed to its ``run`` (issue 36, item 8): an instance
of the command's class in werest.cli.schema, read by attribute; no command reads a config with
``cfg.get(key, fallback)``, and every shared setting is declared once."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import typing
from dataclasses import fields, is_dataclass
from pathlib import Path

import pytest

from werest.cli.blocks import FIT_N_JOBS, N_JOBS
from werest.cli.config import load_settings, settings_from
from werest.cli.declare import Open, composed, entries
from werest.cli.schema import (
    SCHEMAS,
    Bootstrap,
    Cluster,
    EstimateSettings,
    EvaluateSettings,
    TrainSettings,
)
from werest.settings import N_JOBS_HELP, n_jobs_param, rule_of

cli_main = importlib.import_module("werest.cli.main")  # werest.cli.main is also a function
COMMANDS_DIR = Path(cli_main.__file__).parent / "commands"
REQUIRED = {
    "import": ["format=csv", "paths=[a.csv]", "out=t.parquet"],
    "score": ["input=t.csv"],
    "features": ["input=t.csv", "out=f.parquet"],
    "embed": ["input=f.parquet", "transcripts=t.parquet"],
    "transcribe": ["input=t.csv", "out=o.parquet"],
    "estimate": ["input=t.csv"],
    "leaderboard": ["input=t.csv"],
    "train": [],
    "convert-model": ["model_path=m.joblib"],
    "evaluate": [],
    "demo": [],
    "segmentation": ["reference=r.TextGrid", "hypothesis=h.TextGrid"],
    "sample": ["input=t.csv", "budget=5"],
}


def config_reads(source: str) -> list[str]:
    """What in a command's source reads a config instead of its settings object: a ``cfg``,
    a DictConfig, a ``.get(`` on the settings or an ``OmegaConf.select``."""
    found = [f"cfg at {m.start()}" for m in re.finditer(r"\bcfg\b", source)]
    found += ["DictConfig"] * source.count("DictConfig")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = ast.unparse(node.func.value)
            if node.func.attr == "get" and ("settings" in owner or "cfg" in owner):
                found.append(ast.unparse(node))
            if node.func.attr == "select":
                found.append(ast.unparse(node))
    return found


def test_no_command_reads_its_config_with_a_fallback():
    """The settings object has every attribute, with the schema's one default: a ``.get(``
    on a config (``cfg.get("retries") or 0``) would re-default it."""
    for path in sorted(COMMANDS_DIR.glob("*.py")):
        assert config_reads(path.read_text(encoding="utf-8")) == [], path.name


def test_the_scan_finds_a_fallback():
    bad = "def run(cfg):\n    return int(cfg.cluster.get('retries') or 0)\n"
    assert "cfg.cluster.get('retries')" in config_reads(bad)
    assert config_reads("def run(settings):\n    return settings.get('x', 1)\n")
    assert config_reads("def run(s):\n    return OmegaConf.select(s, 'title')\n")
    assert config_reads("def run(settings):\n    return settings.cluster.retries\n") == []


@pytest.mark.parametrize("command", sorted(SCHEMAS))
def test_every_run_receives_its_settings_class(command):
    module = importlib.import_module(f"werest.cli.commands.{cli_main.COMMANDS[command][0]}")
    parameters = list(inspect.signature(module.run).parameters.values())
    assert len(parameters) == 1
    annotation = parameters[0].annotation  # its return type may be a type checker's only
    assert eval(annotation, vars(module)) is SCHEMAS[command]


@pytest.mark.parametrize("command", sorted(SCHEMAS))
def test_the_cli_hands_run_an_instance_of_the_class(command, monkeypatch, tmp_path):
    """``werest <command>`` composes, validates and builds the object, then calls run with it."""
    received = []
    monkeypatch.setattr(cli_main, "_runner", lambda name: received.append)
    monkeypatch.chdir(tmp_path)
    assert cli_main.main([command, *REQUIRED[command]]) == 0
    (settings,) = received
    assert type(settings) is SCHEMAS[command]
    _check_types(settings)


def _check_types(block) -> None:
    """Every attribute of the declared kind: blocks are their classes, paths are Paths."""
    hints = typing.get_type_hints(type(block))
    for item in fields(block):
        value, annotation = getattr(block, item.name), hints[item.name]
        if is_dataclass(annotation):
            assert value is None or isinstance(value, annotation), item.name
            if value is not None:
                _check_types(value)
        elif value is not None and annotation in (Path, Path | None):
            assert isinstance(value, Path), (item.name, value)


def test_attributes_are_typed_and_blocks_built():
    settings = load_settings(
        "estimate",
        ["input=t.csv", "n_jobs='2'", "cluster.retries=0", "target=[a,b]", "ranking=model"],
    )
    assert isinstance(settings, EstimateSettings)
    assert settings.input == Path("t.csv") and settings.n_jobs == 2
    assert isinstance(settings.cluster, Cluster) and settings.cluster.retries == 0
    assert settings.cluster.key == "cluster" and settings.few_labels.key == "few_labels"
    assert settings.target == ["a", "b"] and settings.ranking == Path("model")
    assert settings.labels is None and settings.few_labels.level == 0.95
    assert composed(settings)["cluster"]["retries"] == 0  # what config.yaml records


def test_the_schema_default_is_the_one_used():
    """cluster.retries: 2, as declared (a command once fell back to 0); two_system_views:
    True wherever it is read (evaluate fell back to False in one place)."""
    estimate = load_settings("estimate", ["input=t.csv"])
    assert estimate.cluster.retries == Cluster().retries == 2
    evaluate = load_settings("evaluate", [])
    assert isinstance(evaluate, EvaluateSettings) and evaluate.two_system_views is True
    assert isinstance(evaluate.bootstrap.n_resamples, int)
    lodo = load_settings("evaluate", ["experiment=lodo"])
    assert lodo.cases is None and lodo.lodo is not None and lodo.two_system_views is True


def test_open_blocks_keep_every_key_of_their_option():
    train = load_settings("train", ["model=stack", "+model.extra_key=1"])
    assert isinstance(train, TrainSettings) and isinstance(train.model, Open)
    whole = train.model.as_dict()
    assert whole["extra_key"] == 1 and whole["n_splits"] == train.model.n_splits
    assert whole["n_jobs"] == train.n_jobs  # ${n_jobs}, resolved
    assert "columns" in train.features.as_dict()


def test_optional_blocks_absent_are_none():
    assert load_settings("evaluate", []).lodo is None


def test_an_empty_nullable_path_is_none():
    embed = load_settings("embed", ["input=f.parquet", "transcripts=t.parquet", "cache_dir="])
    assert embed.cache_dir is None


def test_n_jobs_is_declared_once():
    declared = {
        command: next(e for e in entries(schema) if e.key == "n_jobs")
        for command, schema in SCHEMAS.items()
        if any(e.key == "n_jobs" for e in entries(schema))
    }
    assert len(declared) == 7
    assert {e.help for e in declared.values()} == {N_JOBS_HELP}
    assert {e.default for e in declared.values()} == {N_JOBS, FIT_N_JOBS}
    assert {e.setting.rule for e in declared.values()} == {rule_of(n_jobs_param())}
    source = (Path(cli_main.__file__).parent / "schema.py").read_text(encoding="utf-8")
    written = re.findall(r"n_jobs: int = (\w+)\(", source)
    assert len(written) == 7 and set(written) == {"n_jobs_setting", "library"}


def test_the_panel_size_and_the_budgets_have_one_source():
    """The panel of 8 is PANEL_SIZE and the few-label budgets are BUDGETS (FewLabelSettings'
    default): the experiment YAMLs refer to them (``${library:...}``), never restate them."""
    from werest.build import instantiate_checked
    from werest.cli.commands._common import build
    from werest.cli.config import conf_dir
    from werest.evaluation.few_labels import BUDGETS, FewLabelSettings
    from werest.evaluation.lodo import LodoSettings
    from werest.features.agreement import PANEL_SIZE

    panels = budgets = 0
    for path in (conf_dir() / "experiment").glob("*.yaml"):
        for line in path.read_text(encoding="utf-8").splitlines():
            key, _, value = line.strip().partition(":")
            value = value.split("#")[0].strip()
            if key == "panel":
                panels += 1
                assert value == "${library:werest.features.settings.PANEL_SIZE}", path.name
            if key == "budgets":
                budgets += 1
                assert value == "${library:werest.evaluation.settings.BUDGETS}", path.name
    assert panels == 3 and budgets == 1
    lodo = load_settings("evaluate", ["experiment=lodo"])
    assert lodo.lodo.panel == PANEL_SIZE == LodoSettings().panel
    assert build(lodo.lodo, LodoSettings).panel == PANEL_SIZE
    assert load_settings("evaluate", ["experiment=lodo", "lodo.panel=null"]).lodo.panel is None
    few = load_settings("evaluate", ["experiment=few_labels"])
    built = instantiate_checked(few.few_labels, FewLabelSettings, "few_labels", _convert_="all")
    assert built.budgets == FewLabelSettings().budgets == BUDGETS
    assert BUDGETS == (10, 25, 50, 100, 200)  # the budgets experiments/results were drawn with


def test_help_shows_the_library_constants_value(capsys):
    from werest.features.agreement import PANEL_SIZE

    assert cli_main.main(["evaluate", "experiment=few_labels", "--help"]) == 0
    out = capsys.readouterr().out
    assert f"lodo.panel={PANEL_SIZE} " in out and "few_labels.budgets=[10,25,50,100,200] " in out
    assert "${library:" not in out


def test_a_bootstrap_block_builds_the_library_object():
    from werest.cli.commands._common import build
    from werest.stats import Bootstrap as LibraryBootstrap

    settings = load_settings("score", ["input=t.csv", "bootstrap.n_resamples=7"])
    assert isinstance(settings.bootstrap, Bootstrap)
    built = build(settings.bootstrap, LibraryBootstrap)
    assert built.n_resamples == 7


def test_settings_from_needs_a_validated_config():
    from werest.cli.config import check_settings, compose

    cfg = check_settings("score", compose("score", ["input=t.csv", "n_jobs='3'"]))
    assert settings_from("score", cfg).n_jobs == 3


#: block -> the settings whose default differs from the class its _target_ builds, on purpose
OWN_DEFAULTS = {
    "Resamples": {"n_resamples"},  # evaluate's cells: 200 resamples each, not 1000
    # transcribe keeps long recordings whole up to an hour; embed splits SONAR's at 60 s
    "TranscribeAudio": {"warn_seconds", "max_seconds", "segment_seconds"},
    "Interval": {"bins"},  # the shipped model's Mondrian bins
}


BUILT_BLOCKS = ("Bootstrap", "Resamples", "EmbedAudio", "TranscribeAudio", "FewLabels", "Partition")


@pytest.mark.parametrize("name", [*BUILT_BLOCKS, "Fairness", "Winner", "Interval", "Cases"])
def test_a_block_declares_only_the_defaults_it_wants_otherwise(name):
    """A block with a ``_target_`` is the built class's fields: it gives a default of its own
    only where it wants another value than the class's (OWN_DEFAULTS, and there it does
    differ); every other default, as the config, --help and the settings object see it, is
    the class's own (a field the class requires is required here)."""
    from werest.cli import blocks
    from werest.cli.declare import defaults_of

    block = getattr(blocks, name)
    module, _, cls = defaults_of(block)["_target_"].rpartition(".")
    built = getattr(importlib.import_module(module), cls)
    parameters = inspect.signature(built).parameters
    own = {e.key for e in entries(block) if e.own_default}
    assert own == OWN_DEFAULTS.get(name, set())
    defaults = defaults_of(block)
    for key in (f.name for f in fields(block) if f.name != "_target_"):
        assert key in parameters, f"{name}.{key}: {cls} has no such parameter"
        library = parameters[key].default
        if library is inspect.Parameter.empty:  # required in the class, so required here
            assert defaults[key] == "???"
            continue
        if repr(library) == "<factory>":  # a dataclass field's default_factory
            library = next(f for f in fields(built) if f.name == key).default_factory()
        expected = list(library) if isinstance(library, tuple) else library
        if key in own:
            assert defaults[key] != expected, f"{name}.{key} restates the class's default"
        else:
            assert defaults[key] == expected, key


def test_a_key_the_config_lacks_takes_its_declared_default():
    """(check_settings refuses such a config; settings_from alone still never invents None.)"""
    from omegaconf import OmegaConf

    settings = settings_from("score", OmegaConf.create({"input": "t.csv", "cluster": {}}))
    assert settings.n_jobs == N_JOBS and settings.cluster.retries == 2
    assert settings.output_dir == Path("outputs/score") and settings.bootstrap.n_resamples == 1000
