"""The model stage's sections, declared once (:mod:`werest.settings`) in a module that imports
nothing heavy, so ``werest <command> --help`` reads their defaults, rules and help."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, ClassVar

from werest.errors import ConfigError
from werest.settings import Section, n_jobs_param, param

if TYPE_CHECKING:
    from werest.text.normalise import Normaliser

#: ``proxies:`` of ``werest train`` and ``werest evaluate``: how training rows' proxies are chosen
RANKED_PROXIES = "ranking"
LABEL_FREE_PROXIES = "label_free"
PROXY_CHOICES = (LABEL_FREE_PROXIES, RANKED_PROXIES)


def numeric_bins(bins, block: str) -> tuple[float, ...]:
    """``bins`` as a tuple of floats, or a ConfigError naming ``block``."""
    try:
        edges = tuple(float(edge) for edge in (bins or ()))
    except (TypeError, ValueError):
        raise ConfigError(f"{block}.bins must be a list of numbers, got {bins!r}") from None
    if any(b <= a for a, b in pairwise(edges)):
        raise ConfigError(f"{block}.bins must increase strictly, got {list(edges)}")
    return edges


@dataclass(frozen=True)
class ConformalInterval(Section):
    """The interval's coverage ``level`` and scale ``offset`` (``werest train``'s ``interval:``
    block builds it by its ``_target_``; ``lodo:`` of ``werest evaluate`` holds the same two;
    :mod:`werest.model.intervals` computes with it).

    The offset must be above 0: a cell estimated at 0 % would otherwise divide by zero.
    ``bins`` are the increasing aWER edges of the Mondrian bins (empty: one bin).
    """

    SECTION: ClassVar[str] = "interval"

    level: float = param(0.95, "the interval's coverage", minimum=0, maximum=1, closed="neither")
    offset: float = param(
        0.5, "the scale: aWER + offset (above 0: no division by 0)", minimum=0, closed="neither"
    )
    bins: tuple[float, ...] = param((), "Mondrian bins: increasing aWER edges (empty: one bin)")
    min_cells: int = param(
        20, "a bin with fewer calibration cells takes every cell's quantiles", minimum=1
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "bins", numeric_bins(self.bins, self.SECTION))
        super().__post_init__()


@dataclass(frozen=True)
class TrainingOptions(Section):
    """How training rows are built and a model fitted on them: the section
    :func:`werest.model.training.train`, :func:`werest.evaluation.lodo.evaluate_lodo` and
    :func:`werest.evaluation.four_cases.evaluate_four_cases` take (``werest train`` and
    ``werest evaluate`` build it from their settings of the same names).

    Parameters
    ----------
    normaliser : of labels and features (a name becomes its :class:`werest.text.Normaliser`).
    two_system_views : also train on each row seen as if only it and its proxy existed
        (:func:`werest.model.training.training_frame`).
    proxies : how the training rows' proxies are chosen: ``label_free`` (as ``werest
        estimate`` picks them for a user, per domain) or ``ranking`` (the best system on the
        training labels).
    seed : the balanced sample's seed (:func:`werest.model.training.prepare_training_rows`),
        and an evaluation's bootstrap's.
    n_jobs : worker processes for normalisation and alignment.
    """

    normaliser: Normaliser | str = param("auto", "of labels and features")
    two_system_views: bool = param(
        True, "also train on each row seen as if only it and its proxy existed"
    )
    proxies: str = param(
        LABEL_FREE_PROXIES,
        "training rows' proxies: label_free (as werest estimate picks them for a user, per "
        "domain) | ranking (the best system on the training labels)",
        choices=PROXY_CHOICES,
    )
    seed: int = param(0, "the balanced sample's seed", minimum=0)
    n_jobs: int = n_jobs_param()

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.normaliser, str):
            from werest.text.normalise import as_normaliser

            object.__setattr__(self, "normaliser", as_normaliser(self.normaliser))
