"""Helpers for the commands' Hydra configs: typed settings and saving the run's config."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig, ListConfig, OmegaConf

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


def instantiate_checked(cfg: DictConfig, protocol: type, setting: str, **kwargs):
    """``hydra.utils.instantiate(cfg, **kwargs)``, checked against a runtime-checkable
    ``protocol``.

    A WerestError raised while building passes through; any other failure, or an object that
    does not implement ``protocol``, is a ConfigError naming ``setting`` (e.g. ``asr``).
    """
    from hydra.errors import HydraException, InstantiationException
    from hydra.utils import instantiate

    from werest.errors import WerestError

    try:
        built = instantiate(cfg, **kwargs)
    except (InstantiationException, HydraException) as error:
        cause = error.__cause__
        if isinstance(cause, WerestError):
            raise cause from None
        reason = first_line(cause if cause is not None else error)
        raise ConfigError(f"{setting}: cannot build {cfg.get('_target_')}: {reason}") from None
    if not isinstance(built, protocol):
        article = "an" if protocol.__name__[0] in "AEIOU" else "a"
        raise ConfigError(f"{setting}: {type(built).__name__} is not {article} {protocol.__name__}")
    return built


# --------------------------------------------------------------------------- setting types


@dataclass(frozen=True)
class Setting:
    """The type of one setting, checked once after composition (:func:`check_settings`).

    Parameters
    ----------
    kind : ``int``, ``float``, ``bool``, ``str``, ``"path"`` (text; numbers become text),
        ``"names"`` (one name or a list of names, all text) or ``"list"`` (a list of text).
    minimum : the smallest allowed number (inclusive), if any.
    nullable : whether ``null`` is allowed.
    choices : the allowed values (compared case-insensitively for text), if restricted.
    nonzero : refuse 0 (``n_jobs``: -1 means every core, 0 means nothing).
    """

    kind: type | str
    minimum: float | None = None
    nullable: bool = False
    choices: tuple[str, ...] | None = None
    nonzero: bool = False


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_WHOLE = Setting(int, minimum=0)
_POSITIVE = Setting(int, minimum=1)
_SECONDS = Setting(float, minimum=0)
_PATH = Setting("path")
_OPTIONAL_PATH = Setting("path", nullable=True)
# issue 15: bounded-memory runs and Dask (werest.partitioned, werest.cluster)
_PARTITIONED: dict[str, Setting] = {
    "partition.rows": Setting(int, minimum=0, nullable=True),
    "partition.count": _POSITIVE,
    "partition.dir": _OPTIONAL_PATH,
    "cluster.kind": Setting(str, choices=("none", "local")),
    "cluster.address": Setting(str, nullable=True),
    "cluster.workers": _POSITIVE,
    "cluster.retries": _WHOLE,
}
_COMMON: dict[str, Setting] = {
    "log_level": Setting(str, choices=LOG_LEVELS),
    "n_jobs": Setting(int, nonzero=True),
    "seed": _WHOLE,
    "normaliser": Setting(
        str, choices=("whisper_english", "whisper_basic", "auto", "none"), nullable=True
    ),
    "output_dir": _PATH,
    "input": _PATH,
    "out": _PATH,
}
_AUDIO: dict[str, Setting] = {
    "audio.sample_rate": _POSITIVE,
    "audio.min_seconds": _SECONDS,
    "audio.warn_seconds": _SECONDS,
    "audio.max_seconds": _SECONDS,
    "audio.segment_seconds": _SECONDS,
    "audio.silence_peak": _SECONDS,
    "audio.long_clips": Setting(str, choices=("split", "reject")),
}
_MODEL: dict[str, Setting] = {
    "model.n_splits": Setting(int, minimum=2),
    "model.ridge_alpha": Setting(float, minimum=0),
    "model.alpha": Setting(float, minimum=0),
    "model.clip_max": Setting(float, minimum=0, nullable=True),
    "model.models": Setting("list"),
    "two_system_views": Setting(bool),
}
_BOOTSTRAP: dict[str, Setting] = {
    "bootstrap.n_resamples": _WHOLE,
    "bootstrap.seed": _WHOLE,
    "bootstrap.confidence": Setting(float, minimum=0),
}

#: command -> {dotted key: Setting}; keys a composed config does not hold are skipped.
SETTINGS: dict[str, dict[str, Setting]] = {
    "import": {
        **_COMMON,
        "format": Setting(str),
        "paths": Setting("list"),
        "reference": _OPTIONAL_PATH,
        "dataset": Setting(str, nullable=True),
        "system": Setting(str, nullable=True),
        "id_column": Setting(str),
        "reference_column": Setting(str, nullable=True),
        "hypothesis_column": Setting(str),
    },
    "score": {**_COMMON, **_BOOTSTRAP},
    "features": {
        **_COMMON,
        "ranking": _OPTIONAL_PATH,
        "proxy": Setting(str, nullable=True),
        "targets": Setting("names", nullable=True),
    },
    "embed": {
        **_COMMON,
        **_AUDIO,
        "out": _OPTIONAL_PATH,
        "transcripts": _PATH,
        "text_column": Setting(str),
        "default_language": Setting(str, nullable=True),
        "cache_dir": _OPTIONAL_PATH,
        "embedder.batch_size": _POSITIVE,
        "embedder.cpu_threads": _WHOLE,
        "embedder.chunk_seconds": _SECONDS,
        "embedder.text_form": Setting(str, choices=("sentence", "lower", "raw")),
    },
    "transcribe": {
        **_COMMON,
        **_AUDIO,
        "system": Setting(str, nullable=True),
        "dataset": Setting("names", nullable=True),
        "limit": Setting(int, minimum=0, nullable=True),
        "chunk_size": _POSITIVE,
        "audio_suffixes": Setting("list"),
        "asr.batch_size": _POSITIVE,
        "asr.beam_size": _POSITIVE,
        "asr.cpu_threads": _WHOLE,
        "asr.vad_filter": Setting(bool),
        "asr.word_timestamps": Setting(bool),
    },
    "estimate": {
        **_COMMON,
        "target": Setting("names", nullable=True),
        "proxy": Setting(str, nullable=True),
        "ranking": _OPTIONAL_PATH,
        "system_order": Setting("list", nullable=True),
        "missing_hypotheses": Setting(str, choices=("exclude", "deletions")),
        "model_path": _OPTIONAL_PATH,
        "cer_model_path": _OPTIONAL_PATH,
        "trust_model": Setting(bool),
        "chunk_utterances": _POSITIVE,
        **_PARTITIONED,
    },
    "train": {
        **_COMMON,
        **_MODEL,
        "name": Setting(str),
        "target": Setting(str, choices=("wer", "cer")),
        "train_systems": Setting("names", nullable=True),
        "features.columns": Setting("list"),
        "calibration": _OPTIONAL_PATH,
        "interval.level": Setting(float, minimum=0),
        "interval.offset": Setting(float, minimum=0),
        "data.max_rows_per_domain": Setting(int, minimum=1, nullable=True),
    },
    "evaluate": {
        **_COMMON,
        **_MODEL,
        **_BOOTSTRAP,
        "name": Setting(str),
        "features.columns": Setting("list"),
        "protocol": Setting(str, choices=("four_cases", "lodo")),
        "lodo.held_out": Setting("names", nullable=True),
        "lodo.level": Setting(float, minimum=0),
        "lodo.offset": Setting(float, minimum=0),
        "data.max_rows_per_domain": Setting(int, minimum=1, nullable=True),
    },
    "leaderboard": {
        **_COMMON,
        **_BOOTSTRAP,
        "datasets": Setting("names", nullable=True),
        "exclude_datasets": Setting("names", nullable=True),
        "ranking": _OPTIONAL_PATH,
        "system_order": Setting("list", nullable=True),
        "missing_hypotheses": Setting(str, choices=("exclude", "deletions")),
        "model_path": _OPTIONAL_PATH,
        "cer_model_path": _OPTIONAL_PATH,
        "trust_model": Setting(bool),
        "chunk_utterances": _POSITIVE,
        "fairness.enabled": Setting(bool),
        "fairness.min_group_size": _POSITIVE,
        "fairness.alpha": Setting(float, minimum=0),
        "title": Setting(str, nullable=True),
        "fairness.model": Setting(str, choices=("glm", "glmm")),
        "fairness.quadrature_nodes": _POSITIVE,
    },
    "demo": {**_COMMON, "input": _OPTIONAL_PATH, "model_path": _OPTIONAL_PATH},
    "convert-model": {
        **_COMMON,
        "model_path": _PATH,
        "trust_model": Setting(bool),
        "out": _OPTIONAL_PATH,
    },
    "segmentation": {
        **_COMMON,
        "reference": _PATH,
        "hypothesis": _PATH,
        "tolerance": _SECONDS,
        "tier": Setting(str),
        "reference_system": Setting(str, nullable=True),
        "hypothesis_system": Setting(str, nullable=True),
    },
}


def check_settings(command: str, cfg: DictConfig) -> DictConfig:
    """Check (and coerce in place) every typed setting of ``command`` in ``cfg``.

    Numbers written as text (``n_jobs='2'``) become numbers, whole floats become ints, names
    and paths given as numbers (``target=1``) become text. Anything else of the wrong type
    is a ConfigError whose one line names the key, the value and what it should be.
    """
    from omegaconf import open_dict

    for key, setting in SETTINGS.get(command, {}).items():
        if OmegaConf.select(cfg, key, default=_ABSENT, throw_on_missing=False) is _ABSENT:
            continue
        value = OmegaConf.select(cfg, key, throw_on_missing=False)
        if value == "???":
            continue
        coerced = _coerce(key, value, setting)
        if _changed(value, coerced):
            with open_dict(cfg):
                OmegaConf.update(cfg, key, coerced, merge=False)
    return cfg


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
    if setting.minimum is not None:
        text += f" >= {setting.minimum:g}"
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
    if (setting.minimum is not None and number < setting.minimum) or (
        setting.nonzero and number == 0
    ):
        raise ConfigError(f"{key} must be {_describe(setting)}, got {number!r}")


def json_default(value):
    """``json.dumps(default=...)`` for numpy scalars and paths (cards, summaries)."""
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")
