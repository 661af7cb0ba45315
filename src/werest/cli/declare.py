"""How a command's settings are declared, and how the CLI reads the declarations.

A command's settings class (:mod:`werest.cli.schema`) is a dataclass whose fields carry each
setting's type (the annotation: how the command line's text is read), default, ``--help`` text
and :class:`werest.settings.Rule` (a number's bounds, a text's choices):

* a setting the library takes is declared there, once, on the section that takes it
  (:mod:`werest.settings`): ``seed: int = library(EstimateOptions, "seed")`` copies the
  field's default, rule and help; a block that builds a section is :func:`section` of it,
  every field derived (``Bootstrap = section(werest.settings.Bootstrap,
  "werest.stats.Bootstrap")``). A command that wants another default on purpose says so
  (``section(..., default={"n_resamples": 200})``), and the rule still is the library's;
* a setting only the command line has is :func:`setting` (``setting("WARNING", "help")``), a
  nested block :func:`block`, a block a config group fills an :class:`Open` one.

From these, :func:`entries` flattens a class into dotted keys, :func:`defaults_of` gives the
defaults Hydra composes first, :func:`settings_of` the types :func:`werest.cli.config.
check_settings` checks a composed config against, :func:`help_texts` what ``--help`` says, and
:func:`library_value` the library constant a config option names (``${library:...}``), for
the run's config and ``--help`` alike; and what a command reads back of its settings object
(:func:`composed`, :func:`given_values`), so that the commands' helpers do not import the
config's composition. Nothing here imports more than the library's light ``settings``
modules.
"""

from __future__ import annotations

import copy
import dataclasses
import sys
import types
import typing
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from werest.errors import ConfigError
from werest.settings import Closed, Rule, default_of, rule_of

#: a required setting's default (OmegaConf's spelling of "missing", which Hydra reports)
MISSING = "???"
#: one name or a list of names (``target=a`` or ``target=[a,b]``); always text
Names = str | list[str]


class _Absent:
    """No default: the block's config group gives the value (``setting()`` in open blocks)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


@dataclass(frozen=True)
class Setting:
    """The werest type of one setting: its annotation's kind and nullability, and its rule.

    Parameters
    ----------
    kind : ``int``, ``float``, ``bool``, ``str``, ``"path"`` (text; numbers become text),
        ``"names"`` (one name or a list of names, all text), ``"list"`` (a list of text) or
        ``"any"`` (a block the stage reads itself: only its presence is checked).
    minimum, maximum, closed, nonzero, choices, why : its :class:`werest.settings.Rule`.
    nullable : whether ``null`` is allowed.
    """

    kind: type | str
    minimum: float | None = None
    nullable: bool = False
    choices: tuple[str, ...] | None = None
    nonzero: bool = False
    maximum: float | None = None
    closed: Closed = "both"
    why: str = ""

    @property
    def rule(self) -> Rule:
        return Rule(self.minimum, self.maximum, self.closed, self.nonzero, self.choices, self.why)

    def allows(self, number: float) -> bool:
        """Whether ``number`` lies within the declared bounds (and is not a refused 0)."""
        return self.rule.allows(number)

    def bounds(self) -> str:
        """The bounds in words: ``>= 1``, ``in (0, 1)``, ``in [0, 1000000]``; '' if none."""
        return self.rule.bounds()


def _field(default: Any, metadata: dict[str, Any]) -> Any:
    if isinstance(default, list | dict):
        return field(default_factory=lambda: copy.deepcopy(default), metadata=metadata)
    return field(default=default, metadata=metadata)


def setting(
    default: Any = ABSENT,
    help: str = "",
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    closed: Closed = "both",
    nonzero: bool = False,
) -> Any:
    """A setting only the command line has: its ``default`` (:data:`MISSING`: required;
    :data:`ABSENT`: given by a config group), its ``--help`` text and a number's bounds."""
    rule = Rule(minimum, maximum, closed, nonzero)
    return _field(default, {"default": default, "help": help, "rule": rule, "source": None})


_KEEP: Any = object()


def library(
    section: type | dataclasses.Field, name: str = "", *, default: Any = _KEEP, help: str = ""
) -> Any:
    """The setting field ``name`` of the library's ``section`` declares (or the declared field
    itself: ``library(n_jobs_param())``): its default as a config holds it (tuples as lists;
    none: :data:`MISSING`), its rule and its help. ``default``: the command's own, on purpose
    (the rule still applies to it); ``help``: the command's own words."""
    item = section if isinstance(section, dataclasses.Field) else _field_of(section, name)
    declared = default_of(item)
    value = _as_config(declared) if default is _KEEP else default
    if value is dataclasses.MISSING:
        value = MISSING
    metadata = {
        "default": value,
        "help": help or item.metadata.get("help", ""),
        "rule": rule_of(item),
        "source": None if isinstance(section, dataclasses.Field) else (section, name),
        "own_default": default is not _KEEP,
    }
    return _field(value, metadata)


def _field_of(section: type, name: str) -> dataclasses.Field:
    found = [item for item in fields(section) if item.name == name]
    if not found:
        raise TypeError(f"{section.__qualname__} declares no field {name!r}")
    return found[0]


def _as_config(value: Any) -> Any:
    """A declared default as a config holds it: tuples as lists, mappings as dicts."""
    if isinstance(value, tuple | list):
        return [_as_config(v) for v in value]
    if isinstance(value, dict):
        return {k: _as_config(v) for k, v in value.items()}
    return value


def section(
    declared: type,
    target: str,
    *,
    default: dict[str, Any] | None = None,
    help: dict[str, str] | None = None,
    types: dict[str, Any] | None = None,
    exclude: tuple[str, ...] = (),
    absent: bool = False,
) -> type:
    """A block of settings that builds the library's section ``declared`` by its ``_target_``
    (``target``, the section's public name): one setting per field, each :func:`library` of
    it, in the section's order. ``default``/``help``: the command's own, by field; ``types``:
    how the command line reads a field whose annotation says less (``Names`` for one name or a
    list); ``absent``: every value comes from a config group's option (``lodo``)."""
    default, help, types = default or {}, help or {}, types or {}
    spec: list[tuple[str, Any, Any]] = [("_target_", str, setting(ABSENT if absent else target))]
    for item in fields(declared):
        if item.name in exclude:
            continue
        own = ABSENT if absent else default.get(item.name, _KEEP)
        annotation = types.get(item.name) or cli_type(_hint(declared, item), rule_of(item))
        spec.append(
            (
                item.name,
                annotation,
                library(declared, item.name, default=own, help=help.get(item.name, "")),
            )
        )
    block = dataclasses.make_dataclass(declared.__name__, spec)
    block.__module__ = "werest.cli.blocks"
    block.__doc__ = f"Builds a :class:`{target}`: its settings are that class's fields."
    return block


def _hint(declared: type, item: dataclasses.Field) -> Any:
    if not isinstance(item.type, str):
        return item.type
    try:
        return eval(item.type, vars(sys.modules[declared.__module__]))  # what get_type_hints does
    except NameError:  # a name imported for type checkers only (Normaliser)
        return Any


def cli_type(hint: Any, rule: Rule) -> Any:
    """The annotation the command line reads a library field's values by: its choices, a
    path, a number, a list of text; anything else (a mapping, a list of numbers) ``Any``."""
    members = _members(hint)
    nullable = type(None) in members
    kinds = {m for m in members if m is not type(None)}
    if rule.choices is not None:
        kind: Any = Literal[rule.choices]
    elif kinds == {str, Path}:
        kind = Path
    elif len(kinds) == 1 and next(iter(kinds)) in (int, float, bool, str, Path):
        kind = next(iter(kinds))
    elif kinds in ({tuple[str, ...]}, {list[str]}):
        kind = list[str]
    elif kinds in ({str, list[str]}, {str, tuple[str, ...]}):
        kind = Names
    else:
        kind = Any
    return kind | None if nullable else kind


def _members(annotation: Any) -> tuple:
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    return typing.get_args(annotation) if union else (annotation,)


def block(schema: type, help: str = "", *, optional: bool = False) -> Any:
    """A nested block of settings with its ``--help`` text; ``optional``: the command's config
    may lack it (``lodo`` outside ``experiment=lodo``), and it has no defaults of its own."""
    return field(default_factory=schema, metadata={"help": help, "optional": optional})


class Open:
    """Marks a block filled by a config group: keys it holds beyond the typed ones are fine.

    In a command's settings object (:func:`werest.cli.config.settings_from`) its typed keys
    are attributes (None where the chosen option leaves one out) and :meth:`as_dict` gives the
    whole block, every key the option holds, as the stage that reads it expects (a plain
    mapping: ``build_regressor(settings.model.as_dict())``)."""

    OPEN: ClassVar[bool] = True

    def as_dict(self) -> dict[str, Any]:
        """The whole block as the config group's option and the overrides made it."""
        return copy.deepcopy(getattr(self, "_values", {}))


# --------------------------------------------------------------------------- reading them


@dataclass(frozen=True)
class Entry:
    """One key of a schema, flattened: its dotted key and its declaration."""

    key: str
    setting: Setting | None  # None: a block
    default: Any = ABSENT  # a block's: ABSENT
    help: str = ""
    open: bool = False  # a block whose extra keys are fine
    optional: bool = False  # a block the config may lack
    source: tuple[type, str] | None = None  # the library section's field it is
    own_default: bool = False  # a default the command wants other than the section's


_SIMPLE = {int: int, float: float, bool: bool, str: str, Path: "path", Any: "any"}


def setting_of(annotation: Any, metadata: typing.Mapping[str, Any]) -> Setting:
    """The :class:`Setting` a field's annotation and rule declare (its choices: the
    annotation's ``Literal``, else the rule's)."""
    members = _members(annotation)
    nullable = type(None) in members
    kinds = [m for m in members if m is not type(None)]
    rule = metadata.get("rule") or Rule()
    rules = {k: getattr(rule, k) for k in ("minimum", "maximum", "closed", "nonzero", "why")}
    if set(kinds) == {str, list[str]}:
        return Setting("names", nullable=nullable, **rules)
    if len(kinds) != 1:
        raise TypeError(f"no werest type for {annotation!r}")
    kind = kinds[0]
    if typing.get_origin(kind) is Literal:
        return Setting(str, nullable=nullable, choices=typing.get_args(kind), **rules)
    if kind == list[str]:
        return Setting("list", nullable=nullable, **rules)
    if kind not in _SIMPLE:
        raise TypeError(f"no werest type for {annotation!r}")
    return Setting(_SIMPLE[kind], nullable=nullable, choices=rule.choices, **rules)


def entries(schema: type, prefix: str = "") -> list[Entry]:
    """The schema's keys and blocks, depth first, as dotted keys, in declaration order."""
    hints = typing.get_type_hints(schema)
    out: list[Entry] = []
    for item in fields(schema):
        key, annotation, declared = f"{prefix}{item.name}", hints[item.name], item.metadata
        if is_dataclass(annotation):
            is_open, optional = bool(getattr(annotation, "OPEN", False)), declared.get("optional")
            out.append(
                Entry(
                    key, None, help=declared.get("help", ""), open=is_open, optional=bool(optional)
                )
            )
            out += entries(annotation, f"{key}.")
            continue
        out.append(
            Entry(
                key,
                setting_of(annotation, declared),
                default=declared["default"],
                help=declared["help"],
                source=declared.get("source"),
                own_default=bool(declared.get("own_default")),
            )
        )
    return out


def settings_of(schema: type | None) -> dict[str, Setting]:
    """``{dotted key: Setting}`` of a settings class (empty for None)."""
    if schema is None:
        return {}
    return {entry.key: entry.setting for entry in entries(schema) if entry.setting is not None}


def help_texts(schema: type) -> dict[str, str]:
    """``{dotted key: help}`` of every declared setting and block that has a help text."""
    return {entry.key: entry.help for entry in entries(schema) if entry.help}


def defaults_of(schema: type) -> dict[str, Any]:
    """The schema's defaults as a plain mapping (``???`` for a required setting; paths as text),
    without what a config group gives (:data:`ABSENT`) and without optional blocks."""
    hints = typing.get_type_hints(schema)
    out: dict[str, Any] = {}
    for item in fields(schema):
        annotation = hints[item.name]
        if is_dataclass(annotation):
            if not item.metadata.get("optional"):
                out[item.name] = defaults_of(annotation)
            continue
        default = item.metadata["default"]
        if default is ABSENT:
            continue
        out[item.name] = str(default) if isinstance(default, Path) else copy.deepcopy(default)
    return out


def composed(settings: Any) -> dict[str, Any]:
    """The composed config a settings object was made from, resolved
    (:func:`werest.cli.config.settings_from` records it): what ``config.yaml`` records."""
    return copy.deepcopy(settings._composed)


def given_values(block: Any) -> dict[str, Any]:
    """The keys of a block the config gave (:func:`werest.cli.config.settings_from` records
    them), as a plain mapping (paths as text), for the class its ``_target_`` builds: a key
    left out takes that class's default."""
    out: dict[str, Any] = {}
    for item in fields(block):
        if item.name not in block._given:
            continue
        value = getattr(block, item.name)
        if is_dataclass(value):
            value = given_values(value)
        elif isinstance(value, Path):
            value = str(value)
        out[item.name] = copy.deepcopy(value)
    return out


def library_value(dotted: str) -> Any:
    """``${library:werest.features.settings.PANEL_SIZE}``: a library constant, so that a config
    group option that states a library default (the panel size, the few-label budgets) refers
    to its one declaration instead of repeating it (a tuple becomes a list). The constants a
    config names live in the stages' light ``settings`` modules, so ``--help`` stays quick."""
    import importlib

    module, _, name = dotted.rpartition(".")
    if not module.startswith("werest."):
        raise ConfigError(f"${{library:{dotted}}}: only werest's own constants")
    try:
        value = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        raise ConfigError(f"${{library:{dotted}}}: no such constant") from None
    if not isinstance(value, str | int | float | bool | tuple | list | type(None)):
        raise ConfigError(f"${{library:{dotted}}}: not a constant a config can hold")
    return list(value) if isinstance(value, tuple) else value
