"""``werest leaderboard … labels=L``: which system is best per dataset, on the leaderboard
(:func:`decide_board`): the ``winner.json`` entries ``werest estimate labels=L`` writes for
the same sheets, and the decision after each of them (:func:`werest.estimation.rounds.
label_rounds`), which the console, ``leaderboard.md`` and the page lead with.

It takes the :class:`werest.estimation.loop.LabelRound` the command (or :func:`werest.api.
leaderboard`) built and imports no estimate of its own (docs/architecture.md, the import
chain)."""

from __future__ import annotations

from werest.estimation.rounds import label_rounds
from werest.ranking.board import Leaderboard


def decide_board(result: Leaderboard, loop) -> None:
    """Set ``result.decisions`` (``loop.decide()``: ``winner.json``'s entries),
    ``result.rounds`` (one row per dataset and sheet) and ``result.label_notes`` (what reading
    the sheets noticed) from ``loop``, a :class:`~werest.estimation.loop.LabelRound` that has
    read its sheets."""
    result.decisions = loop.decide()
    result.rounds = label_rounds(loop, result.decisions)
    result.label_notes = list(loop.notes)
