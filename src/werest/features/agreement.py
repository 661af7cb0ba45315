"""Agreement features: how far a target system's hypothesis is from the other systems'.

The proxy's hypothesis plays the reference (Waheed et al., 2025): pWER and pCER are the word
and character error rates of the target against it, after the same normalisation used for
scoring, with the counts behind them (lengths and S/D/I/hits) and the S/D/I rates (counts
over the proxy's length: unlike counts and absolute lengths, rates do not tie a model to the
utterance lengths of its training domain).

werest adds what the other systems say, which makes the estimate robust to a poor proxy (a
proxy that is good on the benchmark can be bad in a new domain; in the shared data Azure
truncates long LibriSpeech utterances and Watson returns nothing on some clips):

* consensus: the target's pWER/pCER against *every* other system that transcribed the
  utterance (mean, min, max, median) and their number;
* the proxy's own quality: the proxy's mean pWER/pCER against the remaining systems (not the
  target): when the proxy disagrees with everyone, pWER against it says little;
* lengths: the median word count of the other systems (``est_ref_words``, the estimated
  reference length, used to weight utterances in corpus estimates) and the target's and
  proxy's lengths relative to it (truncation and hallucination signals).

No feature depends on a system's name. When a "reference" (proxy or other system) is empty,
the rate's denominator is 1: the rate is then the hypothesis word count (0 when both are
empty) instead of undefined. Features needing a third system are NaN with only two.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from werest.features.hallucination import HALLUCINATION_FEATURES, pair_signals
from werest.table import KEY, UTTERANCE
from werest.text import AUTO, Normaliser, count_errors, normalised_columns

log = logging.getLogger(__name__)

PROXY_FEATURES: tuple[str, ...] = (
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
    "pwer_sub_rate",
    "pwer_del_rate",
    "pwer_ins_rate",
    "pcer_sub_rate",
    "pcer_del_rate",
    "pcer_ins_rate",
    *HALLUCINATION_FEATURES,
)
CONSENSUS_FEATURES: tuple[str, ...] = (
    "n_others",
    "tri_wer",
    "tri_cer",
    "tri_wer_proxy",
    "utt_disagreement",
    "pwer_mean",
    "pwer_min",
    "pwer_max",
    "pwer_median",
    "pcer_mean",
    "pcer_min",
    "proxy_pwer_others",
    "proxy_pcer_others",
    "est_ref_words",
    "len_ratio",
    "len_ratio_others",
    "proxy_len_ratio",
)
AGREEMENT_FEATURES: tuple[str, ...] = PROXY_FEATURES + CONSENSUS_FEATURES
TRIANGULATED: tuple[str, ...] = ("tri_wer", "tri_cer", "tri_wer_proxy")
STATUS_OK = "ok"
STATUS_NO_PROXY = "no proxy hypothesis"


def pairwise_agreement(
    table: pd.DataFrame,
    utterances: pd.DataFrame | None = None,
    *,
    normaliser: Normaliser = AUTO,
    n_jobs: int = 1,
) -> pd.DataFrame:
    """Word and character agreement of every ordered pair of systems on each utterance.

    ``utterances`` (dataset, utt_id) restricts the utterances. Each unordered pair is aligned
    once: the Levenshtein distance is symmetric, and seen from the other side a deletion is an
    insertion, so the reverse row swaps them.

    Returns
    -------
    ``dataset, utt_id, system, other`` and, with ``other``'s hypothesis as the reference:
    ``pwer, pcer, hyp_words, other_words, hyp_chars, other_chars``, the word and character
    S/D/I/hits (``w_sub ... c_hits``) and the hallucination signals of both sides
    (:func:`werest.features.hallucination.pair_signals`).
    """
    text = normalised_columns(table, normaliser, ("hypothesis",), n_jobs=n_jobs)["hypothesis"]
    keys = table[KEY].assign(text=text.to_numpy())
    if utterances is not None:
        keys = keys.merge(utterances[UTTERANCE].drop_duplicates(), on=UTTERANCE)
    pairs = keys.merge(keys, on=UTTERANCE, suffixes=("", "_other"))
    pairs = pairs[pairs["system"] < pairs["system_other"]].reset_index(drop=True)
    pairs = _canonical_direction(pairs)
    words = count_errors(pairs["text_other"], pairs["text"], "word", n_jobs=n_jobs)
    chars = count_errors(pairs["text_other"], pairs["text"], "char", n_jobs=n_jobs)
    forward = pairs[KEY].assign(other=pairs["system_other"].to_numpy())
    for prefix, counts in (("w", words), ("c", chars)):
        for name, column in (
            ("sub", "substitutions"),
            ("del", "deletions"),
            ("ins", "insertions"),
            ("hits", "hits"),
        ):
            forward[f"{prefix}_{name}"] = counts[column].to_numpy()
    forward["hyp_words"] = words["hypothesis_length"].to_numpy()
    forward["other_words"] = words["reference_length"].to_numpy()
    forward["hyp_chars"] = chars["hypothesis_length"].to_numpy()
    forward["other_chars"] = chars["reference_length"].to_numpy()
    signals = pair_signals(pairs["text"], pairs["text_other"])
    forward[list(signals.columns)] = signals.to_numpy()
    backward = forward.rename(columns=_MIRROR)
    out = pd.concat([forward, backward[forward.columns]], ignore_index=True)
    out["pwer"] = _rate(out, "w", "other_words")
    out["pcer"] = _rate(out, "c", "other_chars")
    return out


def _canonical_direction(pairs: pd.DataFrame) -> pd.DataFrame:
    """Align each pair with the lexically smaller text as the reference, not the system whose
    name sorts first: equally good alignments can split the same distance differently into
    substitutions, deletions and insertions, so the direction must not depend on the names."""
    flip = (pairs["text"] > pairs["text_other"]).to_numpy()
    if flip.any():
        swapped = {"system": "system_other", "system_other": "system"}
        swapped |= {"text": "text_other", "text_other": "text"}
        flipped = pairs.loc[flip].rename(columns=swapped)
        pairs = pd.concat([pairs.loc[~flip], flipped[pairs.columns]]).sort_index()
    return pairs


# The same pair seen from the other system: roles, lengths and deletions/insertions swap.
_MIRROR = {
    "system": "other",
    "other": "system",
    "hyp_words": "other_words",
    "other_words": "hyp_words",
    "hyp_chars": "other_chars",
    "other_chars": "hyp_chars",
    "w_del": "w_ins",
    "w_ins": "w_del",
    "c_del": "c_ins",
    "c_ins": "c_del",
    "hyp_rep": "other_rep",
    "other_rep": "hyp_rep",
    "script_mismatch": "other_script_mismatch",
    "other_script_mismatch": "script_mismatch",
}


def _rate(pairs: pd.DataFrame, prefix: str, length: str) -> np.ndarray:
    errors = pairs[f"{prefix}_sub"] + pairs[f"{prefix}_del"] + pairs[f"{prefix}_ins"]
    return (errors / np.maximum(pairs[length], 1)).to_numpy(dtype=float)


def agreement_features(
    table: pd.DataFrame,
    proxies: pd.DataFrame,
    *,
    normaliser: Normaliser = AUTO,
    n_jobs: int = 1,
    pairs: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Agreement features (:data:`AGREEMENT_FEATURES`) for each target row of ``proxies``.

    Parameters
    ----------
    table : the transcripts table holding the targets' and the other systems' hypotheses.
    proxies : ``dataset, utt_id, system, proxy`` (:func:`werest.proxy.choose_proxies`).
    normaliser : the text :class:`~werest.text.Normaliser`.
    n_jobs : processes for normalisation and alignments.
    pairs : :func:`pairwise_agreement` of a table holding ``table`` (computed once and reused
        by callers that build features for many subsets, such as leave-one-domain-out).

    Returns
    -------
    ``proxies``' rows with the feature columns and ``status`` (``ok``, or ``no proxy
    hypothesis`` whose features are NaN). No reference column.
    """
    if pairs is None:
        pairs = pairwise_agreement(table, proxies, normaliser=normaliser, n_jobs=n_jobs)
    else:
        pairs = pairs.merge(proxies[UTTERANCE].drop_duplicates(), on=UTTERANCE)
    features = proxies[[*KEY, "proxy"]].reset_index(drop=True)
    features = features.join(_proxy_columns(features, pairs))
    features = features.join(_consensus_columns(pairs), on=KEY)
    triangulated = triangulated_errors(pairs)
    features = features.join(triangulated, on=KEY)
    features = features.join(_proxy_quality(features, pairs))
    has_proxy = features["pwer"].notna().to_numpy()
    features.loc[~has_proxy, list(CONSENSUS_FEATURES)] = np.nan
    others = features["est_ref_words"].clip(lower=1)
    features["len_ratio"] = features["hyp_words"] / features["proxy_words"].clip(lower=1)
    features["len_ratio_others"] = features["hyp_words"] / others
    features["proxy_len_ratio"] = features["proxy_words"] / others
    features["tri_wer_proxy"] = _proxy_value(features, triangulated["tri_wer"])
    features = features[[*KEY, "proxy", *AGREEMENT_FEATURES]].astype(
        dict.fromkeys(AGREEMENT_FEATURES, float)
    )
    features["status"] = np.where(has_proxy, STATUS_OK, STATUS_NO_PROXY)
    missing = int((~has_proxy).sum())
    if missing:  # all rows: the caller decides (werest estimate and train refuse to go on)
        report = log.warning if missing < len(features) else log.info
        report("%d of %d target row(s) have no proxy hypothesis", missing, len(features))
    return features


def _proxy_columns(features: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """The target-vs-proxy pair of each row (NaN where the row has no proxy)."""
    renamed = pairs.rename(
        columns={
            "other": "proxy",
            "other_words": "proxy_words",
            "other_chars": "proxy_chars",
            "w_sub": "pwer_sub",
            "w_del": "pwer_del",
            "w_ins": "pwer_ins",
            "w_hits": "pwer_hits",
            "c_sub": "pcer_sub",
            "c_del": "pcer_del",
            "c_ins": "pcer_ins",
            "c_hits": "pcer_hits",
        }
    )
    joined = features[[*KEY, "proxy"]].merge(renamed, on=[*KEY, "proxy"], how="left")
    for unit, length in (("pwer", "proxy_words"), ("pcer", "proxy_chars")):
        for operation in ("sub", "del", "ins"):
            rate = joined[f"{unit}_{operation}"] / joined[length].clip(lower=1)
            joined[f"{unit}_{operation}_rate"] = rate
    joined["rep_ngram_rate"] = joined["hyp_rep"]
    joined["rep_ngram_excess"] = joined["hyp_rep"] - joined["other_rep"]
    return joined[list(PROXY_FEATURES)]


def triangulated_errors(pairs: pd.DataFrame) -> pd.DataFrame:
    """Each system's own error rate on an utterance, solved from the pairwise disagreements.

    If two systems' errors never coincided, their disagreement would be the sum of their
    error rates: d(i, j) = e(i) + e(j). With k ≥ 3 systems on an utterance, the least-squares
    solution of these k(k-1)/2 equations is closed-form: e(i) = (S(i) - D/(k-1)) / (k-2), with
    S(i) = Σ_j d(i, j) and D = Σ_{i<j} d(i, j) (clipped at 0). d is the edit distance over the
    utterance's estimated length n̂ (the median word or character count of all its
    hypotheses), so every pair shares one scale. Shared errors make d smaller than the sum,
    so this under-estimates; but it tells *which* system made the errors, which agreement with
    one proxy cannot, and it needs no label. NaN with fewer than three systems.

    Returns
    -------
    ``tri_wer`` and ``tri_cer`` indexed by (dataset, utt_id, system), and
    ``utt_disagreement``, the utterance's mean pairwise word disagreement d (the same for every
    system of the utterance; defined from two systems on).
    """
    edits = pairs[[*KEY]].copy()
    columns = {}
    for name, prefix, length in (("tri_wer", "w", "hyp_words"), ("tri_cer", "c", "hyp_chars")):
        distance = pairs[f"{prefix}_sub"] + pairs[f"{prefix}_del"] + pairs[f"{prefix}_ins"]
        lengths = pairs.groupby(KEY, sort=False)[length].first()
        n_hat = lengths.groupby(level=UTTERANCE, sort=False).median().clip(lower=1)
        edits["d"] = (
            distance.to_numpy()
            / n_hat.reindex(pd.MultiIndex.from_frame(pairs[UTTERANCE])).to_numpy()
        )
        row_sum = edits.groupby(KEY, sort=False)["d"].sum()
        k = edits.groupby(KEY, sort=False).size() + 1
        total = row_sum.groupby(level=UTTERANCE, sort=False).transform("sum") / 2
        solved = (row_sum - total / (k - 1)) / (k - 2)
        columns[name] = solved.clip(lower=0).where(k >= 3)
        if name == "tri_wer":
            columns["utt_disagreement"] = total / (k * (k - 1) / 2)
    return pd.DataFrame(columns)


CONTEXT_FEATURES: tuple[str, ...] = ("ctx_tri_wer", "ctx_pwer", "ctx_disagreement")


def add_dataset_context(features: pd.DataFrame) -> pd.DataFrame:
    """Dataset-level context, label-free, per row of a feature table of whole datasets.

    ``ctx_tri_wer`` and ``ctx_pwer``: the target's corpus triangulated error and corpus pWER
    on its dataset (means weighted by the estimated length n̂); ``ctx_disagreement``: how much
    all systems of the dataset disagree (n̂-weighted mean of ``utt_disagreement``). Errors that
    every system makes are invisible to agreement; how much the systems disagree on a dataset
    says how hard it is, and so how large that invisible share is likely to be.

    Datasets with fewer than three systems get NaN for the triangulated and disagreement
    context (as do two-system views, :func:`two_system_view`).
    """
    features = features.copy()
    rows = features[features["status"] == STATUS_OK]
    weight = rows["est_ref_words"].clip(lower=1)
    frame = pd.DataFrame(
        {
            "dataset": rows["dataset"],
            "system": rows["system"],
            "w": weight,
            "tri": rows["tri_wer"] * weight,
            "tri_w": weight.where(rows["tri_wer"].notna(), 0),
            "pwer": rows["pwer"] * weight,
            "dis": rows["utt_disagreement"] * weight,
            "dis_w": weight.where(rows["utt_disagreement"].notna(), 0),
        }
    )
    per_system = frame.groupby(["dataset", "system"])[["w", "tri", "tri_w", "pwer"]].sum()
    per_dataset = frame.groupby("dataset")[["dis", "dis_w"]].sum()
    context = pd.DataFrame(
        {
            "ctx_tri_wer": per_system["tri"] / per_system["tri_w"].where(per_system["tri_w"] > 0),
            "ctx_pwer": per_system["pwer"] / per_system["w"],
        }
    )
    features = features.drop(columns=list(CONTEXT_FEATURES), errors="ignore")
    features = features.join(context, on=["dataset", "system"])
    disagreement = per_dataset["dis"] / per_dataset["dis_w"].where(per_dataset["dis_w"] > 0)
    features["ctx_disagreement"] = features["dataset"].map(disagreement)
    n_systems = features.groupby("dataset")["n_others"].transform("max") + 1
    features.loc[n_systems < 3, ["ctx_tri_wer", "ctx_disagreement"]] = np.nan
    return features


def _proxy_value(features: pd.DataFrame, values: pd.Series) -> pd.Series:
    """``values`` (indexed by key) of each row's proxy on the same utterance (NaN where none)."""
    index = pd.MultiIndex.from_frame(
        features[[*UTTERANCE, "proxy"]].rename(columns={"proxy": "system"})
    )
    return pd.Series(values.reindex(index).to_numpy(), index=features.index)


def _consensus_columns(pairs: pd.DataFrame) -> pd.DataFrame:
    """The target against every other system, per (dataset, utt_id, system)."""
    grouped = pairs.groupby(KEY, sort=False)
    return pd.DataFrame(
        {
            "n_others": grouped.size(),
            "pwer_mean": grouped["pwer"].mean(),
            "pwer_min": grouped["pwer"].min(),
            "pwer_max": grouped["pwer"].max(),
            "pwer_median": grouped["pwer"].median(),
            "pcer_mean": grouped["pcer"].mean(),
            "pcer_min": grouped["pcer"].min(),
            "est_ref_words": grouped["other_words"].median(),
        }
    )


def _proxy_quality(features: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """The proxy's mean pWER/pCER against the systems other than itself and the target."""
    proxy_pairs = pairs.rename(columns={"system": "proxy", "other": "third"})[
        [*UTTERANCE, "proxy", "third", "pwer", "pcer"]
    ]
    joined = features[[*KEY, "proxy"]].reset_index().merge(proxy_pairs, on=[*UTTERANCE, "proxy"])
    joined = joined[joined["third"] != joined["system"]]
    quality = joined.groupby("index")[["pwer", "pcer"]].mean()
    quality.columns = ["proxy_pwer_others", "proxy_pcer_others"]
    return quality.reindex(features.index)


def two_system_view(features: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``features`` as if the target and its proxy were the only two systems.

    The consensus features collapse onto the target-vs-proxy pair (mean = min = max = median
    = pWER; the estimated length is the proxy's), and the proxy-quality features, which need a
    third system, become NaN. Training on these views as well teaches a model what pWER alone
    says, so it stays sensible on inputs with two systems (a common case: a new system and one
    reference system), which multi-system benchmarks otherwise never show it.
    """
    view = features.copy()
    for name in ("pwer_mean", "pwer_min", "pwer_max", "pwer_median"):
        view[name] = view["pwer"]
    for name in ("pcer_mean", "pcer_min"):
        view[name] = view["pcer"]
    view["n_others"] = 1.0
    view["est_ref_words"] = view["proxy_words"]
    view["len_ratio_others"] = view["len_ratio"]
    view["proxy_len_ratio"] = 1.0
    view[["proxy_pwer_others", "proxy_pcer_others", *TRIANGULATED]] = np.nan
    view["utt_disagreement"] = view["pwer"]
    view[["ctx_tri_wer", "ctx_disagreement"]] = np.nan
    return view
