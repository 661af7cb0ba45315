"""``werest segmentation reference=PATH hypothesis=PATH``: word-boundary quality."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from omegaconf import DictConfig

from werest.cli.commands._common import output_dir, print_blocks, save_config
from werest.errors import InputError
from werest.io import atomic_path, staged_output
from werest.text.segmentation import evaluate, format_scores, read_words

#: What a run writes in ``output_dir`` (an earlier run's, replaced whole)
OUTPUTS = ("segmentation.csv", "segmentation_utterances.csv", "config.yaml")


def run(cfg: DictConfig) -> dict[str, float]:
    """Score, show, and write ``segmentation{,_utterances}.csv`` and the config."""
    tier = str(cfg.get("tier") or "words")
    reference = read_words(
        Path(cfg.reference), tier, cfg.get("reference_system"), "reference_system"
    )
    hypothesis = read_words(
        Path(cfg.hypothesis), tier, cfg.get("hypothesis_system"), "hypothesis_system"
    )
    corpus, per_utterance = evaluate(reference, hypothesis, float(cfg.tolerance))
    if corpus["utterances"] == 0:
        raise InputError(
            "no utterance id is in both the reference and the hypothesis", path=Path(cfg.hypothesis)
        )
    with staged_output(output_dir(cfg), owned=OUTPUTS) as folder:  # in place as one
        with atomic_path(folder / "segmentation.csv") as tmp:
            pd.DataFrame([corpus]).to_csv(tmp, index=False)
        with atomic_path(folder / "segmentation_utterances.csv") as tmp:
            per_utterance.to_csv(tmp, index=False)
        save_config(cfg, folder / "config.yaml")
    print_blocks(format_scores(corpus))
    return corpus
