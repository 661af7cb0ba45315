"""Agreement features: how far a target system's hypothesis is from the other systems'.

The proxy's hypothesis plays the reference (Waheed et al., 2025): pWER and pCER are the word
and character error rates of the target against it, after the same normalisation used for
scoring, with the counts behind them (lengths and S/D/I/hits) and the S/D/I rates (counts
over the proxy's length: unlike counts and absolute lengths, rates do not tie a model to the
utterance lengths of its training domain).

werest adds what the other systems say, which makes the estimate robust to a poor proxy (a
proxy that is good on the benchmark can be bad in a new domain; in the shared data Azure
truncates long LibriSpeech utterances and Watson returns nothing on some clips):

* consensus: the target's pWER/pCER against the other systems that transcribed the
  utterance (mean, min, max, median) and their number: every other system in training, its
  panel's at estimate time (:class:`Panel`: the 8 best-ranked, so a run costs O(S·8)
  alignments per utterance, not O(S²));
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
from dataclasses import dataclass

import numpy as np
import pandas as pd

from werest.codes import row_codes
from werest.columns import KEY, UTTERANCE
from werest.features.hallucination import pair_signals
from werest.features.settings import (  # the names, declared where --help reads them
    AGREEMENT_FEATURES,
    CONSENSUS_FEATURES,
    PANEL_SIZE,
    PROXY_FEATURES,
    TRIANGULATED,
)
from werest.text.counting import coded_distances, count_errors, word_strings
from werest.text.normalise import AUTO, Normaliser, normalised_columns

log = logging.getLogger(__name__)

STATUS_OK = "ok"
STATUS_NO_PROXY = "no proxy hypothesis"


@dataclass(frozen=True)
class Panel:
    """The systems each target is compared with at estimate time: its ``size`` best-ranked
    others on the utterance, in ``order`` (best first; the proxy order, so the proxy is
    always among them). The ``size + 1`` best-ranked systems of an utterance are its panel:
    each member is compared with the other members, each other system with the ``size``
    best. Consensus, triangulation and proxy quality then cost O(S·size) alignments per
    utterance instead of O(S²); with at most ``size + 1`` systems nothing changes."""

    order: tuple[str, ...]
    size: int = PANEL_SIZE

    def positions(self, systems: pd.Series, utterances: np.ndarray) -> np.ndarray:
        """Each row's rank among its utterance's systems (0 = best), by ``order``; systems
        ``order`` does not hold come after, by name. ``utterances``: each row's utterance
        code (:func:`werest.codes.row_codes`)."""
        known = {name: i for i, name in enumerate(self.order)}
        extra = sorted(set(systems) - set(known))
        rank = systems.map(known | {n: len(known) + i for i, n in enumerate(extra)})
        frame = pd.DataFrame({"u": utterances, "r": rank.to_numpy()})
        ordered = frame.sort_values(["u", "r"], kind="stable")
        position = ordered.groupby("u", sort=False).cumcount()
        return position.reindex(frame.index).to_numpy()


def pairwise_agreement(
    table: pd.DataFrame,
    utterances: pd.DataFrame | None = None,
    *,
    normaliser: Normaliser = AUTO,
    n_jobs: int = 1,
) -> pd.DataFrame:
    """Word and character distance of every ordered pair of systems on each utterance.

    ``utterances`` (dataset, utt_id) restricts the utterances. Each unordered pair is aligned
    once (the Levenshtein distance is symmetric; the reverse row swaps the lengths), and only
    its distance is computed (:func:`werest.text.edit_distances`): the S/D/I split is needed
    only between a target and its proxy (:func:`agreement_features` counts it there).

    Returns
    -------
    ``dataset, utt_id, system, other`` and, with ``other``'s hypothesis as the reference:
    ``w_dist, c_dist`` (word and character edits), ``hyp_words, other_words, hyp_chars,
    other_chars`` and ``pwer, pcer`` (the edits over ``other``'s length, at least 1).
    """
    return pair_distances(_normalised_keys(table, normaliser, n_jobs, utterances), n_jobs)


def _normalised_keys(
    table: pd.DataFrame,
    normaliser: Normaliser,
    n_jobs: int,
    utterances: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """``dataset, utt_id, system, text`` (the normalised hypothesis) of ``table``'s rows."""
    if utterances is not None:
        table = table.merge(utterances[UTTERANCE].drop_duplicates(), on=UTTERANCE)
    text = normalised_columns(table, normaliser, ("hypothesis",), n_jobs=n_jobs)["hypothesis"]
    return table[KEY].assign(text=text.to_numpy()).reset_index(drop=True)


def pair_distances(keys: pd.DataFrame, n_jobs: int = 1, panel: Panel | None = None) -> pd.DataFrame:
    """:func:`pairwise_agreement` of ``dataset, utt_id, system, text`` rows (text normalised);
    with a ``panel``, only the pairs it compares (:class:`Panel`), and ``in_panel`` and
    ``position`` (the target's) on each row."""
    words, chars = _lengths(keys["text"])
    # texts in order: sums without names, and pairs aligned by code
    rank, texts = pd.factorize(keys["text"], sort=True)
    texts = texts.tolist()
    utterance = row_codes(keys["dataset"], keys["utt_id"])[0]  # pairs join on one integer
    # once per row, not per pair; the pairs carry codes, not texts
    keys = keys.drop(columns="text").assign(words=words, chars=chars, rank=rank, u=utterance)
    # the systems' names in order as integers: each unordered pair picked by comparing them
    keys["named"] = pd.factorize(keys["system"], sort=True)[0]
    if panel is not None:
        keys = keys.assign(position=panel.positions(keys["system"], utterance))
        if keys["position"].max() <= panel.size:  # every system is in the panel
            panel = None
    others = keys.drop(columns=UTTERANCE)
    if panel is None:
        pairs = keys.merge(others, on="u", suffixes=("", "_other"))
        pairs = pairs[(pairs["named"] < pairs["named_other"]).to_numpy()].reset_index(drop=True)
    else:  # every row against the panel's members, then only the pairs the panel compares
        members = others[others["position"] <= panel.size]
        pairs = keys.merge(members, on="u", suffixes=("", "_other"))
        own, theirs = pairs["position"], pairs["position_other"]
        compared = (own != theirs) & ((own <= panel.size) | (theirs < panel.size))
        pairs = pairs[compared.to_numpy()].reset_index(drop=True)
    forward = pairs[KEY].assign(other=pairs["system_other"].to_numpy())
    for prefix, unit in (("w", "word"), ("c", "char")):
        forward[f"{prefix}_dist"] = coded_distances(
            pairs["rank_other"].to_numpy(), pairs["rank"].to_numpy(), texts, unit, n_jobs=n_jobs
        )
    forward["hyp_words"], forward["hyp_chars"] = pairs["words"], pairs["chars"]
    forward["other_words"] = pairs["words_other"].to_numpy()
    forward["other_chars"] = pairs["chars_other"].to_numpy()
    forward["rank"], forward["other_rank"] = pairs["rank"], pairs["rank_other"].to_numpy()
    forward["u"] = pairs["u"]
    if panel is None:
        backward = forward.rename(columns=_MIRROR)
        out = pd.concat([forward, backward[forward.columns]], ignore_index=True)
    else:  # ordered rows already: a target's row with a member is not the member's row
        out = forward.assign(
            in_panel=(pairs["position"] <= panel.size).to_numpy(),
            position=pairs["position"].to_numpy(),
        )
    # Each utterance's rows ordered by the texts, not by the systems' names, so every sum
    # over them (consensus, triangulation) adds in an order that renaming cannot change.
    order = np.lexsort((out["other_rank"].to_numpy(), out["rank"].to_numpy(), out["u"]))
    out = out.iloc[order].drop(columns=["rank", "other_rank", "u"]).reset_index(drop=True)
    out["pwer"] = _rate(out["w_dist"], out["other_words"])
    out["pcer"] = _rate(out["c_dist"], out["other_chars"])
    return out


def pairwise_word_totals(
    table: pd.DataFrame,
    utterances: pd.DataFrame | None = None,
    *,
    normaliser: Normaliser = AUTO,
    n_jobs: int = 1,
) -> pd.DataFrame:
    """:func:`pair_totals` of :func:`pairwise_agreement`, the same
    rows, computed from the word distances alone: per dataset and ordered pair of systems,
    Σ word edits (``errors``), Σ the longer of the two word counts (``longer``) and the
    utterances both transcribed (``shared``), sorted. What the proxy order and the guards
    read of a sample (:func:`werest.estimation.guards.sample_pairs`): no character
    alignment, no row per ordered pair (each unordered one is aligned once, and its sums
    count for both orders), and integer codes instead of names until the totals. ``table``
    is validated (:func:`werest.ingest.table.validate_table`: no null hypothesis)."""
    keys = _normalised_keys(table, normaliser, n_jobs, utterances)
    rank, texts = pd.factorize(keys["text"], sort=True)
    words = np.fromiter(map(len, word_strings(texts.tolist())), dtype=np.int64, count=len(texts))
    dataset, datasets = pd.factorize(keys["dataset"], sort=True)
    system, systems = pd.factorize(keys["system"], sort=True)
    rows = pd.DataFrame(
        {
            "u": row_codes(keys["dataset"], keys["utt_id"])[0],
            "d": dataset,
            "s": system,
            "r": rank,
            "w": words[rank],
        }
    )
    pairs = rows.merge(rows.drop(columns="d"), on="u", suffixes=("", "_o"))
    pairs = pairs[(pairs["s"] < pairs["s_o"]).to_numpy()]
    errors = coded_distances(
        pairs["r_o"].to_numpy(), pairs["r"].to_numpy(), texts.tolist(), "word", n_jobs=n_jobs
    )
    forward = pd.DataFrame(
        {
            "d": pairs["d"].to_numpy(),
            "s": pairs["s"].to_numpy(),
            "o": pairs["s_o"].to_numpy(),
            "errors": errors,
            "longer": np.maximum(pairs["w"].to_numpy(), pairs["w_o"].to_numpy()),
        }
    )
    both = pd.concat([forward, forward.rename(columns={"s": "o", "o": "s"})], ignore_index=True)
    grouped = both.groupby(["d", "s", "o"], sort=False)
    sums = grouped[["errors", "longer"]].sum().assign(shared=grouped.size()).reset_index()
    named = pd.DataFrame(
        {
            "dataset": datasets.take(sums["d"].to_numpy()),
            "system": systems.take(sums["s"].to_numpy()),
            "other": systems.take(sums["o"].to_numpy()),
            "errors": sums["errors"].to_numpy(),
            "longer": sums["longer"].to_numpy(),
            "shared": sums["shared"].to_numpy(),
        }
    )
    return named.sort_values(["dataset", "system", "other"], ignore_index=True)


def pair_distances_of(pairs: pd.DataFrame) -> pd.DataFrame:
    """``distance`` (Σ word edits / Σ the longer word count) and ``shared`` (utterances both
    transcribed) of each ordered pair of systems, indexed by ``system, other`` and summed
    over datasets, from :func:`pairwise_agreement` rows or their
    :func:`pair_totals`."""
    if pairs.empty:
        index = pd.MultiIndex.from_arrays([[], []], names=["system", "other"])
        return pd.DataFrame({"distance": [], "shared": []}, index=index)
    totals = pair_totals(pairs).groupby(["system", "other"])[["errors", "longer", "shared"]].sum()
    return pd.DataFrame(
        {"distance": totals["errors"] / totals["longer"].clip(lower=1), "shared": totals["shared"]}
    )


#: what the proxy order and the guards read of a sample's pairs
PAIR_TOTALS = ["dataset", "system", "other", "errors", "longer", "shared"]


def pair_totals(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per ``dataset, system, other``: Σ word edits (``errors``), Σ the longer of the two
    word counts (``longer``) and the utterances both transcribed (``shared``), from
    :func:`pairwise_agreement` rows (totals pass through as they
    are). Integer sums, so totals of totals are exact: a sample aligned in pieces keeps
    S² rows per dataset, not S² per utterance."""
    if "shared" in pairs.columns:
        return pairs[PAIR_TOTALS]
    frame = pd.DataFrame(
        {
            "dataset": pairs["dataset"],
            "system": pairs["system"],
            "other": pairs["other"],
            "errors": pairs["w_dist"],
            "longer": np.maximum(pairs["hyp_words"], pairs["other_words"]),
        }
    )
    grouped = frame.groupby(["dataset", "system", "other"], sort=True)
    return grouped[["errors", "longer"]].sum().assign(shared=grouped.size()).reset_index()


def _lengths(texts: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Word and character counts of normalised texts, as jiwer counts them (the words: one
    code point each in :func:`werest.text.word_strings`, which the alignments read too)."""
    codes, distinct = pd.factorize(texts)
    distinct = distinct.tolist()
    words = np.fromiter(map(len, word_strings(distinct)), dtype=np.int64, count=len(distinct))
    chars = np.fromiter(map(len, map(str.strip, distinct)), dtype=np.int64, count=len(distinct))
    return words[codes], chars[codes]


# The same pair seen from the other system: roles and lengths swap.
_MIRROR = {
    "system": "other",
    "other": "system",
    "hyp_words": "other_words",
    "other_words": "hyp_words",
    "hyp_chars": "other_chars",
    "other_chars": "hyp_chars",
    "rank": "other_rank",
    "other_rank": "rank",
}


def _rate(errors: pd.Series, length: pd.Series) -> np.ndarray:
    return (errors / np.maximum(length, 1)).to_numpy(dtype=float)


def proxy_pairs(keys: pd.DataFrame, proxies: pd.DataFrame, n_jobs: int = 1) -> pd.DataFrame:
    """S/D/I/hits of each target row against its proxy, and the hallucination signals.

    Each pair is aligned with the lexically smaller text as the hypothesis, whichever system
    is the target: equally good alignments can split the same distance differently into
    substitutions, deletions and insertions, so the direction must not depend on the names
    (seen from the other side a deletion is an insertion).

    Returns
    -------
    ``dataset, utt_id, system, proxy``, the word and character counts (``w_sub … c_hits``),
    ``hyp_words, proxy_words, hyp_chars, proxy_chars``, and ``hyp_rep, other_rep,
    script_mismatch`` (:func:`werest.features.hallucination.pair_signals`), one row per
    target row that has a proxy hypothesis.
    """
    text = keys.set_index(KEY)["text"]
    rows = proxies.loc[proxies["proxy"].notna(), [*KEY, "proxy"]].reset_index(drop=True)
    own = text.reindex(pd.MultiIndex.from_frame(rows[KEY])).to_numpy()
    index = pd.MultiIndex.from_frame(rows[[*UTTERANCE, "proxy"]])
    theirs = text.reindex(index).to_numpy()
    found = pd.notna(own) & pd.notna(theirs)
    rows, own, theirs = rows[found].reset_index(drop=True), own[found], theirs[found]
    flip = (own > theirs).astype(bool)  # the target's text is the larger: align, then mirror
    reference = np.where(flip, own, theirs)
    hypothesis = np.where(flip, theirs, own)
    for prefix, unit in (("w", "word"), ("c", "char")):
        counts = count_errors(reference, hypothesis, unit, n_jobs=n_jobs)
        deletions = counts["deletions"].to_numpy()
        insertions = counts["insertions"].to_numpy()
        rows[f"{prefix}_sub"] = counts["substitutions"].to_numpy()
        rows[f"{prefix}_del"] = np.where(flip, insertions, deletions)
        rows[f"{prefix}_ins"] = np.where(flip, deletions, insertions)
        rows[f"{prefix}_hits"] = counts["hits"].to_numpy()
        reference_length = counts["reference_length"].to_numpy()
        hypothesis_length = counts["hypothesis_length"].to_numpy()
        length = "words" if unit == "word" else "chars"
        rows[f"hyp_{length}"] = np.where(flip, reference_length, hypothesis_length)
        rows[f"proxy_{length}"] = np.where(flip, hypothesis_length, reference_length)
    signals = pair_signals(pd.Series(own), pd.Series(theirs))
    rows[["hyp_rep", "other_rep", "script_mismatch"]] = signals[
        ["hyp_rep", "other_rep", "script_mismatch"]
    ].to_numpy()
    return rows


def agreement_features(
    table: pd.DataFrame,
    proxies: pd.DataFrame,
    *,
    normaliser: Normaliser = AUTO,
    n_jobs: int = 1,
    pairs: pd.DataFrame | None = None,
    panel: Panel | None = None,
) -> pd.DataFrame:
    """Agreement features (:data:`AGREEMENT_FEATURES`) for each target row of ``proxies``.

    Parameters
    ----------
    table : the transcripts table holding the targets' and the other systems' hypotheses.
    proxies : ``dataset, utt_id, system, proxy`` (:func:`werest.features.proxy.choose_proxies`).
    normaliser : the text :class:`~werest.text.Normaliser`.
    n_jobs : processes for normalisation and alignments.
    pairs : :func:`pairwise_agreement` of a table holding ``table`` (computed once and reused
        by callers that build features for many subsets, such as leave-one-domain-out).
    panel : compare each target with its panel only (:class:`Panel`; estimate time), not with
        every other system.

    Returns
    -------
    ``proxies``' rows with the feature columns and ``status`` (``ok``, or ``no proxy
    hypothesis`` whose features are NaN). No reference column.
    """
    keys = _normalised_keys(table, normaliser, n_jobs, proxies)
    if pairs is None:
        pairs = pair_distances(keys, n_jobs, panel)
    else:
        pairs = pairs.merge(proxies[UTTERANCE].drop_duplicates(), on=UTTERANCE)
    features = proxies[[*KEY, "proxy"]].reset_index(drop=True)
    features = features.join(_proxy_columns(features, proxy_pairs(keys, features, n_jobs)))
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


def _proxy_columns(features: pd.DataFrame, detail: pd.DataFrame) -> pd.DataFrame:
    """The target-vs-proxy pair of each row (:func:`proxy_pairs`; NaN where the row has no
    proxy)."""
    renamed = detail.rename(
        columns={
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
        errors = joined[f"{unit}_sub"] + joined[f"{unit}_del"] + joined[f"{unit}_ins"]
        joined[unit] = _rate(errors, joined[length])
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
    groups = edits.groupby(KEY, sort=False)
    k = groups.size() + 1
    inside, last, members = _panel_roles(pairs, k)
    columns = {}
    for name, prefix, length in (("tri_wer", "w", "hyp_words"), ("tri_cer", "c", "hyp_chars")):
        distance = pairs[f"{prefix}_dist"]
        lengths = pairs.groupby(KEY, sort=False)[length].first()
        n_hat = lengths.groupby(level=UTTERANCE, sort=False).median().clip(lower=1)
        edits["d"] = (
            distance.to_numpy()
            / n_hat.reindex(pd.MultiIndex.from_frame(pairs[UTTERANCE])).to_numpy()
        )
        row_sum = edits.groupby(KEY, sort=False)["d"].sum()
        # D, the distances summed over each target's set (itself and the systems it is
        # compared with). Without a panel every set is the utterance: D = D_P = Σ S(i) / 2.
        # With one (:class:`Panel`), a member's set is the panel, D = D_P; another target's is
        # itself and the panel's best ``size``, D = S(i) + D_P − S(last), ``last`` the
        # panel's worst member, whose distances are to exactly those ``size``.
        panel = row_sum.where(inside, 0.0).groupby(level=UTTERANCE, sort=False).transform("sum")
        panel = panel / 2
        last_sum = row_sum.where(last).groupby(level=UTTERANCE, sort=False).transform("max")
        total = panel.where(inside, row_sum + panel - last_sum)
        solved = (row_sum - total / (k - 1)) / (k - 2)
        columns[name] = solved.clip(lower=0).where(k >= 3)
        if name == "tri_wer":
            columns["utt_disagreement"] = panel / (members * (members - 1) / 2)
    return pd.DataFrame(columns)


def _panel_roles(pairs: pd.DataFrame, k: pd.Series) -> tuple[np.ndarray, np.ndarray, pd.Series]:
    """Per target row of ``k`` (indexed by key): whether it is in its utterance's panel,
    whether it is the panel's worst member, and the panel's size. Without a panel
    (``pairs`` has no ``in_panel``) every system is a member and ``k`` is the panel's size."""
    if "in_panel" not in pairs:
        return np.ones(len(k), dtype=bool), np.zeros(len(k), dtype=bool), k
    flags = pairs.groupby(KEY, sort=False)[["in_panel", "position"]].first().reindex(k.index)
    inside = flags["in_panel"].to_numpy(dtype=bool)
    position = flags["position"]
    worst = position.where(inside).groupby(level=UTTERANCE, sort=False).transform("max")
    members = pd.Series(inside, index=k.index).groupby(level=UTTERANCE, sort=False)
    return inside, (position == worst).to_numpy(), members.transform("sum")


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
