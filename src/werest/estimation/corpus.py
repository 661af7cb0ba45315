"""The corpus estimate's formula, written once: each estimated utterance's prediction weighs
its proxy's length, as a true corpus WER weighs each utterance's reference length. The
estimate, the leaderboard, a few labels and the evaluations all read it from here."""

from __future__ import annotations

import pandas as pd

from werest.stats import RateSample


def estimated_sample(done: pd.DataFrame, column: str = "predicted_wer") -> RateSample:
    """The corpus estimate's terms, the one place its formula is written: each estimated
    utterance weighs its proxy's length (:func:`corpus_length`, at least 1), so the corpus
    estimate is Σ(pred · n) / Σ n (:meth:`RateSample.rate`) as a true corpus WER is
    Σ errors / Σ words, and the bootstraps resample these terms. With every prediction equal
    to the utterance's pWER this is exactly raw corpus pWER, Σ errors against the proxy /
    Σ proxy words: the anchor the model's corrections start from
    (:class:`werest.model.regressor.AnchoredWerRegressor`)."""
    weight = done[corpus_length(column)].clip(lower=1).to_numpy(dtype=float)
    return RateSample(done[column].to_numpy(dtype=float) * weight, weight)


def corpus_length(column: str) -> str:
    """The proxy length that weighs ``column``'s utterances in a corpus estimate:
    ``proxy_chars`` for ``predicted_cer``, ``proxy_words`` for any other prediction."""
    return "proxy_chars" if column == "predicted_cer" else "proxy_words"
