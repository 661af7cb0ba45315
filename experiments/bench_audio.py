"""Benchmark: Whisper transcription and likelihood scoring on 2 CPU threads.

    .venv/bin/python experiments/bench_audio.py [--clips 20] [--model tiny.en|base]

On the first ``--clips`` AN4 test clips (../shared): transcription with
``FasterWhisperTranscriber`` (beam 5, word timestamps, int8; ``--model``, default tiny.en),
then what ``werest embed embedder=whisper_likelihood`` does per clip with the same model, no
cache: ``WhisperLikelihood`` scoring of ``--systems`` hypotheses per clip (the reference and
word-dropped variants of it) plus, with ``--full``, the scorer's own transcript (decoded and
scored) and its language identification. Seconds per hour of audio = seconds × 3600 / audio
seconds. Writes ``bench_audio.md`` (tiny.en) or ``bench_audio_<model>.md``, each with a
``.json`` of the same rows (read by ``experiments/audio_default.py``).
Reports utterances/s and RTFx, and the cost of each extra system scored on the same clip
(the encoder runs once per clip; every text adds a decoder pass). Wall-clock on a shared
machine: read the load average printed with the results. Writes
``experiments/results/bench_audio.md``.
"""

from __future__ import annotations

import argparse
import json
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
    parser.add_argument("--model", default="tiny.en", help="tiny.en | base | a folder")
    parser.add_argument("--systems", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--full", action="store_true", help="add decode + language ID")
    args = parser.parse_args()
    table = import_table("sphinx", [SHARED / "an4"])
    table = table[table["dataset"] == "an4-test"].head(args.clips)
    audio = [sf.read(path, dtype="float32")[0] for path in table["audio"]]
    seconds = sum(len(a) for a in audio) / 16000
    rows = []
    asr = FasterWhisperTranscriber(model=args.model, cpu_threads=2)
    started = time.perf_counter()
    asr.transcribe_detailed(audio)
    elapsed = time.perf_counter() - started
    rows.append({"task": "transcribe (beam 5)", "texts_per_clip": np.nan, "seconds": elapsed})
    scorer = WhisperLikelihood(model=args.model, cpu_threads=2)
    for count in args.systems:
        started = time.perf_counter()
        for samples, reference in zip(audio, table["reference"], strict=True):
            texts = [scorer.prepare(t) for t in variants(reference, count)]
            if args.full:
                scorer._last_encoded = None  # each clip is new to the scorer, as in a real run
                own = scorer.decode_text(scorer.decode_clip(samples, "en"), "en")
                texts.append(scorer.prepare(own) or ".")
                scorer.language_scores(samples, "en")
            scorer.score_clip(samples, texts, "en")
        elapsed = time.perf_counter() - started
        task = "embed (score + decode + LID)" if args.full else "likelihood"
        rows.append({"task": task, "texts_per_clip": count, "seconds": elapsed})
    frame = pd.DataFrame(rows)
    frame["utterances_per_s"] = len(audio) / frame["seconds"]
    frame["rtfx"] = seconds / frame["seconds"]
    frame["seconds_per_audio_hour"] = frame["seconds"] * 3600 / seconds
    scoring = frame[frame["task"] != "transcribe (beam 5)"]
    slope = np.polyfit(scoring["texts_per_clip"], scoring["seconds"] / len(audio), 1)
    load = os.getloadavg()
    report = "\n".join(
        [
            f"# Whisper {args.model} on 2 CPU threads (int8)",
            "",
            f"`python experiments/bench_audio.py --clips {args.clips} --model {args.model} "
            f"--systems {' '.join(map(str, args.systems))}{' --full' if args.full else ''}`",
            "",
            f"{len(audio)} AN4 test clips, {seconds:.1f} s of audio; load average at the end "
            f"{load[0]:.1f} (2 cores shared with other jobs).",
            "",
            frame.round(3).to_markdown(index=False),
            "",
            f"Likelihood per clip ≈ {slope[1]:.3f} s + {slope[0]:.3f} s per scored system "
            f"(least squares over {', '.join(map(str, args.systems))} texts per clip).",
            "",
        ]
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = (
        "bench_audio.md" if args.model == "tiny.en" else f"bench_audio_{Path(args.model).name}.md"
    )
    (RESULTS / name).write_text(report, encoding="utf-8")
    record = {
        "model": args.model,
        "clips": len(audio),
        "audio_seconds": round(seconds, 2),
        "load_1min_at_end": round(load[0], 2),
        "full": bool(args.full),
        "rows": frame.round(3).replace({np.nan: None}).to_dict(orient="records"),
    }
    (RESULTS / name).with_suffix(".json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    print(report)


if __name__ == "__main__":
    main()
