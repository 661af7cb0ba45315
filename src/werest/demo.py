"""The embedded example that ``werest demo`` estimates (:mod:`werest.cli.commands.demo`).

The example (``werest/data/demo_transcripts.csv``) is a small table written for werest: two
datasets of meeting and call-centre sentences, four systems, references included so the true
WER can be printed beside the label-free estimate. It needs no ../shared and no download: the
model is the shipped ``models/default.skops``.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def demo_table_path() -> Path:
    """The embedded example transcripts table."""
    return Path(str(files("werest") / "data" / "demo_transcripts.csv"))
