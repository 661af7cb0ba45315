"""Rank ASR systems on labelled data and choose each target system's proxy.

The ranking orders systems by their macro-average corpus WER over the labelled datasets each
was scored on (every dataset weighs the same, whatever its size). It is saved as a small JSON
artefact that estimation on unlabelled data reuses.

A target's proxy, per utterance, is the best-ranked *other* system that has a hypothesis for
that utterance (an empty hypothesis counts: the system ran). An explicit proxy by name
overrides the ranking; utterances it did not transcribe get no proxy. Systems the ranking has
never seen rank after every ranked one, ordered label-free by :func:`consensus_order` (the
system that agrees most with the others first), and a warning says so.
"""

from __future__ import annotations

import logging

import pandas as pd

from werest.errors import ConfigError, InputError, unknown_name
from werest.features.agreement import pair_distances_of
from werest.features.proxy_ranking import Ranking
from werest.text.counting import corpus_rate
from werest.text.normalise import AUTO, Normaliser
from werest.text.scoring import utterance_labels

log = logging.getLogger(__name__)


def rank_systems(scores: pd.DataFrame, *, normaliser: Normaliser = AUTO) -> Ranking:
    """Rank systems by macro-average corpus WER across the datasets each was scored on.

    Parameters
    ----------
    scores : corpus scores, one row per (dataset, system) with a ``wer`` column
        (:func:`werest.text.scoring.corpus_scores`).

    Ties are broken by name, so the ranking is deterministic.
    """
    valid = scores[scores["wer"].notna()]
    if valid.empty:
        raise InputError("no scored system: cannot rank without references")
    macro = valid.groupby("system")["wer"].mean()
    order = sorted(macro.index, key=lambda name: (macro[name], name))
    datasets = valid.groupby("system")["dataset"].apply(lambda d: sorted(d)).to_dict()
    return Ranking(
        systems=list(order),
        macro_wer={name: float(macro[name]) for name in order},
        datasets={name: list(datasets[name]) for name in order},
        normaliser=normaliser.name,
    )


def consensus_order(
    table: pd.DataFrame,
    *,
    normaliser: Normaliser = AUTO,
    max_utterances: int = 5000,
    seed: int = 0,
    pairs: pd.DataFrame | None = None,
) -> list[str]:
    """Systems ordered label-free: the one closest to all the others first.

    The distance of two systems is Σ word edit distance / Σ max(their two word counts) over
    the utterances they share (on a seeded sample of at most ``max_utterances`` utterances;
    ``pairs``, a :func:`werest.features.agreement.pairwise_agreement`, skips the alignment).
    It is symmetric and lies in [0, 1]: a system that outputs one word per utterance, or
    nothing, is at distance ~1 from every other system, so it comes last instead of first
    (pWER against the *other* system's length, the former score, made such a system everyone's
    proxy: the others' pWER against its one word is huge). A system's score is its mean
    distance to the others; ties go to the system sharing more utterances, then to the name
    (ties are exact only for identical outputs, whose order changes no feature). No reference
    and no name is used, so this orders systems a ranking has never seen, and renaming the
    systems does not change the order.
    """
    if pairs is None:
        from werest.features.agreement import pairwise_agreement

        sample = sample_utterances(table, max_utterances, seed)
        rows = table.merge(sample, on=["dataset", "utt_id"])  # normalise the sample only
        pairs = pairwise_agreement(rows, sample, normaliser=normaliser)
    distance = pair_distances_of(pairs).reset_index()  # system, other, distance, shared
    if distance.empty:
        return sorted(table["system"].unique())
    score = distance.groupby("system")["distance"].mean()
    shared = distance.groupby("system")["shared"].sum()
    unpaired = sorted(set(table["system"]) - set(score.index))
    ordered = sorted(score.index, key=lambda name: (score[name], -shared[name], name))
    return ordered + unpaired


def sample_utterances(table: pd.DataFrame, max_utterances: int, seed: int) -> pd.DataFrame:
    """A seeded sample of at most ``max_utterances`` (dataset, utt_id), independent of the row
    order and of the system names."""
    utterances = table[["dataset", "utt_id"]].drop_duplicates()
    utterances = utterances.sort_values(["dataset", "utt_id"], ignore_index=True)
    if len(utterances) > max_utterances:
        utterances = utterances.sample(max_utterances, random_state=seed)
    return utterances


def choose_proxies(
    table: pd.DataFrame,
    ranking: Ranking | None,
    *,
    targets: list[str] | None = None,
    proxy: str | None = None,
    unseen_order: list[str] | None = None,
    absent_proxy_ok: bool = False,
) -> pd.DataFrame:
    """Pick a proxy system for every (dataset, utt_id, target) row.

    Parameters
    ----------
    table : transcripts table (several systems per utterance).
    ranking : the systems best first (:meth:`Ranking.from_order` for a bare order); None
        only with an explicit ``proxy``.
    targets : the target systems (default: every system in the table).
    proxy : an explicit proxy system for every target (must differ from each target).
    unseen_order : the order of systems ``ranking`` does not hold (:func:`consensus_order`).
    absent_proxy_ok : an explicit ``proxy`` absent from ``table`` (a chunk of a larger table
        it is in, e.g. a dataset it did not transcribe) leaves every row without a proxy
        instead of raising.

    Returns
    -------
    ``dataset, utt_id, system, proxy`` for every target row; ``proxy`` is null where no other
    system transcribed the utterance.
    """
    systems = set(table["system"].unique())
    targets = sorted(systems) if targets is None else list(targets)
    unknown = [t for t in targets if t not in systems]
    if unknown:
        raise unknown_name("target system", unknown[0], systems, "systems")
    if proxy is not None:
        if proxy not in systems and not absent_proxy_ok:
            raise unknown_name("proxy system", proxy, systems, "systems")
        if proxy in targets:
            raise ConfigError(f"proxy {proxy!r} is also a target: a system cannot be its own proxy")
        order = [proxy]
    else:
        order = (ranking or Ranking.from_order([])).order(systems, unseen_order)
    rank_of = {name: i for i, name in enumerate(order)}
    keys = table[["dataset", "utt_id", "system"]]
    utterance = ["dataset", "utt_id"]
    ranked = keys[keys["system"].isin(rank_of)].assign(rank=keys["system"].map(rank_of))
    ranked = ranked.sort_values([*utterance, "rank"], kind="stable")
    # The best two candidates per utterance: a target takes the best one that is not itself.
    top_two = ranked.groupby(utterance, sort=False).head(2)
    slot = top_two.groupby(utterance, sort=False).cumcount()
    wide = top_two.set_index([*utterance, slot])["system"].unstack().reindex(columns=[0, 1])
    target_rows = keys[keys["system"].isin(targets)].reset_index(drop=True)
    joined = target_rows.join(wide, on=utterance)
    best, runner_up = joined[0].astype("str"), joined[1].astype("str")
    target_rows["proxy"] = best.where(best != target_rows["system"], runner_up)
    return target_rows


def rank_on(
    table: pd.DataFrame,
    normaliser: Normaliser,
    n_jobs: int = 1,
    *,
    labels: pd.DataFrame | None = None,
) -> Ranking:
    """The proxy ranking from a labelled table's corpus WERs (Σ errors / Σ words per dataset
    and system). ``labels`` (:func:`utterance_labels`, possibly of a larger table) saves
    scoring the table again; only ``table``'s datasets count."""
    if labels is None:
        labels = utterance_labels(table, normaliser, n_jobs)
    labels = labels[labels["dataset"].isin(table["dataset"].unique())]
    totals = labels.groupby(["dataset", "system"], as_index=False)[
        ["word_errors", "ref_words"]
    ].sum()
    return rank_totals(totals, normaliser)


def rank_totals(totals: pd.DataFrame, normaliser: Normaliser) -> Ranking:
    """The ranking from Σ word errors and Σ reference words per (dataset, system)
    (``dataset, system, word_errors, ref_words``): integer sums, so a partitioned run's add up
    to exactly the whole table's (:mod:`werest.partition.score`)."""
    totals = totals.assign(
        wer=[
            corpus_rate(e, n)
            for e, n in zip(totals["word_errors"], totals["ref_words"], strict=True)
        ]
    )
    return rank_systems(totals, normaliser=normaliser)


def references_ranking(table: pd.DataFrame, normaliser: Normaliser, alternatives: str) -> Ranking:
    """The systems ranked on ``table``'s own references (:func:`rank_on`); a ConfigError
    suggesting ``alternatives`` when it has none."""
    if "reference" in table.columns and table["reference"].notna().any():
        log.info("ranking the input's systems on its references")
        return rank_on(table, normaliser)
    raise ConfigError(f"the input has no references to rank its systems on: {alternatives}")
