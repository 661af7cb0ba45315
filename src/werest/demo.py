"""``werest demo``: the main job (``werest estimate``) on the embedded example.

The example (``werest/data/demo_transcripts.csv``) is a small table written for werest: two
datasets of meeting and call-centre sentences, four systems, references included so the true
WER can be printed beside the label-free estimate. It needs no ../shared and no download: the
model is the shipped ``models/default.skops``.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from omegaconf import DictConfig

from werest import estimate


def demo_table_path() -> Path:
    """The embedded example transcripts table."""
    return Path(str(files("werest") / "data" / "demo_transcripts.csv"))


def run(cfg: DictConfig) -> list[dict]:
    """Estimate every system's WER on the example and print it beside the true WER."""
    from werest.cli import compose

    overrides = [
        f"input={cfg.get('input') or demo_table_path()}",
        f"output_dir={cfg.output_dir}",
    ]
    if cfg.get("model_path"):
        overrides.append(f"model_path={cfg.model_path}")
    print("Label-free WER estimates on the embedded example (true WER from its references):")
    return estimate.run(compose("estimate", overrides))
