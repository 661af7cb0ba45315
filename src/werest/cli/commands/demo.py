"""``werest demo``: the main job (``werest estimate``) on the embedded example."""

from __future__ import annotations

from omegaconf import DictConfig

from werest.cli.commands import estimate
from werest.cli.commands._common import print_blocks
from werest.cli.config import check_settings, compose
from werest.demo import demo_table_path


def run(cfg: DictConfig) -> list[dict]:
    """Estimate every system's WER on the example and show it beside the true WER."""
    overrides = [
        f"input={cfg.get('input') or demo_table_path()}",
        f"output_dir={cfg.output_dir}",
    ]
    if cfg.get("model_path"):
        overrides.append(f"model_path={cfg.model_path}")
    print_blocks("Label-free WER estimates on the embedded example (true WER from its references):")
    return estimate.run(check_settings("estimate", compose("estimate", overrides)))
