"""werest.ingest.audio on real files (AN4 SPHERE, thennal10 mp3) and on every bad case."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tests.conftest import SHARED_DATA
from werest.errors import ConfigError
from werest.ingest.audio import (
    SAMPLE_RATE,
    AudioPolicy,
    AudioStatus,
    load_audio,
    load_many,
    resample,
    split_evenly,
)

pytestmark = [pytest.mark.shared]


def shared(*parts: str) -> Path:
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs the shared data at {path} (../shared beside the repo); absent here")
    return path


def tone(seconds: float, rate: int, freq: float = 440.0, amplitude: float = 0.5) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (amplitude * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def write(path: Path, samples: np.ndarray, rate: int, **kwargs) -> Path:
    sf.write(path, samples, rate, **kwargs)
    return path


# --------------------------------------------------------------------------- real data


def test_an4_sphere_is_read_at_16k():
    path = shared("an4", "wav", "an4test_clstk", "fcaw", "an406-fcaw-b.sph")
    audio = load_audio(path)
    assert audio.status is AudioStatus.OK
    assert audio.duration == pytest.approx(4.0)
    (segment,) = audio.segments
    assert segment.dtype == np.float32 and segment.ndim == 1
    assert len(segment) == 64000  # already 16 kHz: untouched


@pytest.mark.parametrize("lang", ["en", "ar", "ml"])
def test_thennal10_mp3_is_resampled_to_16k(lang):
    path = shared("thennal10", "samples", lang, "1.mp3")
    raw, rate = sf.read(path, dtype="float32")
    assert rate != SAMPLE_RATE
    audio = load_audio(path)
    assert audio.status is AudioStatus.OK
    assert audio.duration == pytest.approx(len(raw) / rate)
    assert len(audio.segments[0]) == pytest.approx(audio.duration * SAMPLE_RATE, abs=2)


def test_batch_goes_on_past_bad_files(tmp_path):
    good = shared("an4", "wav", "an4test_clstk", "fcaw", "an406-fcaw-b.sph")
    broken = tmp_path / "broken.wav"
    broken.write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk")
    results = load_many([good, tmp_path / "nope.flac", broken, good])
    assert [r.status for r in results] == [
        AudioStatus.OK,
        AudioStatus.MISSING,
        AudioStatus.UNREADABLE,
        AudioStatus.OK,
    ]
    assert results[2].message  # the decoder's reason is kept


# --------------------------------------------------------------------------- formats, mono


@pytest.mark.parametrize(("suffix", "kwargs"), [(".wav", {}), (".flac", {}), (".ogg", {})])
def test_stereo_44k_formats_are_downmixed_and_resampled(tmp_path, suffix, kwargs):
    left, right = tone(1.0, 44100, 440), tone(1.0, 44100, 440) * 0.0
    path = write(tmp_path / f"stereo{suffix}", np.stack([left, right], axis=1), 44100, **kwargs)
    audio = load_audio(path)
    assert audio.status is AudioStatus.OK
    (segment,) = audio.segments
    assert len(segment) == SAMPLE_RATE
    # the mean of a tone and silence: half the amplitude
    assert np.abs(segment[1000:-1000]).max() == pytest.approx(0.25, abs=0.02)


def test_resample_keeps_a_tone_its_frequency():
    out = resample(tone(1.0, 48000, 1000.0), 48000, SAMPLE_RATE)
    spectrum = np.abs(np.fft.rfft(out))
    assert len(out) == SAMPLE_RATE
    assert np.argmax(spectrum) == pytest.approx(1000, abs=1)  # 1 Hz bins over one second


# --------------------------------------------------------------------------- statuses


def test_empty_file_is_empty(tmp_path):
    path = write(tmp_path / "empty.wav", np.zeros(0, np.float32), 16000)
    assert load_audio(path).status is AudioStatus.EMPTY


def test_very_short_file_is_too_short(tmp_path):
    path = write(tmp_path / "short.wav", tone(0.02, 16000), 16000)
    audio = load_audio(path)
    assert audio.status is AudioStatus.TOO_SHORT
    assert audio.duration == pytest.approx(0.02)


def test_digital_silence_is_silent(tmp_path):
    path = write(tmp_path / "silence.wav", np.zeros(16000, np.float32), 16000)
    audio = load_audio(path)
    assert audio.status is AudioStatus.SILENT and not audio.segments


def test_text_file_with_audio_suffix_is_unreadable(tmp_path):
    path = tmp_path / "notes.mp3"
    path.write_text("not audio at all\n")
    assert load_audio(path).status is AudioStatus.UNREADABLE


def test_folder_is_missing_not_a_crash(tmp_path):
    assert load_audio(tmp_path).status is AudioStatus.MISSING


# --------------------------------------------------------------------------- the long-clip rule


def test_long_clip_under_max_is_whole_with_a_warning(tmp_path, caplog):
    path = write(tmp_path / "long.flac", tone(35.0, 16000), 16000)
    audio = load_audio(path)
    assert audio.status is AudioStatus.OK and len(audio.segments) == 1
    assert "long for a sentence encoder" in caplog.text


def test_clip_over_max_is_split_evenly(tmp_path):
    path = write(tmp_path / "very_long.flac", tone(70.0, 16000), 16000)
    audio = load_audio(path)
    assert audio.status is AudioStatus.SPLIT
    lengths = [len(s) for s in audio.segments]
    assert len(lengths) == 3 and max(lengths) <= 30 * SAMPLE_RATE
    assert sum(lengths) == 70 * SAMPLE_RATE
    assert audio.weights.sum() == pytest.approx(1.0)


def test_clip_over_max_is_rejected_when_asked(tmp_path):
    path = write(tmp_path / "very_long.flac", tone(70.0, 16000), 16000)
    audio = load_audio(path, AudioPolicy(long_clips="reject"))
    assert audio.status is AudioStatus.TOO_LONG and not audio.segments
    assert "70.0 s" in audio.message


def test_split_evenly_never_exceeds_the_limit():
    for length in (1, 29, 30, 31, 59, 60, 61, 1000):
        pieces = split_evenly(np.zeros(length), 30)
        assert sum(map(len, pieces)) == length
        assert max(map(len, pieces)) <= 30
        assert len(pieces) == -(-length // 30)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"long_clips": "truncate"},
        {"segment_seconds": 90.0},
        {"warn_seconds": 70.0},
        {"min_seconds": -1.0},
    ],
)
def test_bad_policy_is_a_config_error(kwargs):
    with pytest.raises(ConfigError):
        AudioPolicy(**kwargs)


def test_policy_signature_changes_with_what_the_encoder_sees():
    base = AudioPolicy().signature()
    assert AudioPolicy(long_clips="reject").signature() != base
    assert AudioPolicy(segment_seconds=20.0).signature() != base
    assert AudioPolicy(warn_seconds=20.0).signature() == base  # a warning changes nothing
