"""Kaldi ``text`` files: ``utt-id word word ...`` per line, one file per system.

The system name is ``system=`` (one file) or the file's folder name (``exp/<system>/text``)
or its stem when that is not ``text``; ``reference=PATH`` is a Kaldi ``text`` of references
(e.g. ``data/test/text``); ``dataset=`` names the dataset (default: the reference's folder,
else ``kaldi``). A line holding only an id is an empty hypothesis.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from werest.importers._common import read_leading_id_file, system_frames


def load(
    paths: list[Path],
    reference: str | None = None,
    dataset: str | None = None,
    system: str | None = None,
    **_: object,
) -> pd.DataFrame:
    """Import Kaldi ``text`` hypothesis files (and an optional reference file)."""
    return system_frames(
        paths,
        read_leading_id_file,
        reference=reference,
        dataset=dataset,
        system=system,
        default_dataset="kaldi",
    )
