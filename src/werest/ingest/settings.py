"""The ingest stage's sections, declared once (:mod:`werest.settings`) in a module that imports
nothing heavy, so ``werest <command> --help`` reads their defaults, rules and help."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from werest.errors import ConfigError
from werest.settings import Section, param

#: the rate every clip is resampled to (SONAR and Whisper: 16 kHz)
SAMPLE_RATE = 16_000
#: what happens to a clip longer than ``max_seconds``
LONG_CLIPS = ("split", "reject")


@dataclass(frozen=True)
class AudioPolicy(Section):
    """How clips are prepared for a speech encoder (see :mod:`werest.ingest.audio`'s long-clip
    rule; ``werest embed``'s and ``werest transcribe``'s ``audio:`` blocks build it).

    Parameters
    ----------
    sample_rate : int
        Output rate in Hz (SONAR: 16 kHz).
    min_seconds : float
        Shorter clips get status ``too_short`` (the encoder needs a few fbank frames).
    warn_seconds, max_seconds : float
        Warn above ``warn_seconds``; split or reject above ``max_seconds``.
    long_clips : {"split", "reject"}
        What happens above ``max_seconds``.
    segment_seconds : float
        Upper bound on a segment's length when splitting.
    silence_peak : float
        A clip whose absolute peak is below this (full scale 1.0) is ``silent``.
    """

    SECTION: ClassVar[str] = "audio"

    sample_rate: int = param(SAMPLE_RATE, "output rate in Hz", minimum=1)
    min_seconds: float = param(0.1, "shorter: too_short", minimum=0)
    warn_seconds: float = param(30.0, "warn above", minimum=0)
    max_seconds: float = param(60.0, "split or reject above (SONAR fails above ~80 s)", minimum=0)
    long_clips: str = param("split", "split | reject", choices=LONG_CLIPS)
    segment_seconds: float = param(
        30.0, "the longest segment when splitting", minimum=0, closed="neither"
    )
    silence_peak: float = param(1e-4, "peak below this: silent", minimum=0)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.segment_seconds <= self.max_seconds:
            raise ConfigError("segment_seconds must be > 0 and <= max_seconds")
        if not 0 <= self.min_seconds < self.warn_seconds <= self.max_seconds:
            raise ConfigError("need 0 <= min_seconds < warn_seconds <= max_seconds")

    def signature(self) -> str:
        """A short string naming everything that changes the samples an encoder sees."""
        return (
            f"sr{self.sample_rate}-max{self.max_seconds:g}-{self.long_clips}"
            f"-seg{self.segment_seconds:g}"
        )
