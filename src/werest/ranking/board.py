"""What ``werest leaderboard`` computes, as one object (:class:`Leaderboard`).

A module of its own, below the statistics that fill it (:mod:`werest.ranking.leaderboard`), so
that what presents it (:mod:`werest.report.leaderboard_report`, :mod:`werest.report.webpage`)
reads its type without importing the estimate behind it: the import chain from the commands
to the page stays short (docs/architecture.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from werest.text.lid import LidReport


@dataclass
class Leaderboard:
    """Everything ``werest leaderboard`` computes."""

    board: pd.DataFrame
    datasets: pd.DataFrame
    pairs: pd.DataFrame
    descriptive: pd.DataFrame
    agreement: dict
    fairness: dict[str, pd.DataFrame]
    lid: LidReport | None = None
    #: every row, compact (:func:`werest.ranking.leaderboard.utterance_rows`)
    utterances: pd.DataFrame | None = None
    #: the guards' warnings (:mod:`werest.estimation.guards`), as in werest estimate
    warnings: list[dict] = field(default_factory=list)
    #: with ``labels=``: which system is best per dataset, ``winner.json``'s entries (as
    #: ``werest estimate labels=`` writes them: :meth:`werest.estimation.loop.LabelRound.decide`)
    decisions: list[dict] | None = None
    #: with ``labels=``: the decision after each sheet, one row per (dataset, round)
    #: (:func:`werest.estimation.rounds.label_rounds`)
    rounds: pd.DataFrame | None = None
    #: what reading the sheets noticed (a sheet given twice...), said under the decision
    label_notes: list[str] = field(default_factory=list)
