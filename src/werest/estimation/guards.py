"""Run-time guards: warnings printed next to label-free estimates when they are likely wrong.

Agreement between systems is all a label-free estimate sees, and three situations make it
mislead without any error being raised:

* **two systems only**: each is the other's proxy, so their disagreement is all there is and
  nothing says which of the two made the errors; a paired comparison of the two can then be
  confidently wrong (``experiments/results/two_systems.md``);
* **near-duplicate systems** (two builds of one model, a system and its quantised copy): each
  agrees with the other far more than any other pair does, each becomes the other's proxy and
  its estimate collapses towards 0 (29 % true, 9.7 % estimated in one case); and, whatever
  the other pairs do, two systems whose outputs differ by under ``NEAR_IDENTICAL`` (1 %) of
  their words on the sample are noted as near-duplicates: their two estimates are one
  measurement, and their difference is no ranking;
* **a proxy with many empty or very short outputs** (a service that returned nothing, a
  truncating one): pWER against it counts the target's correct words as insertions;
* **different utterance sets**: a system without a hypothesis for some utterances (not run
  there) is estimated on fewer utterances than the others, so their numbers are not
  comparable; :func:`count_missing_as_deletions` is the alternative a user can choose;
* **a system that returned nothing**: an empty hypothesis on every utterance of a dataset (a
  failed run, a wrong column) is estimated at ~100 %, which reads as a very bad system rather
  than a broken one.

:func:`guard_warnings` finds them from the sample's pairwise agreement and the estimated rows;
each warning names its dataset and systems, and :func:`attach_warnings` puts it on the summary
records it concerns (``summary.json``'s ``warnings``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from werest.features.agreement import STATUS_OK, pair_distances_of, pairwise_word_totals
from werest.features.settings import relative_to_proxy
from werest.formatting import plural
from werest.ingest.table import UTTERANCE
from werest.text import Normaliser

#: utterances per dataset aligned pairwise for the label-free order and the guards.
SAMPLE_PER_DATASET = 1000
#: a pair is a near-duplicate when its distance is at most this share of the median distance
#: of the dataset's other pairs, and at least ``DUPLICATE_GAP`` below it.
DUPLICATE_RATIO = 0.25
DUPLICATE_GAP = 0.05
#: a pair whose word distance (Σ edits / Σ the longer word count, the pairwise WER between
#: them) on the sample is below this is noted as near-duplicates whatever the other pairs do:
#: a copy of a system with 1 % of its utterances changed is well below it, two distinct
#: systems are not (independent errors add up: two 1 %-WER systems differ by ~2 %) ...
NEAR_IDENTICAL = 0.01
#: ... when they share at least this many sampled utterances (fewer cannot tell a copy from
#: two good systems on a handful of short utterances)
NEAR_IDENTICAL_SHARED = 20
#: a proxy output is "short" below this share of the other systems' median word count.
SHORT_RATIO = 0.5
#: warn when at least this share of a target's rows have an empty or short proxy output.
SHORT_SHARE = 0.10
#: system pairs aligned at a time (memory: a few hundred bytes each)
PAIR_ROWS = 1_000_000


def sample_pairs(
    table: pd.DataFrame,
    *,
    normaliser: Normaliser,
    per_dataset: int = SAMPLE_PER_DATASET,
    seed: int = 0,
    n_jobs: int = 1,
) -> pd.DataFrame:
    """Pairwise agreement (:func:`pairwise_word_totals`) on a seeded sample of at most
    ``per_dataset`` utterances of each dataset (chosen independently of row order and names),
    as :func:`werest.features.agreement.pair_totals`: one row per dataset and ordered pair of
    systems, whatever the number of utterances."""
    sample = sample_keys(table[UTTERANCE], per_dataset=per_dataset, seed=seed)
    # only the sample's rows are normalised and aligned, however large the table, and a few
    # utterances at a time: every pair of S systems is S² rows (their sums are integers, so
    # the order the pieces come in changes nothing)
    rows = table.merge(sample, on=UTTERANCE)
    systems = max(len(rows) / max(len(sample), 1), 1.0)
    step = max(1, int(PAIR_ROWS // systems**2))
    starts = range(0, max(len(sample), 1), step)  # an empty sample: one empty piece
    parts = [
        pairwise_word_totals(
            rows, sample.iloc[start : start + step], normaliser=normaliser, n_jobs=n_jobs
        )
        for start in starts
    ]
    totals = pd.concat(parts, ignore_index=True).groupby(
        ["dataset", "system", "other"], sort=True, as_index=False
    )
    return totals[["errors", "longer", "shared"]].sum()


def sample_keys(
    keys: pd.DataFrame, *, per_dataset: int = SAMPLE_PER_DATASET, seed: int = 0
) -> pd.DataFrame:
    """A seeded sample of at most ``per_dataset`` distinct (dataset, utt_id) of ``keys`` per
    dataset, independent of row order and names.

    Each key's draw is a seeded 64-bit hash of the key itself, and each dataset keeps its
    ``per_dataset`` keys with the smallest draws (a bottom-k sample); rows come in draw order.
    A key's draw does not depend on the other keys, so the sample of a union is the sample
    of its parts' samples: a partitioned run samples each partition and then their union
    (:func:`werest.partition.estimate.sample_pairs_partitioned`), in memory that grows with the
    sample, not with the input."""
    distinct = keys[list(UTTERANCE)].drop_duplicates()
    draw = pd.util.hash_pandas_object(
        distinct.astype(object), index=False, hash_key=f"{seed % 10**16:016d}"
    )
    ordered = distinct.assign(_draw=draw.to_numpy()).sort_values(
        ["_draw", *UTTERANCE], kind="stable", ignore_index=True
    )
    sample = ordered.groupby("dataset", sort=False, observed=True).head(per_dataset)
    return sample.drop(columns="_draw").reset_index(drop=True)


def guard_warnings(
    table: pd.DataFrame, utterances: pd.DataFrame, pairs: pd.DataFrame
) -> list[dict]:
    """Warnings about the estimates: ``{"dataset", "systems", "message"}`` each.

    Parameters
    ----------
    table : the transcripts table.
    utterances : the estimated rows (features with ``status``).
    pairs : :func:`sample_pairs` of ``table``.
    """
    return warnings_from_counts(utterance_counts(table), utterances, pairs)


def utterance_counts(table: pd.DataFrame) -> pd.DataFrame:
    """Distinct utterances per (dataset, system) (``n``), those with an empty hypothesis
    (``empty``) and per dataset (``total``): what the guards need of the table. Counts of
    utterance-disjoint partitions add up."""
    by = ["dataset", "system"]
    counts = table.groupby(by)["utt_id"].nunique().rename("n").reset_index()
    blank = table["hypothesis"].astype("string").str.strip().fillna("") == ""
    empty = table[blank.to_numpy()].groupby(by)["utt_id"].nunique()
    keys = pd.MultiIndex.from_frame(counts[by])
    counts["empty"] = empty.reindex(keys, fill_value=0).to_numpy()
    total = table.groupby("dataset")["utt_id"].nunique()
    return counts.assign(total=counts["dataset"].map(total).to_numpy())


def warnings_from_counts(
    counts: pd.DataFrame,
    utterances: pd.DataFrame,
    pairs: pd.DataFrame,
    evidence: list[str] | None = None,
) -> list[dict]:
    """:func:`guard_warnings` from :func:`utterance_counts` instead of the whole table.
    ``evidence``: :func:`side_evidence` of the estimated rows, when ``utterances`` lacks
    their audio-score columns (a partitioned run's compact rows); None: from ``utterances``."""
    if evidence is None:
        evidence = side_evidence(utterances)
    warnings = []
    targets = utterances.groupby("dataset")["system"].unique()
    for dataset, systems in counts.groupby("dataset")["system"].unique().items():
        if dataset not in targets.index:
            continue
        if len(systems) == 2:
            warnings.append(_two_systems(dataset, sorted(systems), evidence))
        duplicates = _near_duplicates(dataset, pairs[pairs["dataset"] == dataset])
        warnings += duplicates
        warnings += _near_identical(dataset, pairs[pairs["dataset"] == dataset], duplicates)
    warnings += _short_proxies(utterances)
    warnings += _different_sets(counts, targets)
    warnings += _silent_systems(counts, targets)
    return warnings


def side_evidence(utterances: pd.DataFrame) -> list[str]:
    """The estimated rows' features that say which side of a disagreement is wrong: input
    scores' proxy differences and the attributed pWER (:mod:`werest.features.inputs`), in
    column order, where any row has a value."""
    return [c for c, found in evidence_found(utterances).items() if found]


def evidence_found(utterances: pd.DataFrame) -> dict[str, bool]:
    """Each audio-evidence column of ``utterances`` (:func:`side_evidence`): whether any row
    has a value. Partitions' results combine with ``or``."""
    columns = [c for c in utterances.columns if relative_to_proxy(c)]
    return {c: bool(utterances[c].notna().any()) for c in columns}


def _two_systems(dataset: str, systems: list[str], evidence: list[str]) -> dict:
    if evidence:
        named = ", ".join(evidence[:2]) + (", ..." if len(evidence) > 2 else "")
        why = (
            f"only the audio scores ({named}) say which of them made the errors, and they can "
            "place the errors on the right side yet misjudge how many; compare these two on "
            "their estimates with care"
        )
    else:
        why = (
            "nothing says which of them made the errors; do not compare these two on their "
            "estimates"
        )
    return {
        "dataset": dataset,
        "systems": systems,
        "message": (
            f"only two systems ({', '.join(systems)}): each is the other's proxy and {why}; "
            "which of the two is better cannot be told from their text. Add a third system "
            "(werest transcribe adds an offline recogniser's hypotheses where the table has "
            "audio) or label a few utterances (werest sample, then werest estimate labels=)"
        ),
    }


def _near_duplicates(dataset: str, pairs: pd.DataFrame) -> list[dict]:
    """Pairs of systems that agree far more than the dataset's other pairs do.

    Two near-perfect systems also agree far more than the rest, and are not a problem. With
    four systems or more the two cases differ: each system's own error is estimated from the
    triangles it forms with two *other* systems, (d(a,c) + d(a,d) − d(c,d)) / 2, and a pair is
    a near-duplicate only when its distance is below a quarter of the sum of its two errors
    (independent errors would add up). With three systems nothing separates the cases, and the
    warning says so.
    """
    distance = _distance_matrix(pairs)
    if distance is None or len(distance) < 3:  # a duplicate needs other pairs to stand out
        return []
    names = list(distance.index)
    matrix = distance.reindex(columns=names).to_numpy(dtype=float)
    upper = np.triu_indices(len(names), 1)
    pair_values = matrix[upper]  # every pair once, in (a, b) loop order
    found = []
    for k, (i, j) in enumerate(zip(*upper, strict=True)):
        a, b, value = names[i], names[j], pair_values[k]
        rest = _median_without(pair_values, k)
        if not (value <= DUPLICATE_RATIO * rest and value <= rest - DUPLICATE_GAP):
            continue
        others = [c for c in range(len(names)) if c not in (i, j)]
        if len(others) >= 2:
            errors = _own_error(matrix, i, others) + _own_error(matrix, j, others)
            if value >= DUPLICATE_RATIO * errors:
                continue  # both near-perfect: their agreement is explained
            why = (
                f"their word distance ({100 * value:.1f} %) is far below the sum of their "
                f"own estimated errors ({100 * errors:.1f} %): they make the same errors"
            )
        else:
            why = (
                f"their word distance ({100 * value:.1f} %) is far below the other pairs' "
                f"({100 * rest:.1f} %): either both are near-perfect or they make the same "
                "errors (two builds of one model), which three systems cannot tell apart"
            )
        found.append(
            {
                "dataset": dataset,
                "systems": [a, b],
                "message": (
                    f"{a} and {b} may be near-duplicates: {why}; if they are, each is the "
                    "other's proxy and their estimates are too low: drop one, or set "
                    "proxy= or system_order= to a third system"
                ),
            }
        )
    return found


def _near_identical(dataset: str, pairs: pd.DataFrame, flagged: list[dict]) -> list[dict]:
    """Groups of systems whose outputs agree on almost every utterance: linked by pairs whose
    word distance is below :data:`NEAR_IDENTICAL` on at least :data:`NEAR_IDENTICAL_SHARED`
    shared utterances of the sample (``pairs``: :func:`sample_pairs`' rows of one dataset),
    one note per group (several hosted copies of one model are one note, not one per pair);
    pairs :func:`_near_duplicates` already warned about (``flagged``) are left out."""
    if pairs.empty:
        return []
    warned = {frozenset(w["systems"]) for w in flagged}
    distances = pair_distances_of(pairs).reset_index()
    close = distances[
        (distances["system"] < distances["other"])
        & (distances["distance"] < NEAR_IDENTICAL)
        & (distances["shared"] >= NEAR_IDENTICAL_SHARED)
    ]
    links = [
        (a, b, value, int(shared))
        for a, b, value, shared in close[["system", "other", "distance", "shared"]].itertuples(
            index=False
        )
        if frozenset((a, b)) not in warned
    ]
    return [_near_identical_note(dataset, group) for group in _linked_groups(links)]


def _linked_groups(links: list[tuple]) -> list[list[tuple]]:
    """The links ``(a, b, ...)`` grouped by the connected systems they join, in order of each
    group's first link."""
    group_of: dict[str, int] = {}
    groups: list[list[tuple]] = []
    for link in links:
        a, b = link[0], link[1]
        ids = sorted({group_of[s] for s in (a, b) if s in group_of})
        if not ids:
            groups.append([])
            ids = [len(groups) - 1]
        keep = ids[0]
        for other in ids[1:]:  # the link joins two groups
            groups[keep] += groups[other]
            groups[other] = []
            group_of.update({s: keep for s in group_of if group_of[s] == other})
        groups[keep].append(link)
        group_of[a] = group_of[b] = keep
    return [group for group in groups if group]


def _near_identical_note(dataset: str, links: list[tuple]) -> dict:
    """The note on one group of :func:`_near_identical` systems (``links``: its pairs)."""
    systems = sorted({s for a, b, _, _ in links for s in (a, b)})
    values = [value for _, _, value, _ in links]
    sampled = plural(min(n for _, _, _, n in links), "sampled utterance")
    if len(systems) == 2:
        names = f"{systems[0]} and {systems[1]}"
        differ = f"differ by {100 * values[0]:.2f} % of their words on {sampled}"
    else:
        names = ", ".join(systems[:-1]) + f" and {systems[-1]}"
        differ = (
            f"differ pairwise by {100 * min(values):.2f}–{100 * max(values):.2f} % of their "
            f"words on at least {sampled}"
        )
    return {
        "dataset": dataset,
        "systems": systems,
        "message": (
            f"{names} are near-duplicates: their outputs {differ} (under "
            f"{100 * NEAR_IDENTICAL:.0f} %), so their estimates are one measurement and the "
            "differences between them rank nothing; where one is another's proxy, its "
            "estimate is too low: keep one, or set proxy= or system_order= to another system"
        ),
    }


def _distance_matrix(pairs: pd.DataFrame) -> pd.DataFrame | None:
    """Symmetric word distance Σ edits / Σ longer length of each pair, as a square frame."""
    if pairs.empty:
        return None
    return pair_distances_of(pairs)["distance"].unstack()


def _median_without(values: np.ndarray, k: int) -> float:
    """The median of ``values`` without its k-th entry and its NaNs (NaN when none is left)."""
    rest = np.delete(values, k)
    rest = rest[~np.isnan(rest)]
    return float(np.median(rest)) if len(rest) else float("nan")


def _own_error(matrix: np.ndarray, system: int, others: list[int]) -> float:
    """The median over pairs of other systems (c, d) of (d(s,c) + d(s,d) − d(c,d)) / 2."""
    to_system = matrix[system, others]
    among = matrix[np.ix_(others, others)]
    upper = np.triu_indices(len(others), 1)
    values = ((to_system[:, None] + to_system[None, :] - among) / 2)[upper]
    values = values[~np.isnan(values)]
    return max(float(np.median(values)), 0.0) if len(values) else float("nan")


def _short_proxies(utterances: pd.DataFrame) -> list[dict]:
    """Targets whose proxy is empty or much shorter than the other systems on many rows."""
    done = utterances[utterances["status"] == STATUS_OK]
    if done.empty:
        return []
    short = (done["proxy_words"] == 0) | (done["proxy_words"] < SHORT_RATIO * done["est_ref_words"])
    frame = done[["dataset", "system", "proxy"]].assign(short=short.to_numpy())
    found = []
    for (dataset, system, proxy), group in frame.groupby(["dataset", "system", "proxy"]):
        share = float(group["short"].mean())
        if share >= SHORT_SHARE and group["short"].sum() >= 2:
            found.append(
                {
                    "dataset": dataset,
                    "systems": [system, proxy],
                    "message": (
                        f"proxy {proxy} of {system} is empty or under half the other systems' "
                        f"length on {100 * share:.0f} % of its "
                        f"{plural(len(group), 'utterance')}: pWER against it counts correct "
                        "words as errors; choose another proxy (proxy= or system_order=)"
                    ),
                }
            )
    return found


def _silent_systems(counts: pd.DataFrame, targets: pd.Series) -> list[dict]:
    """Systems whose hypothesis is empty on every utterance of an estimated dataset
    (``counts``: :func:`utterance_counts`)."""
    if "empty" not in counts:
        return []
    silent = counts[(counts["n"] > 0) & (counts["empty"] == counts["n"])]
    return [
        {
            "dataset": row.dataset,
            "systems": [row.system],
            "message": (
                f"system {row.system} returned nothing on every utterance "
                f"({plural(int(row.n), 'utterance')}, every hypothesis empty): its ~100 % "
                "estimate says the run failed, not how well it transcribes; check its output "
                "(a failed job, the wrong hypothesis column) or leave it out"
            ),
        }
        for row in silent.itertuples(index=False)
        if row.dataset in targets.index
    ]


def _different_sets(counts: pd.DataFrame, targets: pd.Series) -> list[dict]:
    """Datasets whose target systems did not all transcribe the same utterances
    (``counts``: :func:`utterance_counts`)."""
    found = []
    for dataset, group in counts.groupby("dataset"):
        if dataset not in targets.index:
            continue
        total = int(group["total"].iat[0])
        per_system = group.set_index("system")["n"]
        short = per_system[(per_system < total) & per_system.index.isin(targets[dataset])]
        if short.empty:
            continue
        listed = ", ".join(f"{name} {total - n}" for name, n in short.items())
        found.append(
            {
                "dataset": dataset,
                "systems": sorted(short.index),
                "message": (
                    f"systems lack hypotheses for some of the {total} utterances ({listed} "
                    "missing): they are estimated on different utterance sets, so their "
                    "numbers are not comparable; missing_hypotheses=deletions counts a missing "
                    "hypothesis as an empty output (every reference word deleted)"
                ),
            }
        )
    return found


def count_missing_as_deletions(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with an empty hypothesis for every (utterance, system) of a dataset that
    lacks one, for the systems that have any row in that dataset; the utterance's own columns
    (reference, audio, duration, speaker, language, ...) are copied from another system's row.
    A system that was not run on an utterance then scores as if it returned nothing."""
    utterance_columns = [
        c
        for c in table.columns
        if c not in ("system", "hypothesis")
        and table.groupby(UTTERANCE, sort=False)[c].nunique(dropna=False).max() <= 1
    ]
    utterances = table[utterance_columns].drop_duplicates(UTTERANCE)
    systems = table[["dataset", "system"]].drop_duplicates()
    grid = utterances.merge(systems, on="dataset")
    present = table[[*UTTERANCE, "system"]].assign(_present=True)
    grid = grid.merge(present, on=[*UTTERANCE, "system"], how="left")
    missing = grid[grid["_present"].isna()].drop(columns="_present").assign(hypothesis="")
    if missing.empty:
        return table
    return pd.concat(
        [table, missing[[c for c in table.columns if c in missing.columns]]], ignore_index=True
    )


def unestimated_warnings(records: list[dict]) -> list[dict]:
    """A warning for each (dataset, system) of which no utterance could be estimated (no
    proxy hypothesis: e.g. ``proxy=`` names a system that did not run on the dataset)."""
    return [
        {
            "dataset": r["dataset"],
            "systems": [r["system"]],
            "message": f"{r['system']}: nothing estimated: none of its {r['n_utterances']} "
            "utterance(s) has a proxy hypothesis (with proxy=, that system did not "
            "transcribe this dataset)",
        }
        for r in records
        if r["n_estimated"] == 0
    ]


def attach_warnings(records: list[dict], warnings: list[dict]) -> list[dict]:
    """Add to each summary record the messages of the warnings on its dataset and system."""
    for record in records:
        record["warnings"] = [
            w["message"]
            for w in warnings
            if w["dataset"] == record["dataset"] and record["system"] in w["systems"]
        ]
    return records


def format_warnings(warnings: list[dict]) -> str:
    """The warnings as console lines (empty when there are none)."""
    return "\n".join(f"warning: {w['dataset']}: {w['message']}" for w in warnings)
