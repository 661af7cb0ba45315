"""The corpus estimate's formula, written once: each estimated utterance's prediction weighs
its proxy's length, as a true corpus WER weighs each utterance's reference length
(:func:`estimated_sample`); the estimate, the leaderboard, a few labels and the evaluations
all read it from here, and the leaderboard's samples of the estimated and the true corpus WER
(:func:`rate_sample`). And the true corpus WER beside it, where the input has references, in
integer sums that partitions add up (:func:`truth_sums`), and the true errors of every system
on a few labelled utterances (:func:`labelled_scores`)."""

from __future__ import annotations

import pandas as pd

from werest.columns import KEY, UTTERANCE
from werest.features.agreement import STATUS_OK
from werest.resampling import RateSample
from werest.text import Normaliser, corpus_rate


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


def rate_sample(frame: pd.DataFrame, kind: str) -> RateSample:
    """The rows' corpus WER as a ratio sample: ``est`` the estimate's terms
    (:func:`estimated_sample`), ``true`` the true errors and words."""
    if kind == "est":
        return estimated_sample(frame)
    return RateSample(
        frame["word_errors"].to_numpy(dtype=float), frame["ref_words"].to_numpy(dtype=float)
    )


def corpus_length(column: str) -> str:
    """The proxy length that weighs ``column``'s utterances in a corpus estimate:
    ``proxy_chars`` for ``predicted_cer``, ``proxy_words`` for any other prediction."""
    return "proxy_chars" if column == "predicted_cer" else "proxy_words"


def scored_rows(
    table: pd.DataFrame, utterances: pd.DataFrame, normaliser: Normaliser
) -> pd.DataFrame | None:
    """True per-utterance counts (:func:`werest.text.scoring.score_utterances`) of the estimated
    rows that have a reference, with the reference; None when there is none."""
    if "reference" not in table.columns or table["reference"].isna().all():
        return None
    from werest.text.scoring import score_utterances

    rows = table.merge(utterances[KEY], on=KEY)
    rows = rows[rows["reference"].notna()].reset_index(drop=True)
    if rows.empty:
        return None
    return score_utterances(rows, normaliser).assign(reference=rows["reference"].to_numpy())


def true_wer(
    table: pd.DataFrame,
    utterances: pd.DataFrame,
    normaliser: Normaliser,
    scored: pd.DataFrame | None = None,
):
    """True corpus WER of the estimated rows, where the input has references."""
    if scored is None:
        scored = scored_rows(table, utterances, normaliser)
    if scored is None:
        return None
    return truth_from_sums(truth_sums(scored, utterances))


def truth_sums(scored: pd.DataFrame, utterances: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per (dataset, system): Σ word errors, Σ reference words and the count of labelled rows;
    integer sums, so partitions add up to exactly the whole table's. With ``utterances``, only
    the rows estimated there (status ok) count: a true WER beside an estimate is measured on
    exactly the utterances estimated."""
    if utterances is not None:
        scored = scored.merge(utterances.loc[utterances["status"] == STATUS_OK, KEY], on=KEY)
    grouped = scored.groupby(["dataset", "system"])
    return grouped[["word_errors", "ref_words"]].sum().assign(n=grouped.size())


def truth_from_sums(sums: pd.DataFrame) -> pd.DataFrame:
    """The true corpus WER (``wer``, ``n``) from :func:`truth_sums`."""
    pairs = zip(sums["word_errors"], sums["ref_words"], strict=True)
    wer = [corpus_rate([errors], [words]) for errors, words in pairs]
    return pd.DataFrame({"wer": wer, "n": sums["n"]}, index=sums.index)


def labelled_scores(
    table: pd.DataFrame, labels: pd.DataFrame, normaliser: Normaliser
) -> pd.DataFrame:
    """True word errors and reference words of every system's hypothesis on each labelled
    utterance, counted as ``werest score`` counts them (:func:`werest.text.scoring.score_against`:
    the label, under the row's language).

    An utterance marked ``skip`` (no speech, unintelligible: it has no WER) counts 0 word
    errors and 0 reference words for every system: the estimand is the corpus WER of the
    labellable utterances, Σ e·1[labellable] / Σ r·1[labellable], and a skipped draw stays in
    the design as a draw whose true terms are 0 (docs/few_labels.md, "Unlabellable rows")."""
    columns = [*KEY, "word_errors", "ref_words"]
    skip = labels["skip"].astype(bool) if "skip" in labels else pd.Series(False, labels.index)
    from werest.text.scoring import score_against

    scored = score_against(table, labels[~skip.to_numpy()], normaliser)[columns]
    if not skip.any():
        return scored
    skipped = table[KEY].merge(labels.loc[skip.to_numpy(), UTTERANCE], on=UTTERANCE)
    skipped = skipped.drop_duplicates(KEY).assign(word_errors=0, ref_words=0)
    return pd.concat([scored, skipped[columns]], ignore_index=True)
