"""Corpus WER/CER with 95 % CIs and the system ranking on every labelled shared dataset.

    .venv/bin/python experiments/score_shared.py

Runs the same steps as ``werest import`` + ``werest score`` on ../shared/data (dighr English
with ``whisper_english``; thennal10 with ``auto``: English, Arabic and Malayalam rules) and
writes ``experiments/results/scores_shared.md`` and ``scores_shared.csv``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from werest.features.proxy import rank_systems
from werest.ingest.importers import import_table
from werest.text import Normaliser
from werest.text.scoring import corpus_scores, format_scores, score_utterances

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    parts = {
        "dighr (whisper_english)": (
            import_table("dighr", [SHARED / "dighr" / "en"]),
            "whisper_english",
        ),
        "thennal10 (auto)": (import_table("thennal10", [SHARED / "thennal10"]), "auto"),
    }
    lines = [
        "# Corpus WER on the shared data",
        "",
        "`python experiments/score_shared.py`: Σ errors / Σ reference words, "
        "percentile bootstrap 95 % CI over utterances (1000 resamples, seed 0).",
        "",
    ]
    frames = []
    for title, (table, normaliser) in parts.items():
        scores = corpus_scores(score_utterances(table, Normaliser(normaliser)))
        scores["normaliser"] = normaliser
        frames.append(scores)
        ranking = rank_systems(scores, normaliser=Normaliser(normaliser))
        lines += [
            f"## {title}",
            "",
            "```",
            format_scores(scores),
            "",
            ranking.describe(),
            "```",
            "",
        ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    pd.concat(frames).to_csv(RESULTS / "scores_shared.csv", index=False)
    (RESULTS / "scores_shared.md").write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
