"""The leaderboard's compact per-row frame (:func:`werest.ranking.leaderboard.utterance_rows`):
its canonical order and its estimated and labelled rows (the corpus WER of some of its rows as
a ratio sample, which the ranking, the neighbour tests and the fairness audits resample:
:func:`werest.estimation.corpus.rate_sample`).
"""

from __future__ import annotations

import pandas as pd

from werest.features.agreement import STATUS_OK

#: An utterance in the per-row frame: its dataset and a 64-bit hash of its ``utt_id``
#: (:func:`werest.text.scoring.utterance_order`), so no Python string per row is held.
ORDER = "_order"
UTT = ["dataset", ORDER]
#: The canonical order of the per-row frame: every table is computed from rows in this
#: order, so an in-memory and a partitioned run sum and resample the same arrays.
ROW_ORDER = ["dataset", "system", ORDER]


def row_categories(rows: pd.DataFrame) -> tuple[str, ...]:
    """The category columns of the per-row frame."""
    return tuple(c for c in rows.columns if isinstance(rows[c].dtype, pd.CategoricalDtype))


def canonical(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows in the canonical order (:data:`ROW_ORDER`; categories sort as their names)."""
    return rows.sort_values(ROW_ORDER, kind="stable", ignore_index=True)


def estimated(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows whose WER was estimated (status ok)."""
    return rows[rows["status"] == STATUS_OK]


def labelled(rows: pd.DataFrame) -> pd.DataFrame | None:
    """The rows with a reference of at least one word; None when the input has none."""
    if "ref_words" not in rows.columns:
        return None
    return rows[rows["ref_words"] > 0]
