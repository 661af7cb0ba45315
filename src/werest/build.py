"""Building a stage's backend (an ASR system, an embedder, a regressor) from its description.

A description is a mapping with ``_target_`` (a ``conf/`` group node or a plain dict);
Hydra's ``instantiate`` builds it and the result is checked against the stage's protocol, so a
backend is swapped by configuration, not by an ``if`` chain, and a wrong one fails at once
with a line naming the setting.
"""

from __future__ import annotations

from werest.errors import ConfigError
from werest.io import first_line


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
            raise cause from None
        reason = first_line(cause if cause is not None else error)
        raise ConfigError(f"{setting}: cannot build {cfg.get('_target_')}: {reason}") from None
    if not isinstance(built, protocol):
        article = "an" if protocol.__name__[0] in "AEIOU" else "a"
        raise ConfigError(f"{setting}: {type(built).__name__} is not {article} {protocol.__name__}")
    return built
