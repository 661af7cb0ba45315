"""The estimation stage's sections, declared once (:mod:`werest.settings`) in a module that
imports nothing heavy, so ``werest <command> --help`` reads their defaults, rules and help; and
the label loop's defaults a config option names (``${library:...}``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from werest.settings import MAX_RESAMPLES, Section, n_jobs_param, param

if TYPE_CHECKING:
    from werest.text.normalise import Normaliser

#: utterances per processing chunk: the memory bound of the features stage (``chunk_utterances``)
CHUNK_UTTERANCES = 50_000
#: What a system's missing hypothesis for an utterance of its dataset counts as.
MISSING_HYPOTHESES = ("exclude", "deletions")
#: Interval methods (:func:`werest.estimation.ppi.estimate_draws`).
METHODS = ("normal", "t", "bootstrap")

#: The decision's error level: at most this share of stops name a system more than the
#: margin worse than the true best.
ALPHA = 0.05
#: ``good``: the leader is at most this many points of WER worse than the best, or
#: :data:`RELATIVE_MARGIN` of its WER where that is larger
MARGIN = 1.0
RELATIVE_MARGIN = 0.05
#: how :func:`werest.estimation.decision.pair_bounds` bounds (``winner.bounds``): ``betting``
#: (the default: valid at every number of labels, the tightest), ``eb`` (valid too, wider at the
#: usual horizon) or ``asymptotic`` (valid only as the draws grow: it assumes they have seen
#: the tail)
BOUNDS = ("betting", "eb", "asymptotic")
#: the decision's terms use the consensus control variate
#: (:func:`werest.estimation.decision.pair_terms`): off, as it measured more labels in
#: `werest evaluate experiment=winner winner.control=true`
CONTROL = False
#: ``strategy=winner``: the share of each draw's probability spread evenly over the
#: utterances: every weight 1 / (N q_i) is at most 1 / u.
WINNER_UNIFORM_SHARE = 0.2


@dataclass(frozen=True)
class EstimateOptions(Section):
    """What ``werest estimate`` is asked: the section
    :func:`werest.partition.estimate.estimate_input` takes (the command builds it from its
    settings, :func:`werest.estimate` from its arguments).

    Parameters
    ----------
    target : one system, a list, or None (every system but the proxy).
    proxy : one proxy for every target (None: the best other system in the proxy order).
    ranking, system_order : the proxy order (:func:`werest.estimation.estimate.choose_ranking`):
        ``model``, ``references``, a ranking.json, or None (label-free, the systems'
        agreement); the user's own order, best first, before the rest.
    normaliser : the one a user asked for (None: the models' own;
        :func:`werest.estimation.estimate.check_normaliser`).
    seed : the seed of the guards' sample and of the bootstrap intervals.
    n_resamples : bootstrap resamples per interval.
    missing_hypotheses : ``exclude`` (such rows are absent, and a warning says the systems
        are compared on different utterance sets) or ``deletions`` (a system's missing
        hypothesis for an utterance of a dataset it ran on counts as an empty output:
        :func:`werest.estimation.guards.count_missing_as_deletions`).
    chunk_utterances : utterances per processing chunk (a memory bound).
    n_jobs : worker processes of an in-memory run (each partition of a partitioned run takes
        one).
    """

    target: str | list[str] | None = param(
        None, "a system, a list [a,b], or null: every system except the proxy"
    )
    proxy: str | None = param(
        None, "one proxy for every target; default: the best other system by `ranking`"
    )
    ranking: str | Path | None = param(
        None,
        "proxy order: null = label-free (the systems' agreement, names unused); model = the "
        "model's saved ranking; references = the input's references; or a ranking.json from "
        "werest score",
        as_text=True,  # ``model`` and ``references`` are names: a Path given is held as text
    )
    system_order: list[str] | None = param(
        None,
        "your own order, best first, e.g. [large-v3,base,tiny]; unlisted systems follow, "
        "label-free",
    )
    normaliser: Normaliser | None = param(
        None, "null: the model's own (another one is refused unless equivalent)"
    )
    seed: int = param(0, "bootstrap seed", minimum=0)
    n_resamples: int = param(
        1000, "bootstrap resamples per interval", minimum=0, maximum=MAX_RESAMPLES
    )
    missing_hypotheses: str = param(
        "exclude",
        "a system's missing hypothesis for an utterance of its dataset: exclude (warned) | "
        "deletions (an empty output)",
        choices=MISSING_HYPOTHESES,
    )
    chunk_utterances: int = param(
        CHUNK_UTTERANCES, "utterances per processing chunk (memory bound)", minimum=1
    )
    n_jobs: int = n_jobs_param()


@dataclass(frozen=True)
class LabelSettings(Section):
    """``few_labels:`` of ``werest estimate``/``werest leaderboard``
    (:mod:`werest.estimation.labels` estimates with it).

    Parameters
    ----------
    interval : how the 95 % interval is made (:data:`METHODS`).
    level : its coverage.
    min_labels : a (dataset, system) with fewer labelled utterances keeps its zero-label
        estimate (with a warning).
    n_resamples : bootstrap resamples.
    recalibrate : refit the predicted errors on the labels, cross-fitted
        (:meth:`werest.estimation.ppi.DatasetFrame.recalibrated_draws`).
    shrink : lean the point estimate on the zero-label one where the labels do not
        contradict it (:func:`werest.estimation.ppi.shrink`); the interval is unchanged.
        Off by default: the zero-label estimate is most biased on the best system (agreement
        cannot see that it is better), and shrinking brought that bias back into the
        labelled estimate (experiments/results/few_labels.md, "The best system").
    shared_lambda : one λ for every system of a dataset, the median of their tuned ones
        (:func:`werest.estimation.ppi.point_estimates`): the estimates stay paired, and rank
        the best system as often as the labels alone do.
    """

    SECTION: ClassVar[str] = "few_labels"

    interval: str = param(
        "t",
        "t (delta method, m - 1 df; held 90 % in every held-out domain) | normal | bootstrap "
        "(percentile over the labelled utterances); none narrower than independent Poisson "
        "errors",
        choices=METHODS,
    )
    level: float = param(0.95, "the interval's coverage", minimum=0, maximum=1, closed="neither")
    min_labels: int = param(
        20,
        "fewer labelled utterances for a system: its zero-label estimate is kept, with a warning",
        minimum=1,
    )
    n_resamples: int = param(
        2000,
        "bootstrap resamples (interval=bootstrap; refused when they cannot fit in memory)",
        minimum=1,
        maximum=MAX_RESAMPLES,
    )
    recalibrate: bool = param(
        True,
        "refit the predicted errors on the labels, cross-fitted by utterance (learns the "
        "errors every system shares); the estimate stays unbiased either way",
    )
    shrink: bool = param(
        False,
        "lean each system's estimate on its zero-label one where the labels do not contradict "
        "it (empirical-Bayes weight over the dataset's systems); the interval stays the "
        "prediction-powered one; off: it brought the zero-label estimate's bias on the best "
        "system back (docs/winner.md)",
    )
    shared_lambda: bool = param(
        True,
        "one power-tuning λ for every system of a dataset (the median of theirs): the "
        "estimates stay paired and rank the best system as the labels alone do; false: one λ "
        "per system",
    )


@dataclass(frozen=True)
class WinnerSettings(Section):
    """``winner:`` of ``werest estimate`` and ``werest sample``
    (:func:`werest.estimation.decision.decide` decides with it).

    Parameters
    ----------
    margin : points of WER: ``good`` means the leader is at most this much worse than the
        best (the margin is the larger of this and ``relative_margin``).
    relative_margin : the same as a share of the leader's WER (0.05: 5 % of it).
    alpha : the decision's error level: at most this share of stops name a system more than
        the margin worse than the true best, however the user stops.
    bounds : :data:`BOUNDS`.
    """

    SECTION: ClassVar[str] = "winner"

    margin: float = param(
        MARGIN,
        "points of WER: good means the leader is at most this much worse than the best (the "
        "margin is the larger of margin and relative_margin)",
        minimum=0,
    )
    relative_margin: float = param(
        RELATIVE_MARGIN,
        "the margin as a share of the leader's WER (0.05: 5 % of it)",
        minimum=0,
        maximum=1,
        closed="left",
    )
    alpha: float = param(
        ALPHA,
        "at most this share of stops (at the first decided or good, looking after every "
        "batch) name a system more than the margin worse than the true best, and a "
        "regret_bound is exceeded as rarely",
        minimum=0,
        maximum=1,
        closed="neither",
    )
    bounds: str = param(
        "betting",
        "betting: confidence sequences valid at any number of labels, whatever the tail | eb: "
        "empirical Bernstein, valid too, wider | asymptotic: from the central limit theorem; "
        "it assumes the draws have seen the tail and can stop on the wrong system where a "
        "rare hallucination was not drawn",
        choices=BOUNDS,
    )

    def margin_points(self, leader_wer: float) -> float:
        """The margin in points for a leader at ``leader_wer`` points."""
        return max(self.margin, self.relative_margin * max(leader_wer, 0.0))
