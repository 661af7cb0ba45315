"""``werest convert-model model_path=OLD.joblib trust_model=true [out=NEW.skops]``."""

from __future__ import annotations

from pathlib import Path

from omegaconf import DictConfig

from werest.errors import ConfigError
from werest.model.convert import convert_model


def run(cfg: DictConfig) -> Path:
    """Convert a pickle model the user trusts; refuse without ``trust_model=true``."""
    if not cfg.trust_model:
        raise ConfigError(
            "convert-model unpickles the old file, which runs any code it holds: pass "
            f"trust_model=true only for a model you made or trust (model_path={cfg.model_path})"
        )
    return convert_model(cfg.model_path, cfg.get("out"))
