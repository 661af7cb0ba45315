"""The page's header: what its numbers are (:func:`subtitle`) and which systems may be the
best (:func:`contenders`)."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

from werest.formatting import plural
from werest.report.page.board import has_truth

if TYPE_CHECKING:
    from werest.ranking.board import Leaderboard


def subtitle(result: Leaderboard) -> str:
    """What the page's numbers are, as the data says: estimated without references; beside
    the true WER where references exist; prediction-powered with labels."""
    n_systems = result.board["system"].nunique()
    n_datasets = result.datasets["dataset"].nunique()
    text = f"{plural(n_systems, 'system')}, {plural(n_datasets, 'dataset')}; "
    board = result.board
    if "method" in board and (board["method"] != "zero_label").any():
        labels = int(board["n_labelled"].max())
        text += (
            "WER estimated by werest, prediction-powered: the label-free predictions corrected "
            f"with up to {labels:,} transcribed utterances per system (where a system has "
            "enough labels)"
        )
    else:
        text += "WER estimated without references by werest"
    if has_truth(board):
        text += ", beside the true WER from the references"
    return text + "."


def contenders(head: str, lines: Sequence[str]) -> str:
    """The page's lead: which systems may be the best, per dataset (``head`` and ``lines``:
    :data:`werest.report.leaderboard_report.CONTENDERS_HEAD` and its ``contender_lines``)."""
    items = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
    return f'<div class="contenders"><p>{html.escape(head)}</p><ul>{items}</ul></div>'
