"""Benchmark: Whisper tiny.en transcription and likelihood scoring on 2 CPU threads.

    .venv/bin/python experiments/bench_audio.py [--clips 20]

On the first ``--clips`` AN4 test clips (../shared): transcription with
``FasterWhisperTranscriber`` (beam 5, word timestamps, int8), then ``WhisperLikelihood`` scoring
of 1, 2, 4 and 8 hypotheses per clip (the reference and word-dropped variants of it), no cache.
Reports utterances/s and RTFx, and the cost of each extra system scored on the same clip
(the encoder runs once per clip; every text adds a decoder pass). Wall-clock on a shared
machine: read the load average printed with the results. Writes
``experiments/results/bench_audio.md``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import soundfile as sf

from werest.features.likelihood import WhisperLikelihood
from werest.ingest.asr.faster_whisper_asr import FasterWhisperTranscriber
from werest.ingest.importers import import_table

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "experiments" / "results"


def variants(reference: str, count: int) -> list[str]:
    """The reference and ``count - 1`` versions of it with one word dropped (or repeated)."""
    words = reference.split()
    texts = [reference]
    for i in range(count - 1):
        if len(words) > 1:
            texts.append(" ".join(words[: i % len(words)] + words[i % len(words) + 1 :]))
        else:
            texts.append(" ".join(words * (i + 2)))
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=20)
    args = parser.parse_args()
    table = import_table("sphinx", [SHARED / "an4"])
    table = table[table["dataset"] == "an4-test"].head(args.clips)
    audio = [sf.read(path, dtype="float32")[0] for path in table["audio"]]
    seconds = sum(len(a) for a in audio) / 16000
    rows = []
    asr = FasterWhisperTranscriber(cpu_threads=2)
    started = time.perf_counter()
    asr.transcribe_detailed(audio)
    elapsed = time.perf_counter() - started
    rows.append({"task": "transcribe (beam 5)", "texts_per_clip": np.nan, "seconds": elapsed})
    scorer = WhisperLikelihood(cpu_threads=2)
    for count in (1, 2, 4, 8):
        started = time.perf_counter()
        for samples, reference in zip(audio, table["reference"], strict=True):
            scorer.score_clip(
                samples, [scorer.prepare(t) for t in variants(reference, count)], "en"
            )
        elapsed = time.perf_counter() - started
        rows.append({"task": "likelihood", "texts_per_clip": count, "seconds": elapsed})
    frame = pd.DataFrame(rows)
    frame["utterances_per_s"] = len(audio) / frame["seconds"]
    frame["rtfx"] = seconds / frame["seconds"]
    scoring = frame[frame["task"] == "likelihood"]
    slope = np.polyfit(scoring["texts_per_clip"], scoring["seconds"] / len(audio), 1)
    load = os.getloadavg()
    report = "\n".join(
        [
            "# Whisper tiny.en on 2 CPU threads (int8)",
            "",
            f"{len(audio)} AN4 test clips, {seconds:.1f} s of audio; load average at the end "
            f"{load[0]:.1f} (2 cores shared with other jobs).",
            "",
            frame.round(3).to_markdown(index=False),
            "",
            f"Likelihood per clip ≈ {slope[1]:.3f} s + {slope[0]:.3f} s per scored system "
            "(least squares over 1, 2, 4, 8 texts per clip).",
            "",
        ]
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_audio.md").write_text(report, encoding="utf-8")
    print(report)


if __name__ == "__main__":
    main()
