"""Whisper's English normaliser: the reference (whisper-normalizer) against werest's
``FastEnglishTextNormalizer``, per distinct string, on the shared English transcripts, and
whether a single output differs.

    PYTHONPATH=src .venv/bin/python experiments/bench_normaliser.py

Every distinct hypothesis and reference string of dighr (English), afrispeech and
thennal10's English part is normalised by both, in one process, each timed over the whole
set. Writes ``experiments/results/bench_normaliser.md``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd
from whisper_normalizer.english import EnglishTextNormalizer

from werest.formatting import markdown_table
from werest.ingest.importers import import_table
from werest.text.english import FastEnglishTextNormalizer

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
RESULTS = Path(__file__).resolve().parent / "results"


def corpora() -> dict[str, list[str]]:
    """The distinct English strings of each shared corpus, in a fixed order."""
    thennal10 = import_table("thennal10", [SHARED / "thennal10"])
    tables = {
        "dighr (en)": import_table("dighr", [SHARED / "dighr" / "en"]),
        "afrispeech": import_table("afrispeech", [SHARED / "afrispeech"]),
        "thennal10 (en)": thennal10.loc[thennal10["language"] == "en"],
    }
    return {
        name: sorted(set(table["hypothesis"].dropna()) | set(table["reference"].dropna()))
        for name, table in tables.items()
    }


def timed(normalise, texts: list[str]) -> tuple[list[str], float]:
    start = time.perf_counter()
    out = [normalise(text) for text in texts]
    return out, time.perf_counter() - start


def main() -> None:
    reference, fast = EnglishTextNormalizer(), FastEnglishTextNormalizer()
    rows = []
    for name, texts in corpora().items():
        expected, reference_seconds = timed(reference, texts)
        got, fast_seconds = timed(fast, texts)
        differing = sum(a != b for a, b in zip(expected, got, strict=True))
        rows.append(
            {
                "corpus": name,
                "distinct strings": f"{len(texts):,}",
                "mean characters": f"{sum(map(len, texts)) / len(texts):.0f}",
                "reference ms/string": f"{1e3 * reference_seconds / len(texts):.3f}",
                "fast ms/string": f"{1e3 * fast_seconds / len(texts):.3f}",
                "speed-up": f"{reference_seconds / fast_seconds:.1f}x",
                "outputs that differ": str(differing),
            }
        )
        print(rows[-1], flush=True)
    load = os.getloadavg()[1]
    text = "\n".join(
        [
            "# Whisper English normaliser: reference vs werest.text.english",
            "",
            "`PYTHONPATH=src .venv/bin/python experiments/bench_normaliser.py`, one process, "
            f"5-minute load {load:.1f} at the end (2 cores; other jobs share the machine).",
            "",
            markdown_table(pd.DataFrame(rows)),
            "",
        ]
    )
    (RESULTS / "bench_normaliser.md").write_text(text)


if __name__ == "__main__":
    main()
