"""``werest convert-model model_path=OLD.joblib trust_model=true [out=NEW.skops]``."""

from __future__ import annotations

from pathlib import Path

from werest.cli.schema import ConvertModelSettings
from werest.errors import ConfigError
from werest.model.convert import convert_model


def run(settings: ConvertModelSettings) -> Path:
    """Convert a pickle model the user trusts; refuse without ``trust_model=true``."""
    if not settings.trust_model:
        raise ConfigError(
            "convert-model unpickles the old file, which runs any code it holds: pass "
            "trust_model=true only for a model you made or trust "
            f"(model_path={settings.model_path})"
        )
    return convert_model(settings.model_path, settings.out)
