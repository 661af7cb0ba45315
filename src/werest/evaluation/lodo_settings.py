"""``lodo:`` of ``werest evaluate experiment=lodo`` (:class:`LodoSettings`), declared once
(:mod:`werest.settings`) in a module that imports nothing heavy, as the evaluation stage's
other sections are (:mod:`werest.evaluation.settings`): a module of its own because it holds
the model's conformal interval (:class:`werest.model.settings.ConformalInterval`), which the
other evaluation sections, read by the leaderboard, do not need."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from werest.features.settings import PANEL_SIZE
from werest.model.settings import ConformalInterval, numeric_bins
from werest.settings import Section, as_names, param, same_as


@dataclass(frozen=True)
class LodoSettings(Section):
    """``lodo:`` of ``werest evaluate experiment=lodo`` (built by its ``_target_``;
    :func:`werest.evaluation.lodo.evaluate_lodo` holds out with it): which domains to hold out
    and the conformal interval's coverage and offset.

    Parameters
    ----------
    held_out : the domains to hold out, one name or several (None: every domain with two or
        more systems).
    level, offset, bins, min_cells : see :class:`werest.model.settings.ConformalInterval`.
    panel : the held-out systems are compared with this many best-ranked others each, as
        ``werest estimate`` compares them (:class:`werest.features.agreement.Panel`); None:
        with every other system.
    """

    SECTION: ClassVar[str] = "lodo"

    held_out: tuple[str, ...] | None = param(
        None, "domains to hold out (null: every domain with two or more systems)"
    )
    level: float = same_as(ConformalInterval, "level")
    offset: float = same_as(ConformalInterval, "offset")
    bins: tuple[float, ...] = same_as(ConformalInterval, "bins")
    min_cells: int = same_as(ConformalInterval, "min_cells")
    panel: int | None = param(
        PANEL_SIZE,
        "held-out systems compared with their N best-ranked others (null: every other)",
        minimum=1,
    )

    def __post_init__(self) -> None:
        if self.held_out is not None:  # a config gives one name or a list of names
            object.__setattr__(self, "held_out", as_names(self.held_out) or None)
        object.__setattr__(self, "bins", numeric_bins(self.bins, self.SECTION))
        super().__post_init__()

    @property
    def interval(self) -> ConformalInterval:
        """The interval the folds' cells get."""
        return ConformalInterval(self.level, self.offset, self.bins, self.min_cells)
