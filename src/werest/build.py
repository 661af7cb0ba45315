"""Building a stage's backend (an ASR system, an embedder, a regressor) from its description.

A description is a mapping with ``_target_`` (a ``conf/`` group node or a plain dict);
Hydra's ``instantiate`` builds it and the result is checked against the stage's protocol, so a
backend is swapped by configuration, not by an ``if`` chain, and a wrong one fails at once
with a line naming the setting.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from werest.errors import ConfigError
from werest.io import first_line

T = TypeVar("T")


def instantiate_checked(cfg, protocol: type, setting: str, **kwargs):
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
            # Hydra's error points at ours, and raising ours here makes Hydra's its context:
            # a cycle that Dask cannot serialise when the build fails on a worker
            error.__cause__ = error.__context__ = None
            raise cause from None
        reason = first_line(cause if cause is not None else error)
        raise ConfigError(f"{setting}: cannot build {cfg.get('_target_')}: {reason}") from None
    if not isinstance(built, protocol):
        article = "an" if protocol.__name__[0] in "AEIOU" else "a"
        raise ConfigError(f"{setting}: {type(built).__name__} is not {article} {protocol.__name__}")
    return built


_KEPT: dict[str, tuple[str, object]] = {}
_KEEPING = threading.Lock()


def kept(slot: str, key: str, make: Callable[[], T]) -> T:
    """``make()``, once per process for each ``key`` in turn: the object is kept in ``slot``
    until a call with another key replaces it.

    A Dask worker runs many tasks of one run; loading a recogniser or a scorer per task would
    cost more than the task, so each worker process keeps the one it built (one per slot, so a
    long-lived worker that serves another config next does not hold both models).
    """
    with _KEEPING:
        held = _KEPT.get(slot)
        if held is None or held[0] != key:
            _KEPT.pop(slot, None)  # the old object goes before the new one is built
            _KEPT[slot] = (key, make())
        return _KEPT[slot][1]  # type: ignore[return-value]


def instantiate_once(cfg: Mapping[str, Any], protocol: type, setting: str):
    """:func:`instantiate_checked` of a plain ``cfg``, kept (:func:`kept`) and keyed by the
    config's JSON: a worker builds each backend once, however many tasks use it.

    One is kept per thread: a recogniser such as pocketsphinx's decoder must not serve two
    tasks at once, and a worker started with several threads runs several tasks at once
    (werest's LocalCluster, and docs/scale.md's ``dask worker``, use one thread per process).
    """
    key = json.dumps(cfg, sort_keys=True, default=str)
    slot = f"{setting}@{threading.get_ident()}"
    return kept(slot, key, lambda: instantiate_checked(cfg, protocol, setting))
