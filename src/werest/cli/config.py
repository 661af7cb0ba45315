"""The commands' Hydra configs: composing ``conf/<command>.yaml`` over the defaults the
command's settings class declares (:mod:`werest.cli.schema`), and validating the result."""

from __future__ import annotations

import math
import typing
from collections.abc import Sequence
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf

from werest.cli.declare import (
    ABSENT,
    Open,
    Setting,
    defaults_of,
    entries,
    library_value,
    setting_of,
    settings_of,
)
from werest.cli.schema import SCHEMAS
from werest.errors import ConfigError
from werest.io import shipped


def check_settings(command: str, cfg: DictConfig) -> DictConfig:
    """Validate ``cfg`` against the command's settings class (:mod:`werest.cli.schema`): coerce,
    in place, every setting to the type its annotation declares.

    The keys must match the declared ones both ways (outside the open blocks that config groups
    fill): a key nobody declared (``+chunk_rows=5``, or one a config group option adds) is an
    error naming the closest setting, and so is a declared key the composed config lost.
    Numbers written as text (``n_jobs='2'``) become numbers, whole floats become ints, names
    and paths given as numbers (``target=1``) become text. Anything else of the wrong type
    is a ConfigError whose one line names the key, the value and what it should be.
    """
    from omegaconf import open_dict

    schema = SCHEMAS.get(command)
    if schema is None:
        return cfg
    check_keys(command, cfg, schema)
    for key, setting in settings_of(schema).items():
        if OmegaConf.select(cfg, key, default=_ABSENT, throw_on_missing=False) is _ABSENT:
            continue
        value = OmegaConf.select(cfg, key, throw_on_missing=False)
        if value == "???":
            continue
        coerced = _coerce(key, value, setting)
        if _changed(value, coerced):
            with open_dict(cfg):
                OmegaConf.update(cfg, key, coerced, merge=False)
    check_output_paths(command, cfg)
    return cfg


def load_settings(command: str, overrides: Sequence[str] = ()) -> Any:
    """The command's settings object for ``overrides``, as ``werest <command> ...`` makes it:
    composed (:func:`compose`), validated (:func:`check_settings`) and typed
    (:func:`settings_from`)."""
    return settings_from(command, check_settings(command, compose(command, overrides)))


def settings_from(command: str, cfg: DictConfig) -> Any:
    """The instance of the command's settings class (:data:`werest.cli.schema.SCHEMAS`) that
    the validated ``cfg`` (:func:`check_settings`) describes: what the command's ``run`` gets.

    Every setting is an attribute of its declared type (paths are :class:`~pathlib.Path`),
    every closed block an instance of its block class; an open block (``model``, ``data``,
    ``features``, ``asr``, ``embedder``: :class:`werest.cli.schema.Open`) has its typed keys as
    attributes and the whole block from :meth:`~werest.cli.schema.Open.as_dict`; an optional
    block the config lacks (``lodo``) is None, and so is a block the config sets to null
    (``cases`` under ``experiment=lodo``). A block's dotted key is its ``key`` attribute
    (:func:`werest.cli.commands._common.build`'s errors name it), and
    :func:`werest.cli.declare.composed` gives the whole composed config, resolved, which the
    run saves beside its outputs.
    """
    values = OmegaConf.to_container(cfg, resolve=True)
    schema = SCHEMAS[command]
    built = _build(schema, values, "")
    object.__setattr__(built, "_composed", values)
    return built


def _build(schema: type, values: dict[str, Any], prefix: str) -> Any:
    hints = typing.get_type_hints(schema)
    given: dict[str, Any] = {}
    for item in fields(schema):
        annotation = hints[item.name]
        present = item.name in values
        value = values.get(item.name)
        if is_dataclass(annotation):
            if present and isinstance(value, dict):
                given[item.name] = _build(annotation, value, f"{prefix}{item.name}.")
            elif present or item.metadata.get("optional"):
                given[item.name] = None  # null (cases under experiment=lodo), or left out
            else:
                given[item.name] = _build(annotation, {}, f"{prefix}{item.name}.")
            continue
        if not present:
            if item.metadata["default"] is ABSENT:  # the config group's option gives it: None
                given[item.name] = None
            continue  # else the declared default
        declared = setting_of(annotation, item.metadata)
        if declared.kind == "path" and value is not None:
            # an empty nullable path (cache_dir=) means none, as null does
            value = None if value == "" and declared.nullable else Path(value)
        given[item.name] = value
    built = schema(**given)
    object.__setattr__(built, "key", prefix.rstrip("."))
    object.__setattr__(built, "_given", {k for k in values if k in given})
    if isinstance(built, Open):
        object.__setattr__(built, "_values", values)
    return built


def check_output_paths(command: str, cfg: DictConfig) -> None:
    """ConfigError, before any work, when ``output_dir`` names an existing file or ``out`` (a
    file to write) an existing folder: the run would otherwise end on "cannot write here"."""
    folder = cfg.get("output_dir")
    if isinstance(folder, str) and folder and Path(folder).exists() and not Path(folder).is_dir():
        raise ConfigError(
            f"output_dir={folder} is a file, not a folder: name a folder (made when missing) "
            "for the run's outputs"
        )
    out = cfg.get("out")
    if isinstance(out, str) and out and Path(out).is_dir():
        default = next((e.default for e in entries(SCHEMAS[command]) if e.key == "out"), None)
        name = Path(default).name if isinstance(default, Path) else "table.parquet"
        example = Path(out) / name
        raise ConfigError(f"out={out} is a folder: name the file to write, e.g. out={example}")


def unset_required(command: str, cfg: DictConfig) -> list[str]:
    """The required settings (declared without a default) that ``cfg`` leaves unset: never
    given (``???``) or given empty (``input=``)."""
    unset = set(OmegaConf.missing_keys(cfg))
    schema = SCHEMAS.get(command)
    for entry in entries(schema) if schema is not None else []:
        required = entry.setting is not None and entry.default == "???"
        if required and OmegaConf.select(cfg, entry.key, throw_on_missing=False) == "":
            unset.add(entry.key)
    return sorted(unset)


def check_keys(command: str, cfg: DictConfig, schema: type) -> None:
    """ConfigError when the composed config and the schema disagree on a key: one that the
    config holds and the schema lacks (in the top level or a closed block), or one that the
    schema declares and the config lacks (outside open and optional blocks)."""
    where = f"werest.cli.schema.{schema.__name__}"
    closed: dict[str, DictConfig] = {"": cfg}  # blocks whose keys must match the schema's
    known = set()
    for entry in entries(schema):
        parent, _, name = entry.key.rpartition(".")
        known.add(entry.key)
        container = closed.get(parent) if parent in closed else _block(cfg, parent)
        # `key in cfg` is False for a required (???) value; its keys() hold it
        present = isinstance(container, DictConfig) and name in set(container.keys())
        if not present and (parent in closed and not entry.optional):
            raise ConfigError(
                f"{entry.key}: declared in {where} but missing from the composed config"
            )
        if entry.setting is None and present and not entry.open:
            node = container._get_node(name)
            if isinstance(node, DictConfig):
                closed[entry.key] = node
    for parent, node in closed.items():
        for key in node:
            dotted = f"{parent}.{key}" if parent else str(key)
            if dotted not in known:
                hint = closest_setting(command, dotted)
                raise ConfigError(
                    f"werest {command} has no setting {dotted!r}"
                    f"{' (' + hint + ')' if hint else ''}; werest {command} --help lists them"
                )


def _block(cfg: DictConfig, key: str):
    node = OmegaConf.select(cfg, key, default=None, throw_on_missing=False)
    return node if isinstance(node, DictConfig) else None


_ABSENT = object()


def _changed(value, coerced) -> bool:
    if isinstance(value, ListConfig):
        value = OmegaConf.to_container(value, resolve=True)
    return type(value) is not type(coerced) or value != coerced


def _coerce(key: str, value, setting: Setting):
    """``value`` as ``setting`` asks, or a ConfigError naming ``key``."""
    if value is None:
        if setting.nullable:
            return None
        raise ConfigError(f"{key} must be set (got null)")
    kind = setting.kind
    if kind == "any":
        return value
    if kind in ("names", "list"):
        return _names(key, value, single_ok=kind == "names")
    if isinstance(value, ListConfig | DictConfig | list | dict):
        raise ConfigError(f"{key} must be {_describe(setting)}, got {_shown(value)}")
    if kind == "path":
        return value if isinstance(value, str) else str(value)
    if kind is bool:
        return _boolean(key, value, setting)
    if kind is str:
        return _choice(key, value if isinstance(value, str) else str(value), setting)
    number = _number(key, value, setting)
    _check_range(key, number, setting)
    return number


def _describe(setting: Setting) -> str:
    kind = setting.kind
    text = {
        int: "a whole number",
        float: "a number",
        bool: "true or false",
        str: "text",
        "path": "a path",
    }.get(kind, "a name or a list of names")
    if setting.bounds():
        text += f" {setting.bounds()}"
    if setting.nonzero:
        text += " other than 0"
    if setting.choices:
        text = f"one of {', '.join(setting.choices)}"
    return text + (" or null" if setting.nullable else "")


def _shown(value) -> str:
    if isinstance(value, ListConfig | DictConfig):
        value = OmegaConf.to_container(value)
    return f"{value!r:.60}"


def _names(key: str, value, *, single_ok: bool):
    if isinstance(value, ListConfig | list | tuple):
        items = list(value)
        if any(isinstance(v, ListConfig | DictConfig | list | dict) or v is None for v in items):
            raise ConfigError(f"{key} must be a list of names, got {_shown(value)}")
        return [v if isinstance(v, str) else str(v) for v in items]
    if isinstance(value, DictConfig | dict) or not single_ok:
        raise ConfigError(f"{key} must be a list of names, e.g. {key}=[a,b], got {_shown(value)}")
    return value if isinstance(value, str) else str(value)


def _boolean(key: str, value, setting: Setting) -> bool:
    if isinstance(value, bool):
        return value
    raise ConfigError(f"{key} must be {_describe(setting)}, got {_shown(value)}")


def _choice(key: str, value: str, setting: Setting) -> str:
    if setting.choices is None:
        return value
    for choice in setting.choices:
        if value.lower() == choice.lower():
            return choice
    raise ConfigError(f"{key} must be {_describe(setting)}, got {_shown(value)}")


def _number(key: str, value, setting: Setting) -> int | float:
    wrong = ConfigError(f"{key} must be {_describe(setting)}, got {_shown(value)}")
    if isinstance(value, bool):
        raise wrong
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise wrong from None
    if not math.isfinite(number):
        raise wrong
    if setting.kind is int:
        if not number.is_integer():
            raise wrong
        return int(number)
    return number


def _check_range(key: str, number: float, setting: Setting) -> None:
    """ConfigError when ``number`` is outside the setting's declared bounds."""
    if not setting.allows(number):
        why = f" ({setting.why})" if setting.why and number != 0 else ""  # 0: nothing to do
        raise ConfigError(f"{key} must be {_describe(setting)}, got {number!r}{why}")


def conf_dir() -> Path:
    """The directory holding the Hydra configs, the repository's ``conf/`` (``werest/conf``
    in the wheel; :func:`werest.io.shipped`): each command's usage and config groups, and the
    groups' options."""
    return shipped("conf")


def compose(command: str, overrides: Sequence[str] = ()) -> DictConfig:
    """Compose ``conf/<command>.yaml`` with ``overrides``; a bad override is a ConfigError."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    register_settings()
    try:
        with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
            return hydra_compose(config_name=command, overrides=list(overrides))
    except (HydraException, OmegaConfBaseException) as error:
        message = hydra_message(error)
        if message.startswith("Could not override"):
            head, _, hint = message.partition("; ")
            key = head.split("'")[1] if head.count("'") >= 2 else ""
            if "." not in key:  # a top-level setting: "+key" would not be typed either
                hint = closest_setting(command, key)
            message = (
                f"{head}: werest {command} has no such setting (werest {command} --help lists "
                f"them){'; ' + hint if hint else ''}"
            )
        raise ConfigError(f"bad configuration for 'werest {command}': {message}") from None


def register_settings() -> None:
    """Put each command's declared defaults in Hydra's ConfigStore as ``settings_<command>``,
    the first entry of ``conf/<command>.yaml``'s defaults list. A plain mapping, not a
    structured config: :func:`check_settings` types the values and words the errors."""
    from hydra.core.config_store import ConfigStore

    if not OmegaConf.has_resolver("library"):
        OmegaConf.register_new_resolver("library", library_value)
    store = ConfigStore.instance()
    for command, schema in SCHEMAS.items():
        store.store(name=f"settings_{command}", node=defaults_of(schema))


def closest_setting(command: str, key: str) -> str:
    """ "did you mean X?" for a mistyped setting of ``command`` ('' if none is close): among the
    top-level settings, or those of the same block for a dotted key."""
    import difflib

    schema = SCHEMAS.get(command)
    parent = key.rpartition(".")[0]
    keys = [entry.key for entry in entries(schema)] if schema else []
    names = sorted({k for k in keys if k.rpartition(".")[0] == parent})
    close = difflib.get_close_matches(key, names, n=2, cutoff=0.6)
    return f"did you mean {' or '.join(close)}?" if close else ""


def hydra_message(error: BaseException) -> str:
    """Hydra's message on one line, with its hints ("use key=[value1,value2]", "+key=value",
    the available options of a config group) and without what does not apply to werest
    (``--multirun`` sweeps, the config search path)."""
    lines = [line.strip() for line in str(error).splitlines()]
    kept: list[str] = []
    for line in lines:
        if line.startswith("Config search path"):
            break
        if not line or "--multirun" in line or set(line) <= {"^", " "}:
            continue
        if kept and kept[-1].endswith(":") and kept[-1].startswith("Available options"):
            kept[-1] += f" {line}"
        elif kept and kept[-1].startswith("Available options"):
            kept[-1] += f", {line}"
        else:
            kept.append(line)
    return "; ".join(part.rstrip(".;") for part in kept) or repr(error)
