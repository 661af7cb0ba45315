"""``werest estimate``'s files: the per-utterance rows a person can check
(:func:`readable_utterances`), ``utterances.csv`` and ``summary.json``, written atomically.
The in-memory and the partitioned run write them through the same functions
(:mod:`werest.partition.estimate`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from werest import logs
from werest.estimation.corpus import scored_rows
from werest.ingest.table import KEY, UTTERANCE
from werest.io import atomic_path, write_csv, write_json
from werest.text import Normaliser


def readable_utterances(
    utterances: pd.DataFrame,
    table: pd.DataFrame,
    normaliser: Normaliser,
    scored: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The estimated rows with what a person needs to check them: the target's and the
    proxy's hypothesis as written, and where the input has a reference, the reference and the
    true utterance WER with its S/D/I (``wer, substitutions, deletions, insertions,
    ref_words``; under the model's normaliser, as ``werest score`` counts them)."""
    text = table[[*KEY, "hypothesis"]]
    out = utterances.merge(text, on=KEY, how="left")
    proxy_text = text.rename(columns={"system": "proxy", "hypothesis": "proxy_hypothesis"})
    out = out.merge(proxy_text, on=[*UTTERANCE, "proxy"], how="left")
    predicted = [c for c in out.columns if c.startswith("predicted_")]
    columns = [*KEY, "proxy", "status", *predicted, "hypothesis", "proxy_hypothesis"]
    if scored is None:
        scored = scored_rows(table, utterances, normaliser)
    if scored is not None:
        truth = ["reference", "wer", "substitutions", "deletions", "insertions", "ref_words"]
        out = out.merge(scored[[*KEY, *truth]], on=KEY, how="left")
        columns += truth
    rest = [c for c in out.columns if c not in columns]
    return out[columns + rest]


def write_outputs(utterances: pd.DataFrame, records: list[dict], output_dir: Path) -> None:
    """utterances.csv and summary.json, atomically."""
    with logs.stage("write"):
        with atomic_path(output_dir / "utterances.csv") as tmp:
            write_csv(utterances, tmp)
        write_summary(records, output_dir)


def write_summary(records: list[dict], output_dir: Path) -> None:
    """summary.json, atomically."""
    write_json(records, output_dir / "summary.json")
