"""``werest demo``: the main job (``werest estimate``) on the embedded example."""

from __future__ import annotations

from werest.cli.commands import estimate
from werest.cli.commands._common import print_blocks
from werest.cli.config import load_settings
from werest.cli.schema import DemoSettings
from werest.demo import demo_table_path


def run(settings: DemoSettings) -> list[dict]:
    """Estimate every system's WER on the example and show it beside the true WER."""
    overrides = [
        f"input={settings.input or demo_table_path()}",
        f"output_dir={settings.output_dir}",
    ]
    if settings.model_path:
        overrides.append(f"model_path={settings.model_path}")
    print_blocks("Label-free WER estimates on the embedded example (true WER from its references):")
    return estimate.run(load_settings("estimate", overrides))
