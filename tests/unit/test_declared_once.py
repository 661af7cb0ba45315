"""Each setting is declared once (issue 48): a default, a bound or a choice lives on the
library's section (werest.settings: ``param``, checked by one validator from ``__post_init__``),
and the command line reads it from there. :func:`disagreements` finds a command's setting that
disagrees with its library field on a default or a rule, and is shown finding planted ones."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
from dataclasses import dataclass

import pytest

from werest.cli.declare import ABSENT, MISSING, Entry, entries, library, setting
from werest.cli.schema import SCHEMAS
from werest.errors import ConfigError
from werest.estimation.settings import EstimateOptions
from werest.model.settings import TrainingOptions
from werest.ranking.settings import LeaderboardOptions
from werest.settings import Section, default_of, rule_of

#: command -> the sections its top-level settings of the same names feed (the commands build
#: them: ``estimate_options(settings)``, ``training_options(settings)``, ...)
SECTIONS: dict[str, tuple[type, ...]] = {
    "estimate": (EstimateOptions,),
    "leaderboard": (LeaderboardOptions,),
    "train": (TrainingOptions,),
    "evaluate": (TrainingOptions,),
}
#: (command, key) -> why the command wants another default than its library field's
OWN_DEFAULTS = {
    ("evaluate", "bootstrap.n_resamples"): "200 resamples per cell's CI, not 1000",
    ("transcribe", "audio.warn_seconds"): "hour-long recordings kept whole",
    ("transcribe", "audio.max_seconds"): "hour-long recordings kept whole",
    ("transcribe", "audio.segment_seconds"): "hour-long recordings kept whole",
    ("train", "interval.bins"): "the shipped model's Mondrian bins",
    ("train", "n_jobs"): "fitting: the two cores a shared machine gives a job",
    ("evaluate", "n_jobs"): "fitting: the two cores a shared machine gives a job",
}
#: settings whose choices only the command line lists: the library takes an object for them
#: (a Normaliser: test_sections checks the names are werest.text.NORMALISERS)
CLI_CHOICES = {"normaliser"}
BOUNDS = ("minimum", "maximum", "closed", "nonzero")


def library_field(schema: type, entry: Entry, sections=()) -> dataclasses.Field | None:
    """The library field a setting is: the one it was declared from (``library()``), the
    field of the class its block's ``_target_`` builds, or the field of the same name of a
    section the command's top-level settings feed."""
    if entry.source is not None:
        section, name = entry.source
        return next(f for f in dataclasses.fields(section) if f.name == name)
    parent, _, name = entry.key.rpartition(".")
    key = f"{parent}._target_" if parent else "_target_"
    target = next((e.default for e in entries(schema) if e.key == key), None)
    candidates = [] if parent else list(sections)
    if isinstance(target, str) and "." in target:  # a block that builds a library class
        module, _, cls = target.rpartition(".")
        candidates = [getattr(importlib.import_module(module), cls)]
    for section in candidates:
        found = [f for f in dataclasses.fields(section) if f.name == name]
        if found:
            return found[0]
    return None


def _as_config(value):
    if value is dataclasses.MISSING:
        return MISSING
    if isinstance(value, tuple | list):
        return [_as_config(v) for v in value]
    return dict(value) if isinstance(value, dict) else value


def disagreements(schema: type, sections=(), own=()) -> list[str]:
    """What a settings class says otherwise than the library fields its settings are: a
    default (other than the ``own`` keys', which must still be allowed by the rule) or a
    rule's bounds or choices."""
    found = []
    for entry in entries(schema):
        name = entry.key.rpartition(".")[2]
        if entry.setting is None or name == "_target_":
            continue
        item = library_field(schema, entry, sections)
        if item is None:
            continue
        rule, cli = rule_of(item), entry.setting.rule
        expected = _as_config(default_of(item))
        if entry.default is ABSENT:
            pass
        elif entry.own_default or entry.key in own:
            if isinstance(entry.default, int | float) and not rule.allows(entry.default):
                found.append(f"{entry.key}: default {entry.default!r} is not {rule.words()}")
        elif entry.default != expected and str(entry.default) != str(expected):
            found.append(f"{entry.key}: default {entry.default!r}, the library's {expected!r}")
        for bound in BOUNDS:
            if getattr(cli, bound) != getattr(rule, bound):
                found.append(
                    f"{entry.key}: {bound} {getattr(cli, bound)!r}, the library's "
                    f"{getattr(rule, bound)!r}"
                )
        checked = rule.choices is not None or name not in CLI_CHOICES
        if checked and cli.choices != rule.choices:
            found.append(f"{entry.key}: choices {cli.choices}, the library's {rule.choices}")
    return found


@pytest.mark.parametrize("command", sorted(SCHEMAS))
def test_every_setting_agrees_with_its_library_field(command):
    own = {key for (name, key) in OWN_DEFAULTS if name == command}
    assert disagreements(SCHEMAS[command], SECTIONS.get(command, ()), own) == []


def test_the_own_defaults_are_the_ones_declared_on_purpose():
    declared = {
        (command, entry.key)
        for command, schema in SCHEMAS.items()
        for entry in entries(schema)
        if entry.own_default and entry.default is not ABSENT
    }
    assert declared == set(OWN_DEFAULTS)


def test_the_check_finds_a_block_written_again_by_hand():
    """A ``bootstrap`` block restating werest.stats.Bootstrap's fields, with another default
    and without the resamples' maximum: both found."""

    @dataclass
    class HandWritten:
        _target_: str = setting("werest.stats.Bootstrap")
        n_resamples: int = setting(500, "resamples per interval", minimum=0)
        confidence: float = setting(0.95, minimum=0, maximum=1, closed="neither")

    assert disagreements(HandWritten) == [
        "n_resamples: default 500, the library's 1000",
        "n_resamples: maximum None, the library's 1000000",
    ]


def test_the_check_finds_a_command_setting_written_again_by_hand():
    """``seed`` and ``chunk_utterances`` declared by the command with their own default and
    bound, though EstimateOptions (the section they feed) declares them."""

    @dataclass
    class Planted:
        seed: int = setting(1, "bootstrap seed", minimum=0)
        chunk_utterances: int = setting(50_000, minimum=0)
        missing_hypotheses: str = setting("exclude")
        title: str = setting("mine")  # no section has it: the command's own

    assert disagreements(Planted, (EstimateOptions,)) == [
        "seed: default 1, the library's 0",
        "chunk_utterances: minimum 0, the library's 1",
        "missing_hypotheses: choices None, the library's ('exclude', 'deletions')",
    ]


def test_the_check_finds_an_own_default_the_library_refuses():
    @dataclass
    class Planted:
        n_jobs: int = library(EstimateOptions, "n_jobs", default=0)

    (found,) = disagreements(Planted)
    assert found.startswith("n_jobs: default 0 is not") and "other than 0" in found


#: the library's light modules that hold its sections
SETTINGS_MODULES = (
    "werest.settings",
    "werest.ingest.settings",
    "werest.model.settings",
    "werest.estimation.settings",
    "werest.evaluation.settings",
    "werest.evaluation.lodo_settings",
    "werest.partition.settings",
    "werest.ranking.settings",
)


def _sections() -> list[type]:
    """Every section of the library's light settings modules."""
    found = []
    for name in SETTINGS_MODULES:
        module = importlib.import_module(name)
        found += [
            cls
            for cls in vars(module).values()
            if inspect.isclass(cls)
            and issubclass(cls, Section)
            and dataclasses.is_dataclass(cls)
            and cls.__module__ == name
        ]
    return found


#: what a section that requires fields needs to be made
REQUIRED = {
    "FourCases": {"source_system": "s", "target_systems": ["t"], "benchmark_datasets": ["a", "b"]}
}


def _refused(rule):
    if rule.choices is not None:
        return "no such choice"
    if rule.nonzero:
        return 0
    if rule.minimum is not None:
        return rule.minimum - 1
    return rule.maximum + 1


@pytest.mark.parametrize(
    ("section", "name"),
    [
        (cls, f.name)
        for cls in _sections()
        for f in dataclasses.fields(cls)
        if rule_of(f).choices is not None
        or any(getattr(rule_of(f), b) for b in BOUNDS[:2])
        or rule_of(f).nonzero
    ],
    ids=lambda v: v if isinstance(v, str) else v.__name__,
)
def test_every_section_checks_its_rules_when_made(section, name):
    """One validator (werest.settings.check, from the section's __post_init__) refuses what a
    field's rule does not allow, in one line naming ``section.field``."""
    rule = rule_of(next(f for f in dataclasses.fields(section) if f.name == name))
    value = _refused(rule)
    prefix = f"{section.SECTION}.{name}" if section.SECTION else name
    message = re.escape(f"{prefix} must be {rule.words()}, got {value!r}")
    with pytest.raises(ConfigError, match=f"^{message}") as caught:
        section(**REQUIRED.get(section.__name__, {}), **{name: value})
    assert "\n" not in str(caught.value)


def test_every_section_is_checked():
    """The sections the commands build, all of them in the light modules."""
    names = {cls.__name__ for cls in _sections()}
    assert names >= {
        "Bootstrap",
        "AudioPolicy",
        "ConformalInterval",
        "TrainingOptions",
        "EstimateOptions",
        "LabelSettings",
        "WinnerSettings",
        "FairnessSettings",
        "FourCases",
        "LodoSettings",
        "PartitionSettings",
        "LeaderboardOptions",
    }
