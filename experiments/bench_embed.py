"""CPU throughput of the SONAR speech and text pipelines: tiny vs full-size architecture.

Random weights (no checkpoint is needed): the tiny SONAR of tests/tiny_sonar.py and the
full-size ``english`` speech encoder (w2v-BERT 600M + attention pooler, ~0.66 B parameters)
and ``basic`` text encoder (with the toy vocabulary: the 256k-row embedding table costs memory,
not time), both built by sonar's own factories. Audio: real AN4 clips from ../shared/data.

Each (architecture, batch size) runs in its own process so that peak RSS is its own.
Reports utterances/s, RTFx (audio seconds / compute seconds) and peak RSS; writes
experiments/results/bench_embed.md.

    .venv/bin/python experiments/bench_embed.py            # ~3-4 minutes on 2 cores
    .venv/bin/python experiments/bench_embed.py --quick    # tiny only
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
AN4 = REPO.parent / "shared" / "data" / "an4" / "wav" / "an4test_clstk"
RESULTS = REPO / "experiments" / "results" / "bench_embed.md"

PLAN = {
    "tiny": {"batches": [1, 2, 4, 8, 16], "clips": 32},
    "full": {"batches": [1, 4, 16], "clips": 16},
}
TEXTS = [
    "enter seven two one nine",
    "rubout go stop repeat help erase yes no",
    "my name is carnegie mellon university in pittsburgh",
    "zero one two three four five six seven eight nine ten",
]


def worker(arch: str, batch: int, clips: int) -> dict:
    """Build one architecture, embed ``clips`` AN4 clips and texts at ``batch``; measure."""
    import torch
    from tests.tiny_sonar import build_models

    from werest.features.sonar import SonarEmbedder
    from werest.ingest.audio import load_audio

    torch.set_num_threads(2)
    paths = sorted(AN4.glob("*/*.sph"))[:clips]
    audio = [load_audio(p).segments[0] for p in paths]
    seconds = sum(len(a) for a in audio) / 16000
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        models = build_models(Path(folder), seed=0, size=None if arch == "tiny" else {})
    build_s = time.perf_counter() - start
    params = sum(p.numel() for p in models["speech"].parameters())
    embedder = SonarEmbedder.from_models(
        {"en": models["speech"]},
        models["text"],
        models["tokenizer"],
        {"en": "eng_Latn"},
        name=arch,
        batch_size=batch,
    )
    embedder.embed_speech(audio[:batch], "en")  # warm-up
    start = time.perf_counter()
    embedder.embed_speech(audio, "en")
    speech_s = time.perf_counter() - start
    texts = TEXTS * (clips // len(TEXTS))
    embedder.embed_text(texts[:batch], "en")
    start = time.perf_counter()
    embedder.embed_text(texts, "en")
    text_s = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "arch": arch,
        "batch": batch,
        "clips": clips,
        "audio_s": seconds,
        "params": params,
        "build_s": build_s,
        "speech_s": speech_s,
        "text_s": text_s,
        "peak_mb": peak_mb,
    }


def run_plan(archs: list[str]) -> list[dict]:
    rows = []
    for arch in archs:
        for batch in PLAN[arch]["batches"]:
            cmd = [sys.executable, __file__, "--worker", arch, str(batch), str(PLAN[arch]["clips"])]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=REPO)
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(json.dumps(rows[-1]), file=sys.stderr)
    return rows


def report(rows: list[dict], command: str) -> str:
    import torch

    lines = [
        "# SONAR embedding throughput on CPU (random weights)",
        "",
        f"`{command}`: {platform.processor() or platform.machine()}, "
        f"{torch.get_num_threads()} torch threads, torch {torch.__version__}, float32. "
        "Speech: AN4 test clips (16 kHz, 1.3–6.6 s). Text: short English sentences.",
        "",
        "| arch | speech params | batch | clips | audio s | speech utt/s | RTFx | text utt/s "
        "| peak RSS MB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['arch']} | {r['params'] / 1e6:.2f} M | {r['batch']} | {r['clips']} | "
            f"{r['audio_s']:.1f} | {r['clips'] / r['speech_s']:.2f} | "
            f"{r['audio_s'] / r['speech_s']:.1f} | {r['clips'] / r['text_s']:.1f} | "
            f"{r['peak_mb']:.0f} |"
        )
    lines += [
        "",
        "RTFx = seconds of audio embedded per second of compute (higher is faster). Peak RSS is",
        "the whole process (model, Python, torch). One run each, no repeats: other load on the",
        f"machine shows up directly (load average at the end: {os.getloadavg()[0]:.1f}).",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=3, metavar=("ARCH", "BATCH", "CLIPS"))
    parser.add_argument("--quick", action="store_true", help="tiny architecture only")
    args = parser.parse_args()
    if args.worker:
        arch, batch, clips = args.worker
        print(json.dumps(worker(arch, int(batch), int(clips))))
        return
    if not AN4.exists():
        sys.exit(f"needs the AN4 audio at {AN4} (../shared beside the repo)")
    rows = run_plan(["tiny"] if args.quick else ["tiny", "full"])
    command = "python experiments/bench_embed.py" + (" --quick" if args.quick else "")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(report(rows, command), encoding="utf-8")
    print(RESULTS.read_text())


if __name__ == "__main__":
    main()
