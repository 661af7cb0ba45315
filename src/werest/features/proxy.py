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

import json
import logging
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from werest.errors import ConfigError, InputError, unknown_name
from werest.io import atomic_path
from werest.text.counting import corpus_rate
from werest.text.normalise import AUTO, Normaliser
from werest.text.scoring import utterance_labels

log = logging.getLogger(__name__)

RANKING_VERSION = 1


@dataclass(frozen=True)
class Ranking:
    """Systems from best to worst, with the macro WER behind the order."""

    systems: list[str]
    macro_wer: dict[str, float]
    datasets: dict[str, list[str]] = field(default_factory=dict)
    normaliser: str = "whisper_english"  # the name of the Normaliser its WERs were scored under

    def order(
        self, systems: list[str] | set[str], unseen_order: list[str] | None = None
    ) -> list[str]:
        """``systems`` best first: ranked ones by rank, then unseen ones in ``unseen_order``
        (e.g. :func:`consensus_order`), else by name."""
        position = {name: i for i, name in enumerate(self.systems)}
        unseen = sorted(set(systems) - set(position))
        if unseen_order:
            place = {name: i for i, name in enumerate(unseen_order)}
            unseen.sort(key=lambda name: (place.get(name, len(place)), name))
        if unseen:
            log.warning("systems not in the ranking, ranked last: %s", unseen)
        return sorted(set(systems) & set(position), key=position.__getitem__) + unseen

    def describe(self) -> str:
        """The ranking as readable lines."""
        lines = ["rank  system  macro WER %  datasets"]
        for i, name in enumerate(self.systems, start=1):
            datasets = ", ".join(self.datasets.get(name, []))
            lines.append(f"{i:>4}  {name}  {100 * self.macro_wer[name]:.2f}  {datasets}")
        return "\n".join(lines)

    def save(self, path: str | Path) -> Path:
        """Write the ranking as JSON (atomically)."""
        path = Path(path)
        with atomic_path(path) as tmp:
            tmp.write_text(
                json.dumps({"version": RANKING_VERSION, **asdict(self)}, indent=2), encoding="utf-8"
            )
        return path

    @classmethod
    def from_order(cls, systems: Iterable[str]) -> Ranking:
        """A ranking that is only an order, best first (a user's ``system_order``, an explicit
        proxy, the label-free :func:`consensus_order`): no WER was measured behind it."""
        names = [str(name) for name in systems]
        return cls(systems=names, macro_wer=dict.fromkeys(names, float("nan")))

    @classmethod
    def load(cls, path: str | Path) -> Ranking:
        """Read a ranking written by :meth:`save`."""
        path = Path(path)
        if not path.is_file():
            raise InputError("no such ranking file", path=path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise TypeError(f"expected a JSON object, got {type(data).__name__}")
            data.pop("version", None)
            ranking = cls(**data)
            if not isinstance(ranking.systems, list) or not isinstance(ranking.macro_wer, dict):
                raise TypeError("'systems' must be a list and 'macro_wer' an object")
        except (json.JSONDecodeError, UnicodeDecodeError, TypeError, ValueError) as error:
            message = " ".join(str(error).split())
            raise InputError(f"not a werest ranking: {message}", path=path) from None
        if set(ranking.systems) != set(ranking.macro_wer):
            raise InputError("not a werest ranking: systems and macro_wer differ", path=path)
        return ranking


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


def pair_distances_of(pairs: pd.DataFrame) -> pd.DataFrame:
    """``distance`` (Σ word edits / Σ the longer word count) and ``shared`` (utterances both
    transcribed) of each ordered pair of systems, indexed by ``system, other`` and summed
    over datasets, from :func:`werest.features.agreement.pairwise_agreement` rows or their
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
    :func:`werest.features.agreement.pairwise_agreement` rows (totals pass through as they
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
