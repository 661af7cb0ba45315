"""The Paired tests tab: the neighbour tests of the ranking."""

from __future__ import annotations

import pandas as pd

from werest.report.page.markup import html_table, links


def pairs_tab(pairs: pd.DataFrame, view: pd.DataFrame) -> str:
    """The Paired tests tab: the leaderboard's ``pairs`` as ``view`` shows them
    (:func:`werest.report.leaderboard_report.pairs_view`)."""
    return (
        '<p class="note">Each pair of neighbours A (above) and B in the estimated ranking: '
        + (
            "the prediction-powered A − B on the same labelled utterances, with its paired 95 % "
            "interval; the verdict names a better system only where the interval excludes 0."
            if "verdict" in pairs
            else "the estimated A − B in WER points with its 95 % interval, calibrated leave one "
            "domain out on the differences of systems of one dataset; the verdict names a better "
            "system only where the interval excludes 0."
        )
        + " Full data: "
        + links(["pairs.csv"])
        + ".</p>"
        + html_table(view, "pairs")
    )
