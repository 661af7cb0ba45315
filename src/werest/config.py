"""Helpers for the commands' Hydra configs: typed settings and saving the run's config."""

from __future__ import annotations

from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from werest.errors import ConfigError
from werest.table import atomic_path


def int_setting(cfg: DictConfig, key: str) -> int:
    """``cfg.<key>`` as an int; a ConfigError naming the key when it is not a whole number."""
    value = OmegaConf.select(cfg, key)
    if isinstance(value, bool):
        raise ConfigError(f"{key} must be a whole number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{key} must be a whole number, got {value!r}") from None
    if not number.is_integer():
        raise ConfigError(f"{key} must be a whole number, got {value!r}")
    return int(number)


def float_setting(cfg: DictConfig, key: str) -> float:
    """``cfg.<key>`` as a float; a ConfigError naming the key when it is not a number."""
    value = OmegaConf.select(cfg, key)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{key} must be a number, got {value!r}") from None


def save_config(cfg: DictConfig, target: Path) -> Path:
    """Save the run's composed config: ``target`` if it is a ``.yaml`` path, else
    ``<target>.config.yaml`` beside an output file."""
    target = Path(target)
    if target.suffix != ".yaml":
        target = target.with_name(f"{target.name}.config.yaml")
    with atomic_path(target) as tmp:
        tmp.write_text(OmegaConf.to_yaml(cfg, resolve=True), encoding="utf-8")
    return target


def first_line(error: BaseException) -> str:
    """The first non-blank line of an exception's message (or its class name)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


def instantiate_checked(cfg: DictConfig, protocol: type, setting: str):
    """``hydra.utils.instantiate(cfg)``, checked against a runtime-checkable ``protocol``.

    A WerestError raised while building passes through; any other failure, or an object that
    does not implement ``protocol``, is a ConfigError naming ``setting`` (e.g. ``asr``).
    """
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate

    from werest.errors import WerestError

    try:
        built = instantiate(cfg)
    except InstantiationException as error:
        cause = error.__cause__
        if isinstance(cause, WerestError):
            raise cause from None
        reason = first_line(cause if cause is not None else error)
        raise ConfigError(f"{setting}: cannot build {cfg.get('_target_')}: {reason}") from None
    if not isinstance(built, protocol):
        article = "an" if protocol.__name__[0] in "AEIOU" else "a"
        raise ConfigError(f"{setting}: {type(built).__name__} is not {article} {protocol.__name__}")
    return built
