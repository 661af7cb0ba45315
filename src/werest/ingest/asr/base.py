"""The :class:`Transcriber` protocol between ``werest transcribe`` and its ASR backends.

A backend is built from a config node with ``_target_`` (``conf/asr/*.yaml``) by
:func:`build_transcriber`, so swapping pocketsphinx for a Hugging Face model, or for a test
double, is a config change, not an ``if`` chain.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from werest.build import instantiate_checked
from werest.errors import ConfigError

log = logging.getLogger(__name__)

SAMPLE_RATE = 16_000


@runtime_checkable
class Transcriber(Protocol):
    """An ASR system: 16 kHz mono float32 waveforms in, one raw transcript per waveform out.

    ``name`` is the default ``system`` name of its hypotheses (``werest transcribe system=``
    overrides it). ``batch_size`` is how many waveforms one :meth:`transcribe` call should get
    (1 for a per-file decoder). Transcripts are the recogniser's own words (case and spelling
    as it emits them; normalisation happens at scoring time) with its markup removed
    (sentence markers, silences, noise fillers); ``""`` when it recognised nothing.

    Optionally a backend also has ``transcribe_detailed(audio) -> list[dict]``: per waveform
    ``{"hypothesis": text, column: value, ...}``; ``werest transcribe`` then stores the extra
    columns (numbers, or JSON text) with each row.
    """

    name: str
    batch_size: int

    def transcribe(self, audio: Sequence[np.ndarray]) -> list[str]: ...


def build_transcriber(cfg: Mapping) -> Transcriber:
    """Instantiate ``cfg`` (a node with ``_target_``) and check it is a :class:`Transcriber`."""
    return instantiate_checked(cfg, Transcriber, "asr")


def existing_file(value: str | Path, setting: str) -> str:
    """``value`` as an absolute path to an existing file; a ConfigError naming ``setting``."""
    path = Path(value).expanduser()
    if not path.is_file():
        raise ConfigError(
            f"{setting}: no such file {str(value)!r} (relative paths are taken from the working "
            f"directory {Path.cwd()}): give {setting}=PATH"
        )
    return str(path.resolve())
