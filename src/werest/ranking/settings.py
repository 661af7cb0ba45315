"""The ranking stage's section, declared once (:mod:`werest.settings`) in a module that imports
nothing heavy, so ``werest leaderboard --help`` reads its defaults, rules and help."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from werest.estimation.settings import EstimateOptions
from werest.evaluation.settings import FairnessSettings
from werest.settings import Bootstrap, Section, n_jobs_param, param, same_as

if TYPE_CHECKING:
    from werest.text.normalise import Normaliser


@dataclass(frozen=True)
class LeaderboardOptions(Section):
    """What ``werest leaderboard`` is asked: the section
    :func:`werest.partition.leaderboard.leaderboard_input` takes (the command builds it from
    its settings, :func:`werest.leaderboard` from its arguments).

    Parameters
    ----------
    bootstrap : the intervals' and paired tests' resamples, level and seed (the seed also
        draws the guards' sample).
    fairness : the audits (None: none).
    datasets, exclude_datasets : the datasets kept (None: all) and left out.
    normaliser : the one a user asked for (None: the models' own, which it may only restate).
    ranking, system_order : the proxy order, as in ``werest estimate``
        (:func:`werest.estimation.estimate.choose_ranking`; default: label-free).
    chunk_utterances : utterances per processing chunk (a memory bound).
    n_jobs : worker processes of an in-memory run (each partition of a partitioned run takes
        one).
    """

    bootstrap: Bootstrap = Bootstrap()
    fairness: FairnessSettings | None = None
    datasets: str | list[str] | None = param(None, "keep only these datasets (null: all)")
    exclude_datasets: str | list[str] | None = param((), "leave these datasets out")
    normaliser: Normaliser | None = same_as(EstimateOptions, "normaliser")
    ranking: str | Path | None = param(
        None,
        "proxy order as in werest estimate: null = label-free; model; references; or a "
        "ranking.json",
    )
    system_order: list[str] | None = param(
        None, "your own order, best first, e.g. [a,b,c]; unlisted systems follow, label-free"
    )
    chunk_utterances: int = same_as(EstimateOptions, "chunk_utterances")
    n_jobs: int = n_jobs_param()

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.ranking, Path):  # ``model`` and ``references`` are names
            object.__setattr__(self, "ranking", str(self.ranking))
