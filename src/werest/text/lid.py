"""Language-identification quality: where a table has the true ``language`` of each utterance
and the system's ``detected_language`` (multilingual models detect it before decoding), with
``detected_language_probability`` when the model reports its confidence.

Per system (all datasets pooled):

* accuracy, overall and per true language (``n``, ``correct``, ``accuracy``);
* the confusion matrix: rows = true language, columns = detected language, utterance counts;
* the mean confidence of right and of wrong predictions (a calibrated detector is much less
  sure when it is wrong);
* the selective accuracy at confidence thresholds t: among utterances with confidence ≥ t,
  the share detected right, and the *coverage* (the share of utterances kept), the trade-off
  a pipeline that falls back below t would make.

Codes are compared after normalisation: lower case, Whisper's ``<|en|>`` token form stripped,
the primary subtag of a BCP-47 tag (``en-US`` → ``en``), and English language names
(``english``) mapped to ISO 639-1 for the common ones, so ``mubench``'s ``language`` (``en``)
and a detector's ``<|en|>`` or ``English`` agree. A row missing either value is left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

TRUE, DETECTED, CONFIDENCE = "language", "detected_language", "detected_language_probability"
THRESHOLDS = (0.0, 0.5, 0.7, 0.8, 0.9, 0.95)

_NAMES = {
    "english": "en", "spanish": "es", "french": "fr", "german": "de", "italian": "it",
    "portuguese": "pt", "turkish": "tr", "vietnamese": "vi", "chinese": "zh", "mandarin": "zh",
    "arabic": "ar", "malayalam": "ml", "hindi": "hi", "japanese": "ja", "korean": "ko",
    "russian": "ru", "dutch": "nl", "swahili": "sw", "yoruba": "yo", "hausa": "ha",
    "igbo": "ig",
}  # fmt: skip


@dataclass
class LidReport:
    """Per system: ``accuracy`` (per language and ``all``), ``confusion`` (long form:
    system, language, detected, n), ``thresholds`` (system, threshold, coverage, accuracy)
    and ``confidence`` (system, mean confidence right / wrong)."""

    accuracy: pd.DataFrame
    confusion: pd.DataFrame
    thresholds: pd.DataFrame
    confidence: pd.DataFrame


def normalise_language(values: pd.Series) -> pd.Series:
    """Comparable language codes (see the module doc); missing stays missing."""
    text = values.astype("string").str.strip().str.lower()
    text = text.str.replace(r"^<\|(.*)\|>$", r"\1", regex=True)
    text = text.str.split(r"[-_]", n=1).str[0]
    return text.map(lambda v: _NAMES.get(v, v) if isinstance(v, str) else v).replace("", pd.NA)


def has_lid(table: pd.DataFrame) -> bool:
    """Whether the table holds both the true and the detected language somewhere."""
    if not {TRUE, DETECTED} <= set(table.columns):
        return False
    return bool((table[TRUE].notna() & table[DETECTED].notna()).any())


def lid_report(table: pd.DataFrame, thresholds: Sequence[float] = THRESHOLDS) -> LidReport:
    """Accuracy, confusion matrix, confidence and selective accuracy per system."""
    rows = table.assign(
        _true=normalise_language(table[TRUE]), _detected=normalise_language(table[DETECTED])
    ).dropna(subset=["_true", "_detected"])
    rows = rows.assign(_right=rows["_true"] == rows["_detected"])
    accuracy, confusion, selective, confidence = [], [], [], []
    for system, mine in rows.groupby("system", sort=True):
        accuracy.append(_accuracy(mine).assign(system=system))
        counts = mine.groupby(["_true", "_detected"]).size().rename("n").reset_index()
        confusion.append(
            counts.rename(columns={"_true": "language", "_detected": "detected"}).assign(
                system=system
            )
        )
        if CONFIDENCE in mine and mine[CONFIDENCE].notna().any():
            scored = mine[mine[CONFIDENCE].notna()]
            score = scored[CONFIDENCE].astype(float)
            confidence.append(
                {
                    "system": system,
                    "n": len(scored),
                    "mean_confidence_right": float(score[scored["_right"]].mean()),
                    "mean_confidence_wrong": float(score[~scored["_right"]].mean()),
                }
            )
            for t in thresholds:
                kept = scored[score >= t]
                selective.append(
                    {
                        "system": system,
                        "threshold": t,
                        "coverage": len(kept) / len(scored),
                        "accuracy": float(kept["_right"].mean()) if len(kept) else np.nan,
                    }
                )
    return LidReport(
        _frame(accuracy, ["system", "language", "n", "correct", "accuracy"]),
        _frame(confusion, ["system", "language", "detected", "n"]),
        pd.DataFrame(selective, columns=["system", "threshold", "coverage", "accuracy"]),
        pd.DataFrame(
            confidence,
            columns=["system", "n", "mean_confidence_right", "mean_confidence_wrong"],
        ),
    )


def _accuracy(rows: pd.DataFrame) -> pd.DataFrame:
    per = rows.groupby("_true")["_right"].agg(n="size", correct="sum").reset_index()
    per = per.rename(columns={"_true": "language"})
    total = pd.DataFrame(
        [{"language": "all", "n": len(rows), "correct": int(rows["_right"].sum())}]
    )
    both = pd.concat([per, total], ignore_index=True)
    return both.assign(accuracy=both["correct"] / both["n"])


def _frame(parts: list[pd.DataFrame], columns: list[str]) -> pd.DataFrame:
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True)[columns]


def confusion_matrix(confusion: pd.DataFrame, system: str) -> pd.DataFrame:
    """One system's confusion matrix, true languages as rows, detected as columns."""
    mine = confusion[confusion["system"] == system]
    return mine.pivot_table(
        index="language", columns="detected", values="n", aggfunc="sum", fill_value=0
    )
