"""Leave each audio domain out, training on every shared domain: does the audio help?

    make audio-systems && .venv/bin/python experiments/lodo_audio_hybrid.py

``data=audio_hybrid``: all_shared's twelve text domains (no audio: their wl_* are missing)
plus the scored AN4 and thennal10-en tables of ``make audio-systems``. The held-out domains
are the two with audio (``an4``, ``read-en``); each fold trains on everything else exactly as
``werest evaluate experiment=lodo`` does (HistGradientBoosting stack, balanced sample) and
estimates the held-out systems with ``werest estimate``'s code. Run twice on the same folds:
``features=audio`` (text + Whisper likelihood) and ``features=text`` (what the default model
uses). The pairwise alignments of the text domains are read from ``outputs/lodo_cache``
(``experiments/lodo_ablation.py`` writes them) when present, which saves ~20 minutes.

Writes ``experiments/results/lodo_audio_hybrid{,_text}.{md,csv,...}``.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pandas as pd

from werest.cli import compose
from werest.features.agreement import pairwise_agreement
from werest.lodo import evaluate_lodo
from werest.lodo_report import write_lodo_reports
from werest.training import load_sources, utterance_labels

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / "outputs" / "lodo_cache"
RESULTS = REPO / "experiments" / "results"
AUDIO_DOMAINS = ["an4", "read-en"]


def cached_or(name: str, table: pd.DataFrame, audio: pd.Series, build) -> pd.DataFrame:
    """``build(rows)`` for the audio datasets' rows; the text datasets' part from the LODO
    cache when it is there (else built too)."""
    path = CACHE / f"{name}.parquet"
    if not path.exists():
        return build(table)
    text_datasets = set(table.loc[~audio, "dataset"])
    cached = pd.read_parquet(path)
    cached = cached[cached["dataset"].isin(text_datasets)]
    return pd.concat([cached, build(table[audio])], ignore_index=True)


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    cfg = compose("evaluate", ["experiment=lodo_audio", "data=audio_hybrid"])
    start = time.perf_counter()
    table = load_sources(cfg.data)
    audio = table["dataset"].str.startswith("an4-") | (table["dataset"] == "thennal10-en")
    labels = cached_or("labels", table, audio, lambda t: utterance_labels(t, "auto", n_jobs=2))
    pairs = cached_or(
        "pairs", table, audio, lambda t: pairwise_agreement(t, normaliser="auto", n_jobs=2)
    )
    print(f"table, labels and pairs in {time.perf_counter() - start:.0f} s")
    for features, name in (("audio", "lodo_audio_hybrid"), ("text", "lodo_audio_hybrid_text")):
        run_cfg = compose(
            "evaluate",
            ["experiment=lodo_audio", "data=audio_hybrid", f"features={features}", f"name={name}"],
        )
        started = time.perf_counter()
        result = evaluate_lodo(
            table,
            run_cfg.data,
            list(run_cfg.features.columns),
            run_cfg.model,
            normaliser="auto",
            n_jobs=2,
            held_out=AUDIO_DOMAINS,
            labels=labels,
            pairs=pairs,
        )
        result.seconds["total"] = round(time.perf_counter() - started, 1)
        write_lodo_reports(result, run_cfg, RESULTS, name=name)
        print(name)
        print(result.domains.to_string(index=False, float_format=lambda v: f"{v:.4f}"))


if __name__ == "__main__":
    main()
