"""sclite ``.trn`` files: ``words words (utt-id)`` per line, one file per system.

The system name is ``system=`` (one file) or the file's stem (``<system>.trn``), or its
folder when the stem is generic (``hyp``); ``reference=PATH`` is the reference ``.trn``;
``dataset=`` names the dataset (default: the reference's folder, else ``sclite``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from werest.importers._common import read_trailing_id_file, system_frames


def load(
    paths: list[Path],
    reference: str | None = None,
    dataset: str | None = None,
    system: str | None = None,
    **_: object,
) -> pd.DataFrame:
    """Import sclite ``.trn`` hypothesis files (and an optional reference ``.trn``)."""
    return system_frames(
        paths,
        read_trailing_id_file,
        reference=reference,
        dataset=dataset,
        system=system,
        default_dataset="sclite",
    )
