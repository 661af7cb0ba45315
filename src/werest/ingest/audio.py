"""Audio decoding for every stage that listens (ASR, speech embeddings, likelihoods).

Any soundfile format to 16 kHz mono float32.

:func:`load_audio` reads wav, flac, mp3, ogg and NIST SPHERE (anything ``soundfile`` reads),
downmixes to mono (channel mean), resamples to 16 kHz with ``scipy.signal.resample_poly`` and
measures the duration from the decoded samples (an mp3 header's frame count is an estimate).

It never raises for a bad file: each clip comes back as a :class:`LoadedAudio` with a
:class:`AudioStatus`, so one unreadable file in a batch of thousands costs one row, not the run.
A file with fewer samples than its header promises (a copy cut off, a download interrupted)
is ``truncated`` and not used: its missing end would read as deletions. Any sample rate is
resampled to 16 kHz (8 kHz telephone audio too: it stays band-limited to 4 kHz).

The long-clip rule
------------------
SONAR is a sentence encoder trained on utterances of a few seconds; its speech encoder fails
(positional range, memory) on clips above ~80 s, and its quality degrades well before that.

* up to ``warn_seconds`` (30 s): embedded whole;
* above ``warn_seconds`` and up to ``max_seconds`` (60 s): embedded whole, with a warning;
* above ``max_seconds``: ``long_clips="split"`` (default) cuts the clip into the fewest
  equal-length segments of at most ``segment_seconds`` (30 s) each, embeds each and averages
  the segment embeddings weighted by duration (status ``split``); ``long_clips="reject"``
  gives status ``too_long`` and no embedding.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from werest.columns import UTTERANCE
from werest.errors import InputError
from werest.ingest.settings import SAMPLE_RATE, AudioPolicy
from werest.io import first_line

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)


class AudioStatus(StrEnum):
    """Outcome of loading one clip; only ``ok`` and ``split`` carry samples."""

    OK = "ok"
    SPLIT = "split"
    MISSING = "missing"
    UNREADABLE = "unreadable"
    EMPTY = "empty"
    TOO_SHORT = "too_short"
    SILENT = "silent"
    TOO_LONG = "too_long"
    TRUNCATED = "truncated"

    @property
    def usable(self) -> bool:
        return self in (AudioStatus.OK, AudioStatus.SPLIT)


@dataclass
class LoadedAudio:
    """One clip after loading: status, duration and the segments to embed (16 kHz mono)."""

    path: str
    status: AudioStatus
    duration: float = float("nan")
    message: str = ""
    segments: list[np.ndarray] = field(default_factory=list)

    @property
    def weights(self) -> np.ndarray:
        """Each segment's share of the clip (for averaging segment embeddings)."""
        lengths = np.array([len(s) for s in self.segments], dtype=np.float64)
        return lengths / lengths.sum()


def read_checked(path: str | Path) -> tuple[np.ndarray, int, str | None]:
    """Decoded mono samples, the rate, and why the file looks truncated (None when it does
    not): a WAV whose data chunk is longer than the file, or a NIST SPHERE file with fewer
    samples than its header's ``sample_count``."""
    import soundfile as sf

    with sf.SoundFile(str(path)) as handle:
        samples = handle.read(dtype="float32", always_2d=True)
        rate = int(handle.samplerate)
        note = _truncation(path, handle, len(samples))
    return samples.mean(axis=1, dtype=np.float32), rate, note


_WAV_SHORT = re.compile(r"^data\s*:\s*(\d+)\s*\(should be (\d+)\)", re.MULTILINE)
_SPHERE_COUNT = re.compile(rb"sample_count\s+-i\s+(\d+)")


def _truncation(path: str | Path, handle, decoded: int) -> str | None:
    if handle.format in ("WAV", "WAVEX", "RF64", "W64"):
        short = _WAV_SHORT.search(handle.extra_info or "")
        if short and int(short[2]) < int(short[1]):
            return f"truncated: {short[2]} of the {short[1]} data bytes its header promises"
    elif handle.format == "NIST":
        with open(path, "rb") as raw:
            count = _SPHERE_COUNT.search(raw.read(1024))
        if count and decoded < int(count[1]):
            return f"truncated: {decoded} of the {int(count[1])} samples its header promises"
    return None


def resample(samples: np.ndarray, rate: int, target: int = SAMPLE_RATE) -> np.ndarray:
    """Resample 1-D ``samples`` from ``rate`` to ``target`` Hz (polyphase, exact ratio)."""
    if rate == target or len(samples) == 0:
        return samples.astype(np.float32, copy=False)
    from scipy.signal import resample_poly

    divisor = math.gcd(int(rate), int(target))
    out = resample_poly(samples, target // divisor, int(rate) // divisor)
    return out.astype(np.float32, copy=False)


def split_evenly(samples: np.ndarray, max_len: int) -> list[np.ndarray]:
    """Cut ``samples`` into the fewest near-equal pieces of at most ``max_len`` samples."""
    count = max(1, math.ceil(len(samples) / max_len))
    return [piece for piece in np.array_split(samples, count) if len(piece)]


def prepare(samples: np.ndarray, rate: int, path: str, policy: AudioPolicy) -> LoadedAudio:
    """Apply the policy to decoded mono samples: resample, check, split."""
    duration = len(samples) / rate if rate else 0.0
    if len(samples) == 0:
        return LoadedAudio(path, AudioStatus.EMPTY, 0.0, "no samples")
    if duration < policy.min_seconds:
        message = f"{duration:.3f} s is shorter than {policy.min_seconds:g} s"
        return LoadedAudio(path, AudioStatus.TOO_SHORT, duration, message)
    peak = float(np.max(np.abs(samples)))
    if not np.isfinite(peak):
        return LoadedAudio(path, AudioStatus.UNREADABLE, duration, "non-finite samples")
    if peak < policy.silence_peak:
        message = f"peak {peak:.2e} below {policy.silence_peak:g}"
        return LoadedAudio(path, AudioStatus.SILENT, duration, message)
    audio = resample(samples, rate, policy.sample_rate)
    return _apply_length_rule(audio, duration, path, policy)


def _apply_length_rule(
    audio: np.ndarray, duration: float, path: str, policy: AudioPolicy
) -> LoadedAudio:
    if duration <= policy.warn_seconds:
        return LoadedAudio(path, AudioStatus.OK, duration, "", [audio])
    if duration <= policy.max_seconds:
        log.warning(
            "%s: %.1f s is long for a sentence encoder (> %g s)",
            path,
            duration,
            policy.warn_seconds,
        )
        return LoadedAudio(path, AudioStatus.OK, duration, "long", [audio])
    if policy.long_clips == "reject":
        message = f"{duration:.1f} s exceeds max_seconds={policy.max_seconds:g}"
        return LoadedAudio(path, AudioStatus.TOO_LONG, duration, message)
    segments = split_evenly(audio, int(policy.segment_seconds * policy.sample_rate))
    message = f"{duration:.1f} s split into {len(segments)} segments"
    log.warning("%s: %s", path, message)
    return LoadedAudio(path, AudioStatus.SPLIT, duration, message, segments)


def load_audio(path: str | Path, policy: AudioPolicy | None = None) -> LoadedAudio:
    """Load one clip for embedding; never raises for a missing or bad file (see the status)."""
    policy = policy or AudioPolicy()
    name = str(path)
    if not Path(path).is_file():
        return LoadedAudio(name, AudioStatus.MISSING, message="no such file")
    try:
        samples, rate, truncated = read_checked(path)
    except Exception as error:  # soundfile raises LibsndfileError, RuntimeError, TypeError...
        return LoadedAudio(name, AudioStatus.UNREADABLE, message=first_line(error))
    if truncated is not None:
        duration = len(samples) / rate if rate else float("nan")
        return LoadedAudio(name, AudioStatus.TRUNCATED, duration, truncated)
    return prepare(samples, rate, name, policy)


def load_many(paths: Sequence[str | Path], policy: AudioPolicy | None = None) -> list[LoadedAudio]:
    """:func:`load_audio` over ``paths``, logging a summary of the clips that failed."""
    policy = policy or AudioPolicy()
    loaded = [load_audio(path, policy) for path in paths]
    failed = [item for item in loaded if not item.status.usable]
    if failed:
        log.warning(
            "%d of %d clips not usable, e.g. %s: %s (%s)",
            len(failed),
            len(loaded),
            failed[0].path,
            failed[0].status,
            failed[0].message,
        )
    return loaded


def utterance_audio(transcripts: pd.DataFrame, default_language: str | None) -> pd.DataFrame:
    """One row per (dataset, utt_id) with audio: its path (as text) and its language
    (``default_language`` where the table has none); InputError when the table has no
    ``audio`` column, or a row no language and there is no default."""
    if "audio" not in transcripts.columns:
        raise InputError("the transcripts table has no 'audio' column", column="audio")
    columns = [*UTTERANCE, "audio"] + (["language"] if "language" in transcripts else [])
    clips = transcripts[columns].dropna(subset=["audio"]).drop_duplicates(UTTERANCE).copy()
    if "language" not in clips:
        clips["language"] = default_language
    elif default_language is not None:
        clips["language"] = clips["language"].fillna(default_language)
    if clips["language"].isna().any():
        raise InputError("rows without a language and no default_language set", column="language")
    clips["audio"] = clips["audio"].astype(str)
    return clips
