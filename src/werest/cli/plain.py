"""A command's config composed without Hydra, as plain data: what ``werest <command> --help``
lists.

Hydra and OmegaConf take about a second to import together with what the commands' defaults
used to import, and ``--help`` must start as fast as ``werest --help``
(``tests/unit/test_startup.py``). So ``--help`` composes the config itself, from the same
declarations (:func:`werest.cli.schema.defaults_of`) and the same YAML files, following the
part of Hydra's defaults list that ``conf/`` uses: the ``settings_<command>`` node first, then
one option per config group (``group: option``, ``group@package: option``), an option's own
defaults list (another option of its group, ``_self_``), ``override /group: option`` in an
option, ``# @package _global_``, and the command line's ``group=option`` choices and
``key=value`` settings. Interpolations (``${seed}``) stay as written, as
``OmegaConf.to_container(cfg, resolve=False)`` gives them.

A run still composes with Hydra (:func:`werest.cli.config.compose`), which also checks every
override; ``tests/unit/test_cli_help.py`` checks that both compose the same config for every
command and every config group option.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from werest.errors import ConfigError

_PACKAGE = re.compile(r"^#\s*@package\s+(\S+)\s*$")


def compose_plain(command: str, overrides: Sequence[str], conf: Path) -> dict[str, Any]:
    """``conf/<command>.yaml`` with ``overrides`` composed as plain data, as
    ``OmegaConf.to_container(compose(command, overrides), resolve=False)`` would give it.

    A ``group=option`` override naming no option of the group is a ConfigError listing them; a
    ``key=value`` override is shown as written (its value read as YAML), not checked: the run
    checks it.
    """
    from werest.cli.declare import defaults_of
    from werest.cli.schema import SCHEMAS

    primary = _load(conf / f"{command}.yaml")
    body, entries = _split(primary)
    choices, settings = _parse_overrides(overrides, conf)
    chosen = _choices(entries, choices, conf)
    out: dict[str, Any] = {}
    if "_self_" not in entries:
        entries = [*entries, "_self_"]
    for entry in entries:
        if entry == "_self_":
            _merge(out, body)
        elif isinstance(entry, str) and entry == f"settings_{command}":
            _merge(out, defaults_of(SCHEMAS[command]))
        elif isinstance(entry, dict):
            ((key, _option),) = entry.items()
            if key.startswith("override "):
                continue
            group, _, package = key.partition("@")
            option = chosen[key]
            if option is None:
                continue
            _merge_option(out, conf, group, option, package or group)
    for key, value in settings:
        _set(out, key, value)
    return out


def _choices(entries: list, given: dict[str, str], conf: Path) -> dict[str, str | None]:
    """The option of each config group of the defaults list: the list's own, then an option's
    ``override /group: option``, then the command line's (which wins)."""
    chosen: dict[str, str | None] = {}
    for entry in entries:
        if isinstance(entry, dict):
            ((key, option),) = entry.items()
            chosen[key] = option
    for key, option in given.items():
        if key not in chosen:
            raise ConfigError(
                f"{key}={option}: no config group {key!r} in this command "
                f"(groups: {', '.join(chosen) or 'none'})"
            )
        chosen[key] = option
    for _ in range(len(chosen) + 1):  # until no option overrides another group's choice
        changed = False
        for key, option in list(chosen.items()):
            if option is None:
                continue
            group = key.partition("@")[0]
            _body, inner = _split(_load(_option_path(conf, group, option)))
            for item in inner:
                if not isinstance(item, dict):
                    continue
                ((inner_key, inner_option),) = item.items()
                if inner_key.startswith("override /"):
                    target = inner_key.removeprefix("override /")
                    if target not in given and chosen.get(target) != inner_option:
                        chosen[target] = inner_option
                        changed = True
        if not changed:
            break
    return chosen


def _merge_option(out: dict, conf: Path, group: str, option: str, package: str) -> None:
    """Merge one option of ``group`` (with its own defaults list) at ``package``."""
    path = _option_path(conf, group, option)
    body, entries = _split(_load(path))
    declared = _package_of(path)
    if declared is not None:
        package = "" if declared == "_global_" else declared
    if "_self_" not in entries:
        entries = [*entries, "_self_"]
    for entry in entries:
        if entry == "_self_":
            node = body
            for part in reversed([p for p in package.split(".") if p]):
                node = {part: node}
            _merge(out, node)
        elif isinstance(entry, str):  # another option of the same group
            _merge_option(out, conf, group, entry, package)


def _option_path(conf: Path, group: str, option: str) -> Path:
    path = conf / group / f"{option}.yaml"
    if not path.is_file():
        options = sorted(p.stem for p in (conf / group).glob("*.yaml"))
        raise ConfigError(
            f"{group}={option}: no such option; available options in {group!r}: "
            f"{', '.join(options)}"
        )
    return path


def _parse_overrides(
    overrides: Sequence[str], conf: Path
) -> tuple[dict[str, str], list[tuple[str, Any]]]:
    """``group=option`` choices, and the other ``key=value`` settings (their values read as
    YAML, ``+`` and ``++`` dropped); an override without ``=`` is skipped (the run refuses it)."""
    choices: dict[str, str] = {}
    settings: list[tuple[str, Any]] = []
    for override in overrides:
        key, equals, value = override.partition("=")
        if not equals:
            continue
        key = key.lstrip("+")
        group = key.partition("@")[0]
        if "." not in group and (conf / group).is_dir():
            choices[key] = value
        elif not key.startswith("~"):
            settings.append((key, _scalar(value)))
    return choices, settings


def _scalar(text: str) -> Any:
    import yaml

    try:
        return yaml.load(text, Loader=_loader()) if text else ""  # a safe loader
    except yaml.YAMLError:
        return text


def _set(out: dict, dotted: str, value: Any) -> None:
    node = out
    *parents, last = dotted.split(".")
    for part in parents:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[last] = value


def _merge(into: dict, other: dict) -> None:
    """OmegaConf's merge of plain data: mappings merge key by key, anything else replaces."""
    for key, value in other.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = copy.deepcopy(value)


def _split(document: dict) -> tuple[dict, list]:
    body = dict(document)
    entries = body.pop("defaults", None) or []
    return body, list(entries)


def _package_of(path: Path) -> str | None:
    """The ``# @package X`` a config file declares in its header, if any."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        match = _PACKAGE.match(line)
        if match:
            return match.group(1)
    return None


@functools.cache
def _cached(path: Path) -> Any:
    import yaml

    with open(path, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=_loader()) or {}  # a safe loader


def _load(path: Path) -> dict:
    return copy.deepcopy(_cached(path))


@functools.cache
def _loader() -> type:
    """PyYAML's safe loader as OmegaConf reads YAML: ``1e-4`` is a number, dates are text."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        re.compile(
            r"""^(?:
         [-+]?[0-9]+(?:_[0-9]+)*\.[0-9_]*(?:[eE][-+]?[0-9]+)?
        |[-+]?[0-9]+(?:_[0-9]+)*(?:[eE][-+]?[0-9]+)
        |\.[0-9]+(?:_[0-9]+)*(?:[eE][-+][0-9]+)?
        |[-+]?[0-9]+(?:_[0-9]+)*(?::[0-5]?[0-9])+\.[0-9_]*
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN))$""",
            re.X,
        ),
        list("-+0123456789."),
    )
    Loader.yaml_implicit_resolvers = {
        key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for key, resolvers in Loader.yaml_implicit_resolvers.items()
    }
    return Loader
