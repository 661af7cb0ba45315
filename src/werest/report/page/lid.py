"""The Language ID tab: accuracy, confidence and confusion per system, and why the tab is
absent when the table cannot have it."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from werest.formatting import number, percent
from werest.report.page.markup import html_table, links

if TYPE_CHECKING:
    from werest.ranking.board import Leaderboard


def lid_tab(result: Leaderboard) -> str:
    from werest.text.lid import confusion_matrix

    lid = result.lid
    accuracy = lid.accuracy.assign(accuracy=lid.accuracy["accuracy"].map(percent))
    parts = [
        '<p class="note">Full data: '
        + links(
            ["lid_accuracy.csv", "lid_confusion.csv", "lid_thresholds.csv", "lid_confidence.csv"]
        )
        + ".</p>",
        "<h3>Accuracy per language (%)</h3>",
        html_table(accuracy, "lid-accuracy"),
    ]
    if not lid.confidence.empty:
        confidence = lid.confidence.copy()
        for column in ("mean_confidence_right", "mean_confidence_wrong"):
            confidence[column] = confidence[column].map(lambda v: number(v, 3))
        thresholds = lid.thresholds.assign(
            coverage=lid.thresholds["coverage"].map(percent),
            accuracy=lid.thresholds["accuracy"].map(percent),
        )
        parts += [
            "<h3>Confidence of right and wrong predictions</h3>",
            html_table(confidence),
            "<h3>Accuracy above a confidence threshold (%), and the share kept</h3>",
            html_table(thresholds),
        ]
    for system in sorted(lid.confusion["system"].unique()):
        matrix = confusion_matrix(lid.confusion, system).reset_index()
        matrix.columns = ["true \\ detected", *map(str, matrix.columns[1:])]
        parts.append(f"<h3>Confusion: {html.escape(str(system))}</h3>")
        parts.append(html_table(matrix, sortable=False))
    return "".join(parts)


def lid_missing(result: Leaderboard) -> str:
    """Why there is no Language ID tab, naming exactly what the table lacks."""
    from werest.text.lid import DETECTED, TRUE

    columns = set(result.utterances.columns) if result.utterances is not None else set()
    lacking = [c for c in (TRUE, DETECTED) if c not in columns]
    if not lacking:
        return f"no row has both <code>{TRUE}</code> and <code>{DETECTED}</code> values"
    have = [c for c in (TRUE, DETECTED) if c in columns]
    return (
        (f"the table has <code>{have[0]}</code> but no " if have else "the table has no ")
        + " and no ".join(f"<code>{c}</code>" for c in lacking)
        + " column"
    )
