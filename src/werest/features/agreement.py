"""Agreement features: how far a target system's hypothesis is from its proxy's.

The proxy's hypothesis plays the reference (Waheed et al., 2025): pWER and pCER are the word
and character error rates of the target against it, after the same normalisation used for
scoring. The counts behind them (lengths and S/D/I/hits) are kept as features too.

When the proxy is empty (no words), the rate's denominator is taken as 1: pWER is then the
number of hypothesis words (0 when both are empty) instead of undefined, so every row with a
proxy gets finite features.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
from omegaconf import DictConfig

from werest.errors import ConfigError
from werest.scoring import normalised_columns
from werest.table import read_table, write_table
from werest.text import count_errors

log = logging.getLogger(__name__)

KEY = ["dataset", "utt_id", "system"]
AGREEMENT_FEATURES: tuple[str, ...] = (
    "pwer",
    "pcer",
    "hyp_words",
    "proxy_words",
    "hyp_chars",
    "proxy_chars",
    "pwer_sub",
    "pwer_del",
    "pwer_ins",
    "pwer_hits",
    "pcer_sub",
    "pcer_del",
    "pcer_ins",
    "pcer_hits",
)
STATUS_OK = "ok"
STATUS_NO_PROXY = "no proxy hypothesis"


def agreement_features(
    table: pd.DataFrame,
    proxies: pd.DataFrame,
    *,
    normaliser: str = "whisper_english",
    n_jobs: int = 1,
) -> pd.DataFrame:
    """pWER, pCER and their counts for each target row of ``proxies``.

    Parameters
    ----------
    table : the transcripts table holding targets' and proxies' hypotheses.
    proxies : ``dataset, utt_id, system, proxy`` (:func:`werest.proxy.choose_proxies`).
    normaliser : the text normaliser name (:func:`werest.text.get_normaliser`).
    n_jobs : processes for the alignments.

    Returns
    -------
    ``proxies``' rows with the columns of :data:`AGREEMENT_FEATURES` and ``status``
    (``ok`` or ``no proxy hypothesis``, whose features are NaN). No reference column.
    """
    hypotheses = _normalised_hypotheses(table, normaliser, n_jobs)
    features = proxies[[*KEY, "proxy"]].reset_index(drop=True)
    target_index = pd.MultiIndex.from_frame(features[KEY])
    proxy_index = pd.MultiIndex.from_arrays(
        [features["dataset"], features["utt_id"], features["proxy"]]
    )
    target_text = hypotheses.reindex(target_index).to_numpy()
    proxy_text = hypotheses.reindex(proxy_index).to_numpy()
    has_proxy = pd.notna(proxy_text) & pd.notna(target_text)
    words = count_errors(proxy_text[has_proxy], target_text[has_proxy], "word", n_jobs=n_jobs)
    chars = count_errors(proxy_text[has_proxy], target_text[has_proxy], "char", n_jobs=n_jobs)
    values = {
        "pwer": _rate(words),
        "pcer": _rate(chars),
        "hyp_words": words["hypothesis_length"],
        "proxy_words": words["reference_length"],
        "hyp_chars": chars["hypothesis_length"],
        "proxy_chars": chars["reference_length"],
        "pwer_sub": words["substitutions"],
        "pwer_del": words["deletions"],
        "pwer_ins": words["insertions"],
        "pwer_hits": words["hits"],
        "pcer_sub": chars["substitutions"],
        "pcer_del": chars["deletions"],
        "pcer_ins": chars["insertions"],
        "pcer_hits": chars["hits"],
    }
    for name in AGREEMENT_FEATURES:
        column = np.full(len(features), np.nan)
        column[has_proxy] = np.asarray(values[name], dtype=float)
        features[name] = column
    features["status"] = np.where(has_proxy, STATUS_OK, STATUS_NO_PROXY)
    missing = int((~has_proxy).sum())
    if missing:
        log.warning("%d of %d target row(s) have no proxy hypothesis", missing, len(features))
    return features


def _normalised_hypotheses(table: pd.DataFrame, normaliser: str, n_jobs: int) -> pd.Series:
    text = normalised_columns(table, normaliser, ("hypothesis",), n_jobs=n_jobs)["hypothesis"]
    return pd.Series(text.to_numpy(), index=pd.MultiIndex.from_frame(table[KEY]))


def _rate(counts: pd.DataFrame) -> np.ndarray:
    errors = counts["substitutions"] + counts["deletions"] + counts["insertions"]
    return (errors / np.maximum(counts["reference_length"], 1)).to_numpy(dtype=float)


def run(cfg: DictConfig) -> pd.DataFrame:
    """``werest features``: choose proxies and write the agreement feature table."""
    from werest.config import int_setting, save_config
    from werest.proxy import Ranking, choose_proxies, rank_systems
    from werest.scoring import corpus_scores, score_utterances

    table = read_table(cfg.input)
    if cfg.get("ranking"):
        ranking: Ranking | list[str] = Ranking.load(cfg.ranking)
    elif cfg.get("proxy"):
        ranking = [cfg.proxy]
    elif "reference" in table.columns and table["reference"].notna().any():
        log.info("no ranking given: ranking the systems on this table's references")
        ranking = rank_systems(corpus_scores(score_utterances(table, cfg.normaliser)))
    else:
        raise ConfigError(
            "no ranking to choose proxies with: pass ranking=ranking.json (from werest score) "
            "or proxy=SYSTEM"
        )
    targets = list(cfg.targets) if cfg.get("targets") else None
    proxies = choose_proxies(table, ranking, targets=targets, proxy=cfg.get("proxy"))
    features = agreement_features(
        table, proxies, normaliser=cfg.normaliser, n_jobs=int_setting(cfg, "n_jobs")
    )
    out = write_table(features, cfg.out)
    save_config(cfg, out)
    log.info("wrote %s: %d rows", out, len(features))
    return features
