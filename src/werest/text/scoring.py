"""Score systems against human references: per-utterance counts, corpus WER/CER with CIs.

``werest score input=table.parquet output_dir=DIR`` writes ``DIR/scores.csv`` (one row per
dataset and system), ``DIR/utterances.csv`` (one row per labelled utterance and system: WER,
CER, S/D/I, lengths, reference and hypothesis), ``DIR/ranking.json`` (the proxy ranking, see
:mod:`werest.features.proxy`), ``DIR/resources.json`` (the run's CPU %, memory and GPU use:
:mod:`werest.resources`) and the run's config, and prints the table.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from werest import logs
from werest.columns import KEY, UTTERANCE
from werest.errors import InputError
from werest.formatting import percent, percent_interval, plural
from werest.resampling import bootstrap_ci
from werest.text.counting import corpus_rate, count_errors, error_rate
from werest.text.normalise import AUTO, Normaliser, normalised_columns, scoring_unit

log = logging.getLogger(__name__)


def score_utterances(
    table: pd.DataFrame, normaliser: Normaliser = AUTO, *, n_jobs: int = 1
) -> pd.DataFrame:
    """Per-utterance word and character errors of every labelled row.

    Returns
    -------
    One row per labelled (dataset, utt_id, system): the key, word counts ``substitutions,
    deletions, insertions, hits, ref_words, hyp_words, word_errors, wer``, and character
    counts ``char_errors, ref_chars, cer`` (after normalisation; spaces count in CER).
    """
    if "reference" not in table.columns:
        raise InputError(
            "the table has no 'reference' column: nothing to score against", column="reference"
        )
    labelled = table[table["reference"].notna()]
    if labelled.empty:
        raise InputError("no row has a reference: nothing to score", column="reference")
    text = normalised_columns(labelled, normaliser, n_jobs=n_jobs)
    words = count_errors(text["reference"], text["hypothesis"], "word", n_jobs=n_jobs)
    chars = count_errors(text["reference"], text["hypothesis"], "char", n_jobs=n_jobs)
    scored = labelled[["dataset", "utt_id", "system"]].reset_index(drop=True)
    scored[["substitutions", "deletions", "insertions", "hits"]] = words[
        ["substitutions", "deletions", "insertions", "hits"]
    ].to_numpy()
    scored["ref_words"] = words["reference_length"].to_numpy()
    scored["hyp_words"] = words["hypothesis_length"].to_numpy()
    scored["word_errors"] = (
        words["substitutions"] + words["deletions"] + words["insertions"]
    ).to_numpy()
    scored["wer"] = error_rate(scored["word_errors"], scored["ref_words"])
    scored["char_errors"] = (
        chars["substitutions"] + chars["deletions"] + chars["insertions"]
    ).to_numpy()
    scored["ref_chars"] = chars["reference_length"].to_numpy()
    scored["cer"] = error_rate(scored["char_errors"], scored["ref_chars"])
    scored["unit"] = scoring_units(labelled, normaliser).to_numpy()
    return scored


#: What :func:`score_utterances` reads of a row besides its key: the texts, and the language
#: that chooses the row's normaliser and unit under ``auto`` (and ``whisper_basic``).
SCORED_COLUMNS = ("hypothesis", "reference", "language")


def score_against(
    table: pd.DataFrame, references: pd.DataFrame, normaliser: Normaliser, *, n_jobs: int = 1
) -> pd.DataFrame:
    """:func:`score_utterances` of every system's hypothesis of each utterance that
    ``references`` (``dataset, utt_id, reference``) labels, against that reference instead of
    the table's own: a few labels (``werest estimate labels=…``, the leaderboard's) are scored
    as ``werest score`` scores the same references in the table, each row under its own
    language's normaliser and unit."""
    kept = [c for c in (*KEY, *SCORED_COLUMNS) if c in table.columns and c != "reference"]
    rows = table[kept].merge(references[[*UTTERANCE, "reference"]], on=UTTERANCE)
    return score_utterances(rows, normaliser, n_jobs=n_jobs)


def scoring_units(table: pd.DataFrame, normaliser: Normaliser) -> pd.Series:
    """Per row, the unit its WER counts: ``character`` for zh/ja/th… rows (see
    :func:`werest.text.scoring_unit`), else ``word``."""
    if "language" not in table.columns:
        return pd.Series("word", index=table.index, dtype="str")
    languages = table["language"].astype("object")
    unit = {lang: scoring_unit(lang, normaliser) for lang in languages.dropna().unique()}
    return languages.map(unit).fillna("word").astype("str")


def dataset_units(units: pd.Series, datasets: pd.Series) -> dict[str, str]:
    """One unit per dataset: ``word``, ``character``, or ``mixed``."""
    found = pd.DataFrame({"dataset": datasets.to_numpy(), "unit": units.to_numpy()})
    per = (
        found.drop_duplicates()
        .groupby("dataset")["unit"]
        .agg(lambda values: values.iat[0] if len(values) == 1 else "mixed")
    )
    return per.to_dict()


def utterance_order(rows: pd.DataFrame) -> np.ndarray:
    """A canonical sort key of each row's utterance: a stable 64-bit hash of ``utt_id``
    (``_order`` when the rows carry it precomputed instead of ``utt_id``)."""
    if "_order" in rows.columns:
        return rows["_order"].to_numpy()
    return pd.util.hash_array(rows["utt_id"].to_numpy(dtype=object))


def corpus_scores(
    scored: pd.DataFrame, *, n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95
) -> pd.DataFrame:
    """Corpus WER and CER per dataset and system (Σ errors / Σ reference units) with CIs.

    Each group's utterances are taken in a canonical order (:func:`utterance_order`), so the
    seeded bootstrap resamples the same arrays whatever the row order or the partitioning of
    the input: a partitioned run (:mod:`werest.partition.score`, rows carrying ``_order``
    instead of ``utt_id``) gives the same intervals as the in-memory run.
    """
    rows = []
    groups = scored.groupby(["dataset", "system"], sort=True)
    for (dataset, system), group in logs.track(groups, desc="bootstrap", unit="cell"):
        group = group.iloc[np.argsort(utterance_order(group), kind="stable")]
        (wer_low, wer_high), (cer_low, cer_high) = (
            bootstrap_ci(
                group[errors],
                group[length],
                n_resamples=n_resamples,
                seed=seed,
                confidence=confidence,
            )
            for errors, length in (("word_errors", "ref_words"), ("char_errors", "ref_chars"))
        )
        units = set(group["unit"]) if "unit" in group else {"word"}
        rows.append(
            {
                "dataset": dataset,
                "system": system,
                "unit": units.pop() if len(units) == 1 else "mixed",
                "n_utterances": len(group),
                "ref_words": int(group["ref_words"].sum()),
                "wer": corpus_rate(group["word_errors"], group["ref_words"]),
                "wer_ci_low": wer_low,
                "wer_ci_high": wer_high,
                "cer": corpus_rate(group["char_errors"], group["ref_chars"]),
                "cer_ci_low": cer_low,
                "cer_ci_high": cer_high,
                "substitutions": int(group["substitutions"].sum()),
                "deletions": int(group["deletions"].sum()),
                "insertions": int(group["insertions"].sum()),
                "empty_hypotheses": int((group["hyp_words"] == 0).sum()),
            }
        )
    return pd.DataFrame(rows)


def format_scores(scores: pd.DataFrame) -> str:
    """A readable table of corpus scores (percentages)."""
    view = pd.DataFrame(
        {
            "dataset": scores["dataset"],
            "system": scores["system"],
            "utts": scores["n_utterances"],
            "WER %": [
                f"{percent(w)}{' (chars)' if u == 'character' else ''}"
                for w, u in zip(
                    scores["wer"], scores.get("unit", ["word"] * len(scores)), strict=True
                )
            ],
            "95% CI": [
                percent_interval(lo, hi)
                for lo, hi in zip(scores["wer_ci_low"], scores["wer_ci_high"], strict=True)
            ],
            "CER %": scores["cer"].map(percent),
        }
    )
    return "\n".join([view.to_string(index=False), *silent_system_warnings(scores)])


def silent_system_warnings(scores: pd.DataFrame) -> list[str]:
    """A ``warning:`` line (as ``werest estimate`` prints its guards') for each (dataset,
    system) of corpus scores whose every hypothesis is empty: its 100 % WER says the run
    failed, not how well the system transcribes."""
    if "empty_hypotheses" not in scores:
        return []
    silent = scores[
        (scores["n_utterances"] > 0) & (scores["empty_hypotheses"] == scores["n_utterances"])
    ]
    return [
        f"warning: {row.dataset}: system {row.system} returned nothing on every utterance "
        f"({plural(int(row.n_utterances), 'utterance')}, every hypothesis empty): its WER says "
        "the run failed, not how well it transcribes; check its output (a failed job, the "
        "wrong hypothesis column) or leave it out"
        for row in silent.itertuples(index=False)
    ]


def readable_scores(scored: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """Per-utterance scores (:func:`score_utterances`) with the reference and hypothesis as
    written, for ``werest score``'s ``utterances.csv``."""
    key = KEY
    text = table[[*key, "reference", "hypothesis"]]
    out = scored.merge(text, on=key, how="left")
    first = [*key, "wer", "cer", "reference", "hypothesis"]
    return out[first + [c for c in out.columns if c not in first]]


LABELS = ("wer", "cer", "ref_words", "word_errors", "ref_chars", "char_errors")


def utterance_labels(table: pd.DataFrame, normaliser: Normaliser, n_jobs: int = 1) -> pd.DataFrame:
    """Per (dataset, utt_id, system): utterance WER, CER and the counts behind them."""
    scored = score_utterances(table, normaliser, n_jobs=n_jobs)
    return scored[[*KEY, *LABELS]]
