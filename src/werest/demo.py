"""``werest demo``: the main job on the embedded example, no ../shared needed.

The example (``werest/data/demo_transcripts.csv``) is a small table written for werest: two
datasets of meeting and call-centre sentences, four systems, references included. The demo
scores the systems, ranks them, picks each system's proxy and prints the label-free agreement
(pWER) beside the true WER, so a newcomer sees the idea in one screen.
"""

from __future__ import annotations

import logging
from importlib.resources import files
from pathlib import Path

import pandas as pd
from omegaconf import DictConfig

from werest.features.agreement import agreement_features
from werest.proxy import choose_proxies, rank_systems
from werest.scoring import corpus_scores, format_scores, score_utterances
from werest.table import read_table, write_table

log = logging.getLogger(__name__)


def demo_table_path() -> Path:
    """The embedded example transcripts table."""
    return Path(str(files("werest") / "data" / "demo_transcripts.csv"))


def run(cfg: DictConfig) -> pd.DataFrame:
    """Score, rank, choose proxies and compare corpus pWER with the true WER."""
    table = read_table(cfg.get("input") or demo_table_path())
    scored = score_utterances(table, cfg.normaliser)
    scores = corpus_scores(scored, seed=int(cfg.seed))
    ranking = rank_systems(scores, normaliser=cfg.normaliser)
    features = agreement_features(table, choose_proxies(table, ranking), normaliser=cfg.normaliser)
    features["errors"] = features[["pwer_sub", "pwer_del", "pwer_ins"]].sum(axis=1)
    pooled = features.groupby(["dataset", "system", "proxy"], as_index=False)[
        ["errors", "proxy_words"]
    ].sum()
    pooled["corpus_pwer"] = pooled["errors"] / pooled["proxy_words"].clip(lower=1)
    summary = scores.merge(
        pooled[["dataset", "system", "proxy", "corpus_pwer"]], on=["dataset", "system"]
    )
    print("True corpus WER (needs references):")
    print(format_scores(scores))
    print()
    print(ranking.describe())
    print()
    print("Label-free agreement with each system's proxy (corpus pWER) beside the true WER:")
    view = summary[["dataset", "system", "proxy", "corpus_pwer", "wer"]].copy()
    view["corpus_pwer"] = (100 * view["corpus_pwer"]).map("{:.1f}".format)
    view["wer"] = (100 * view["wer"]).map("{:.1f}".format)
    print(view.rename(columns={"corpus_pwer": "pWER %", "wer": "WER %"}).to_string(index=False))
    if cfg.get("output_dir"):
        write_table(summary, Path(cfg.output_dir) / "demo_summary.csv")
    return summary
