"""The zero-label shortlist of which system may be best (:func:`shortlist`): the rule
``winner.json``, ``werest sample strategy=winner`` and the leaderboard's contender lines share.

A small module of its own, below :mod:`werest.estimation.winner` (which decides among the
contenders with labels), so that what only presents the contenders
(:mod:`werest.report.leaderboard_report`) need not import the label loop.
"""

from __future__ import annotations

import math

import pandas as pd

#: The shortlist's rule (:func:`shortlist`): the contenders are the ⌈share · S⌉ systems with
#: the lowest zero-label estimates. Calibrated leave one domain out by ``werest evaluate
#: experiment=winner`` (experiments/results/winner.md): the smallest share that held the true
#: best in 90 % of the datasets of the domains not held out, over every held-out domain.
SHORTLIST_SHARE = 0.55


def shortlist(records: list[dict], share: float = SHORTLIST_SHARE) -> dict[str, list[str]]:
    """Per dataset, the contenders: the ⌈``share`` · S⌉ systems (at least one) with the
    lowest zero-label estimates, ties in name order; every system where none has an
    estimate. ``records``: ``summary.json``'s rows (``dataset, system, estimated_wer``)."""
    frame = pd.DataFrame(records)
    out: dict[str, list[str]] = {}
    if frame.empty:
        return out
    for dataset, rows in frame.groupby("dataset", sort=True):
        rows = rows.assign(estimate=pd.to_numeric(rows["estimated_wer"], errors="coerce"))
        known = rows[rows["estimate"].notna()].sort_values(["estimate", "system"])
        if known.empty:
            out[str(dataset)] = sorted(map(str, rows["system"]))
            continue
        size = max(1, math.ceil(share * len(rows) - 1e-9))
        out[str(dataset)] = sorted(map(str, known["system"].iloc[:size]))
    return out
