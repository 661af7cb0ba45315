"""Candidates for estimating a dataset's systems jointly (issue 34), each measured alone,
leave one domain out, at the corpus level, against raw pWER.

    python experiments/joint_candidates.py   # -> experiments/results/joint_candidates.md

On every labelled shared dataset (``conf/data/all_shared.yaml``; a seeded sample of at most
1,500 utterances per dataset, as the guards sample) each (dataset, system) cell gets:

* ``pwer``: raw pWER against the best *other* system of the domain's label-free order (what
  werest's estimate starts from);
* ``rover``: pWER against a word-level vote of the target's panel (its 8 best-ranked others,
  the target never among them): every other hypothesis aligned to the best-ranked one (the
  pivot), each pivot word replaced by the majority's word (ties keep the pivot's), an
  insertion kept where more than half the voters insert it (ROVER with a pivot alignment);
* ``ridge[...]``: raw pWER times exp(a linear correction of log(WER / pWER)) learned on the
  other domains' cells (every domain weighing the same, ridge α = 1) from features of the
  whole agreement matrix: ``score_ratio`` (log of the target's mean distance to the others
  over its proxy's: below 0 only for the order's first system, whose proxy is worse than
  itself), ``first`` (the target is the order's first), ``rover`` (log rover / pWER) and
  ``median`` (log of the median pWER against every other system over pWER).

Figures: mean |estimate − WER| over cells and the worst domain's excess over raw, then over
the 17 datasets with at least 3 systems: the truly best system's mean bias and |error|,
whether it is ranked first, and whether the true top two are in the true order.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
from omegaconf import OmegaConf
from rapidfuzz.distance import Levenshtein
from sklearn.linear_model import Ridge

from werest.features.agreement import PANEL_SIZE, pairwise_agreement
from werest.features.proxy import sample_utterances
from werest.formatting import markdown_table
from werest.model.training import domain_of, load_sources
from werest.text import AUTO, normalised_columns
from werest.text.scoring import utterance_labels

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "experiments" / "results" / "joint_candidates.md"
MAX_UTTERANCES = 1500
EPS = 0.01  # log(x + EPS): rates near 0 stay finite


def vote(hypotheses: list[list[str]]) -> list[str]:
    """The word-level majority of ``hypotheses`` (best-ranked first: the pivot)."""
    pivot, voters = hypotheses[0], len(hypotheses)
    slots = [Counter({word: 1}) for word in pivot]
    inserted = [Counter() for _ in range(len(pivot) + 1)]
    for hypothesis in hypotheses[1:]:
        seen = [False] * len(pivot)
        for op in Levenshtein.opcodes(pivot, hypothesis):
            if op.tag in ("equal", "replace"):
                a, b = op.src_end - op.src_start, op.dest_end - op.dest_start
                for k in range(min(a, b)):
                    slots[op.src_start + k][hypothesis[op.dest_start + k]] += 1
                    seen[op.src_start + k] = True
                if b > a:
                    phrase = tuple(hypothesis[op.dest_start + a : op.dest_end])
                    inserted[op.src_start + a][phrase] += 1
            elif op.tag == "insert":
                inserted[op.src_start][tuple(hypothesis[op.dest_start : op.dest_end])] += 1
        for i, was_seen in enumerate(seen):
            if not was_seen:
                slots[i][""] += 1
    out: list[str] = []
    for i in range(len(pivot) + 1):
        if inserted[i] and 2 * sum(inserted[i].values()) > voters:
            out.extend(inserted[i].most_common(1)[0][0])
        if i < len(pivot):
            word = max(slots[i].items(), key=lambda kv: (kv[1], kv[0] == pivot[i]))[0]
            if word:
                out.append(word)
    return out


def load() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict]:
    data = OmegaConf.to_container(OmegaConf.load(ROOT / "conf/data/all_shared.yaml"))
    table = load_sources(data)
    sample = pd.concat(
        sample_utterances(rows, MAX_UTTERANCES, 0) for _, rows in table.groupby("dataset")
    )
    rows = table.merge(sample, on=["dataset", "utt_id"])
    pairs = pairwise_agreement(rows, sample, normaliser=AUTO, n_jobs=2)
    labels = utterance_labels(rows, AUTO, 2)
    texts = normalised_columns(rows, AUTO, ("hypothesis",), n_jobs=2)["hypothesis"]
    rows = rows[["dataset", "utt_id", "system"]].assign(text=texts.to_numpy())
    domains = domain_of(rows["dataset"], data["domains"])
    return rows.assign(domain=domains.to_numpy()), pairs, labels, data


def label_free_order(pairs: pd.DataFrame) -> pd.Series:
    """Each system's mean distance to the others (Σ edits / Σ longer), the order's score."""
    longer = np.maximum(pairs["hyp_words"], pairs["other_words"])
    totals = pairs.assign(longer=longer).groupby(["system", "other"])[["w_dist", "longer"]].sum()
    return (totals["w_dist"] / totals["longer"].clip(lower=1)).groupby("system").mean()


def utterance_rows(rows: pd.DataFrame, pairs: pd.DataFrame, labels: pd.DataFrame):
    """Per target utterance: true errors, errors against the proxy and against the vote."""
    truth = labels.set_index(["dataset", "utt_id", "system"])
    out, scores = [], {}
    for domain, mine in rows.groupby("domain"):
        score = label_free_order(pairs[pairs["dataset"].isin(mine["dataset"].unique())])
        scores[domain] = score
        rank = {name: i for i, name in enumerate(score.sort_values().index)}
        for (dataset, utt_id), group in mine.groupby(["dataset", "utt_id"]):
            group = group.assign(r=group["system"].map(rank)).sort_values("r")
            words = [text.split() for text in group["text"]]
            systems = list(group["system"])
            panel = list(range(min(PANEL_SIZE + 1, len(words))))
            common = vote([words[j] for j in panel[:PANEL_SIZE]]) if len(panel) > 1 else None
            for i, system in enumerate(systems):
                others = [j for j in panel if j != i][:PANEL_SIZE]
                if not others or (dataset, utt_id, system) not in truth.index:
                    continue
                label = truth.loc[(dataset, utt_id, system)]
                if not label["ref_words"]:
                    continue
                consensus = common if i not in panel else vote([words[j] for j in others])
                proxy = words[others[0]]
                out.append(
                    (
                        domain,
                        dataset,
                        system,
                        label["word_errors"],
                        label["ref_words"],
                        Levenshtein.distance(proxy, words[i]),
                        len(proxy),
                        Levenshtein.distance(consensus, words[i]),
                        len(consensus),
                    )
                )
    columns = ["domain", "dataset", "system", "E", "N", "pE", "pN", "cE", "cN"]
    return pd.DataFrame(out, columns=columns), scores


def cells_of(utterances: pd.DataFrame, pairs: pd.DataFrame, scores: dict) -> pd.DataFrame:
    grouped = utterances.groupby(["domain", "dataset", "system"])
    sums = grouped[["E", "N", "pE", "pN", "cE", "cN"]].sum()
    cells = pd.DataFrame(
        {
            "wer": sums["E"] / sums["N"],
            "pwer": sums["pE"] / sums["pN"].clip(lower=1),
            "rover": sums["cE"] / sums["cN"].clip(lower=1),
        }
    ).reset_index()
    per_pair = pairs.groupby(["dataset", "system", "other"])[["w_dist", "other_words"]].sum()
    median = (
        (per_pair["w_dist"] / per_pair["other_words"].clip(lower=1))
        .groupby(["dataset", "system"])
        .median()
    )
    cells = cells.join(median.rename("pwer_median"), on=["dataset", "system"])
    features = []
    for (domain, _), group in cells.groupby(["domain", "dataset"]):
        score = scores[domain].reindex(group["system"]).to_numpy()
        best, second = np.sort(score)[:2] if len(score) > 1 else (score[0], score[0])
        proxy_score = np.where(score == best, second, best)
        features.append(
            pd.DataFrame(
                {"score_ratio": np.log(score / proxy_score), "first": (score == best) * 1.0},
                index=group.index,
            )
        )
    cells = cells.join(pd.concat(features))
    cells["rover_ratio"] = np.log(cells["rover"] + EPS) - np.log(cells["pwer"] + EPS)
    cells["median_ratio"] = np.log(cells["pwer_median"] + EPS) - np.log(cells["pwer"] + EPS)
    cells["target"] = np.log(cells["wer"] + EPS) - np.log(cells["pwer"] + EPS)
    return cells


FEATURES = {
    "score_ratio": ["score_ratio"],
    "first": ["first"],
    "rover": ["rover_ratio"],
    "median": ["median_ratio"],
    "all four": ["score_ratio", "first", "rover_ratio", "median_ratio"],
}


def ridge_lodo(cells: pd.DataFrame, columns: list[str]) -> np.ndarray:
    correction = np.zeros(len(cells))
    for domain in cells["domain"].unique():
        train = (cells["domain"] != domain).to_numpy()
        weight = 1.0 / cells.loc[train].groupby("domain")["domain"].transform("size")
        model = Ridge(alpha=1.0).fit(
            cells.loc[train, columns], cells.loc[train, "target"], sample_weight=weight
        )
        correction[~train] = model.predict(cells.loc[~train, columns])
    return np.exp(np.log(cells["pwer"] + EPS) + correction) - EPS


def figures(cells: pd.DataFrame, column: str) -> dict:
    error = (cells[column] - cells["wer"]).abs()
    raw = (cells["pwer"] - cells["wer"]).abs()
    by_domain = pd.DataFrame({"e": error, "r": raw, "d": cells["domain"]}).groupby("d").mean()
    winners = []
    for _, group in cells.groupby("dataset"):
        if len(group) < 3:
            continue
        group = group.sort_values("wer")
        best, second = group.iloc[0], group.iloc[1]
        winners.append(
            {
                "bias": best[column] - best["wer"],
                "first": group[column].idxmin() == best.name,
                "top_two": best[column] < second[column],
            }
        )
    w = pd.DataFrame(winners)
    return {
        "candidate": column,
        "mean |err| (pts)": f"{100 * error.mean():.2f}",
        "× raw": f"{error.mean() / raw.mean():.2f}",
        "worst domain excess (pts)": f"{100 * (by_domain['e'] - by_domain['r']).max():.2f}",
        "best's bias (pts)": f"{100 * w['bias'].mean():+.2f}",
        "best's |err| (pts)": f"{100 * w['bias'].abs().mean():.2f}",
        "best first": f"{w['first'].mean():.0%}",
        "top two in order": f"{w['top_two'].mean():.0%}",
    }


def main() -> int:
    rows, pairs, labels, _ = load()
    utterances, scores = utterance_rows(rows, pairs, labels)
    cells = cells_of(utterances, pairs, scores)
    results = [figures(cells, "pwer"), figures(cells, "rover")]
    for name, columns in FEATURES.items():
        column = f"ridge[{name}]"
        cells[column] = ridge_lodo(cells, columns)
        results.append(figures(cells, column))
    winners = cells.sort_values("wer").groupby("dataset").head(1)
    datasets = cells.groupby("dataset")["system"].transform("size") >= 3
    lines = [
        "# Joint candidates, each alone, leave one domain out (corpus level)",
        "",
        "Written by `python experiments/joint_candidates.py` (see its docstring for each "
        f"candidate). {len(cells)} cells, {cells['domain'].nunique()} domains; the winner "
        f"figures over the {int(cells[datasets]['dataset'].nunique())} datasets with at least "
        "3 systems.",
        "",
        markdown_table(pd.DataFrame(results)),
        "",
        "## The truly best system of each dataset",
        "",
        "Its place in the label-free order (0: closest to every other system, the only one "
        "whose proxy is worse than itself), its true WER, raw pWER and the vote's.",
        "",
        markdown_table(
            winners[datasets.loc[winners.index]].assign(
                first_in_order=lambda f: f["first"].map({1.0: "yes", 0.0: "no"}),
                **{
                    c: (lambda f, c=c: f[c].map(lambda v: f"{100 * v:.2f}"))
                    for c in ("wer", "pwer", "rover")
                },
            )[["domain", "dataset", "system", "first_in_order", "wer", "pwer", "rover"]]
        ),
        "",
    ]
    OUT.write_text("\n".join(lines), encoding="utf-8")
    print(OUT.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
