"""The Python API: the commands' jobs as functions on DataFrames, without configs or files.

    import werest

    model = werest.load_model()                      # the shipped default model
    result = werest.estimate(table, model=model, targets=["tiny"])
    result.summary                                   # one row per dataset and system
    result.utterances                                # one row per target utterance
    werest.score(table)                              # true corpus WER/CER where labelled
    werest.text.wer("the cat sat", "the cat sat down")

``table`` is a transcripts table (docs/input.md) as a DataFrame or a file
path; it is validated exactly as the commands validate a file, so a bad table raises the same
one-line :class:`werest.InputError`. Nothing here prints, and only :func:`write_leaderboard`
writes files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from werest.ingest.table import read_table, validate_table
from werest.model.files import Models, TrainedModel
from werest.text import Normaliser, as_normaliser, requested_normaliser

if TYPE_CHECKING:
    from werest.evaluation.fairness import FairnessSettings


@dataclass
class Estimates:
    """The result of :func:`estimate`.

    Attributes
    ----------
    summary : one row per (dataset, system): ``estimated_wer`` (a fraction), ``interval_low``
        and ``interval_high`` (the model's error on new domains included), ``ci_low`` and
        ``ci_high`` (bootstrap), counts, the proxy, ``warnings``, and ``wer`` where the table
        has references; the columns of ``summary.json``.
    utterances : one row per target utterance: key, proxy, features, ``predicted_wer`` and
        ``status``; the rows of ``utterances.csv``.
    warnings : the run-time guards' warnings (:mod:`werest.estimation.guards`), each a dict with
        ``dataset``, ``systems`` and ``message``.
    pairs : with ``labels``, every pair of systems of a labelled dataset: A − B with its
        paired interval and verdict (``pairs.csv``); None without labels.
    decisions : with ``labels``, which system is best per dataset (``winner.json``'s
        entries: :func:`decide`); None without labels.
    """

    summary: pd.DataFrame
    utterances: pd.DataFrame
    warnings: list[dict] = field(default_factory=list)
    pairs: pd.DataFrame | None = None
    decisions: list[dict] | None = None

    def __repr__(self) -> str:
        from werest.report.estimate_report import format_summary

        lines = [format_summary(self.summary.to_dict("records"), self.pairs is not None)]
        lines += [f"warning: {w['dataset']}: {w['message']}" for w in self.warnings]
        return "\n".join(lines)


def load_model(path: str | Path | None = None, *, trust_model: bool = False) -> TrainedModel:
    """A model file (``.skops`` with its ``.json`` card) checked as the commands check it
    (docs/model_files.md); ``path`` None is the shipped default model."""
    from werest.model.files import default_model_path
    from werest.model.files import load_model as load

    return load(path or default_model_path(), trust_model=trust_model)


def as_table(table: pd.DataFrame | str | Path, numeric: tuple[str, ...] = ()) -> pd.DataFrame:
    """A validated transcripts table from a DataFrame or a file path."""
    if isinstance(table, pd.DataFrame):
        return validate_table(table, numeric=numeric)
    return read_table(table, numeric=numeric)


def estimate(
    table: pd.DataFrame | str | Path,
    *,
    model: TrainedModel | None = None,
    targets: str | list[str] | None = None,
    proxy: str | None = None,
    ranking: str | Path | None = None,
    system_order: list[str] | None = None,
    cer_model: TrainedModel | None = None,
    normaliser: Normaliser | str | None = None,
    seed: int = 0,
    n_resamples: int = 1000,
    n_jobs: int = 1,
    missing_hypotheses: str = "exclude",
    labels: pd.DataFrame | str | Path | list | None = None,
    few_labels=None,
    winner=None,
) -> Estimates:
    """Label-free WER of the ``targets`` systems (None: every system), as ``werest estimate``;
    with ``labels``, prediction-powered (as ``werest estimate labels=…``).

    Parameters
    ----------
    table : transcripts table (DataFrame or path) with the targets' and at least one other
        system's hypotheses for the same utterances; references are optional.
    model : a :func:`load_model` result (default: the shipped model).
    proxy, ranking, system_order : how proxies are chosen (docs/estimate.md "Which system is the
        proxy"); by default the systems' label-free order, which ignores their names.
    cer_model : a CER model, for ``estimated_cer``.
    normaliser : None (default) for the model's own; a name or :class:`Normaliser` may only
        restate it (``auto`` and ``whisper_english`` are one on English rows), since the model
        learned its features under its own; another is a ConfigError.
    missing_hypotheses : ``exclude`` (default; warned when systems differ in utterances) or
        ``deletions`` (a missing hypothesis counts as an empty output).
    labels : a few references: a DataFrame or file with ``dataset, utt_id, reference`` (the
        sheet of ``werest sample``), a list of them (every sheet of the label loop so far),
        or ``"input"`` (the table's own references); checked as the command checks them
        (:func:`werest.estimation.labels.read_labels`).
    few_labels, winner : a :class:`werest.estimation.labels.LabelSettings` and a
        :class:`werest.estimation.decision.WinnerSettings` (default: the command's defaults).
    """
    from werest.estimation.estimate import input_features
    from werest.estimation.labels import LabelSettings
    from werest.estimation.pipeline import EstimateOptions, estimate_frame

    models = Models(model if model is not None else load_model(), cer_model)
    frame = as_table(table, numeric=input_features(models))
    loop = None if labels is None else _round(frame, models, table, winner=winner, labels=labels)
    options = EstimateOptions(  # in the order of its fields
        *(targets, proxy, ranking, system_order, requested_normaliser(normaliser), seed),
        *(n_resamples, missing_hypotheses),
        n_jobs=n_jobs,
    )
    run = estimate_frame(frame, models, options)
    if loop is None:
        return Estimates(pd.DataFrame(run.records), run.utterances, run.warnings)
    done = loop.labelled(run, few_labels or LabelSettings(), seed)
    summary = pd.DataFrame(done.records)
    return Estimates(summary, run.utterances, done.warnings, done.pairs, done.decisions)


def sample(
    table: pd.DataFrame | str | Path,
    budget: int,
    *,
    labels=None,
    strategy: str = "winner",
    model: TrainedModel | None = None,
    seed: int = 0,
    uniform_share: float = 0.5,
    strata: int = 4,
    winner=None,
    cache_dir: str | Path | None = None,
    n_jobs: int = 1,
):
    """The next sheet of the label loop, as ``werest sample`` draws it (nothing written).

    ``labels``: the sheets labelled so far (DataFrames or files, in any order), or None for
    the first sheet. ``strategy``: ``winner`` (the draws that decide which system is best;
    none for a dataset already ``decided`` or ``good``), ``active``, ``stratified``,
    ``random`` or ``auto``. Returns a :class:`werest.estimation.loop.Draw`: ``.sheet`` (fill
    its ``reference`` column, then pass it in ``labels``), ``.decisions`` (with ``winner``:
    the decision before this sheet, ``winner.json``'s entries), ``.answered`` (the datasets
    with nothing left to draw). ``cache_dir`` keeps the zero-label estimate between rounds.
    """
    from werest.estimation.decision import WinnerSettings
    from werest.estimation.loop import LabelRound
    from werest.estimation.sampling import check_design

    check_design(budget, "random" if strategy in ("winner", "auto") else strategy, seed)
    loop = LabelRound.open(
        table,
        lambda: Models(model if model is not None else load_model()),
        labels=labels,
        strategy=strategy,
        winner=winner or WinnerSettings(),
        cache_dir=cache_dir,
        n_jobs=n_jobs,
    )
    return loop.draw(
        budget, strategy=strategy, seed=seed, uniform_share=uniform_share, strata=strata
    )


def decide(
    table: pd.DataFrame | str | Path,
    labels,
    *,
    model: TrainedModel | None = None,
    winner=None,
    cache_dir: str | Path | None = None,
    n_jobs: int = 1,
) -> list[dict]:
    """Which system is best, per dataset of two systems or more, from the sheets ``labels``
    (``winner.json``'s entries, as ``werest estimate labels=`` writes them): ``status``
    (``decided``, ``good`` or ``undecided``), ``winner`` or ``leader``, ``regret_bound``,
    ``may_be_best``, ``labels_used``, ``labels_to_go`` (docs/winner.md). ``winner``: a
    :class:`werest.estimation.decision.WinnerSettings` (margin, α, bounds)."""
    from werest.estimation.estimate import input_features

    models = Models(model if model is not None else load_model())
    frame = as_table(table, numeric=input_features(models))
    loop = _round(frame, models, table, winner=winner, cache_dir=cache_dir, n_jobs=n_jobs)
    loop.read(labels)  # checked against the table: one line naming file, row and column
    return loop.decide()


def _round(frame, models, table, *, winner=None, cache_dir=None, n_jobs: int = 1, labels=None):
    """A :class:`werest.estimation.loop.LabelRound` on the validated ``frame`` (``table``:
    what the user passed, its file named in errors), with the sheets ``labels`` read."""
    from werest.estimation.decision import WinnerSettings
    from werest.estimation.loop import LabelRound

    loop = LabelRound(
        frame,
        models,
        winner=winner or WinnerSettings(),
        cache_dir=cache_dir,
        n_jobs=n_jobs,
        source=table if isinstance(table, str | Path) else None,
    )
    if labels is not None:
        loop.read(labels)
    return loop


def score(
    table: pd.DataFrame | str | Path,
    *,
    normaliser: Normaliser | str = "auto",
    n_resamples: int = 1000,
    seed: int = 0,
    n_jobs: int = 1,
) -> pd.DataFrame:
    """True corpus WER/CER per dataset and system with bootstrap CIs (``scores.csv`` of
    ``werest score``): Σ errors / Σ reference words over the labelled rows; ``normaliser`` is
    a :class:`~werest.text.Normaliser` or its name."""
    from werest.text.scoring import corpus_scores, score_utterances

    scored = score_utterances(as_table(table), as_normaliser(normaliser), n_jobs=n_jobs)
    return corpus_scores(scored, n_resamples=n_resamples, seed=seed)


def leaderboard(
    table: pd.DataFrame | str | Path,
    *,
    model: TrainedModel | None = None,
    ranking: str | Path | None = None,
    system_order: list[str] | None = None,
    fairness: bool | FairnessSettings = False,
    n_resamples: int = 1000,
    seed: int = 0,
    n_jobs: int = 1,
    labels=None,
    few_labels=None,
    winner=None,
    cache_dir: str | Path | None = None,
):
    """Every system ranked by label-free WER, as ``werest leaderboard`` (no files written:
    :func:`write_leaderboard` writes them); with ``labels``, as ``werest leaderboard
    labels=…``: the labelled estimates and which system is best.

    Returns a :class:`werest.ranking.board.Leaderboard`: ``.board`` (one row per system),
    ``.datasets``, ``.pairs`` (paired tests of neighbours) and, with ``fairness`` and
    demographic columns, ``.fairness``. ``fairness=True`` audits as ``werest leaderboard``
    does by default; a :class:`werest.evaluation.fairness.FairnessSettings` chooses the
    categories, the model (``glmm``) and the rest, as the command's ``fairness.*`` settings do.

    ``labels``: the sheets labelled so far, as :func:`estimate` takes them (a DataFrame or
    file, a list of them, or ``"input"``). The labelled datasets' estimates, the ranking and
    the neighbours' verdicts become prediction-powered (``few_labels``: a
    :class:`werest.estimation.labels.LabelSettings`), and the result carries the decision:
    ``.decisions`` (``winner.json``'s entries, the ones :func:`decide` and ``werest estimate
    labels=`` give for the same sheets: ``status``, ``winner`` or ``leader``,
    ``regret_bound``, ``may_be_best``, ``labels_used``...), ``.rounds`` (the decision after
    each sheet, one row per dataset and sheet: :func:`werest.estimation.rounds.label_rounds`)
    and ``.label_notes``. ``winner``: a :class:`werest.estimation.decision.WinnerSettings`;
    ``cache_dir``: where the zero-label estimate and the contests are kept between rounds.
    Without ``labels`` these fields are None.
    """
    from werest.estimation.estimate import input_features
    from werest.evaluation.fairness import FairnessSettings
    from werest.partition.leaderboard import LeaderboardOptions, build
    from werest.stats import Bootstrap

    if isinstance(fairness, bool):
        fairness = FairnessSettings() if fairness else None
    boot = Bootstrap(n_resamples=n_resamples, seed=seed)
    options = LeaderboardOptions(
        bootstrap=boot, fairness=fairness, ranking=ranking, system_order=system_order, n_jobs=n_jobs
    )
    models = Models(model if model is not None else load_model())
    frame = as_table(table, numeric=input_features(models))
    if labels is None:
        return build(frame, models, options)
    loop = _round(frame, models, table, winner=winner, cache_dir=cache_dir, n_jobs=n_jobs)
    return _labelled_board(loop, labels, few_labels, options)


def _labelled_board(loop, labels, few_labels, options):
    """:func:`leaderboard` with the sheets ``labels`` read on ``loop`` (checked before the
    run, as is the bootstrap's memory): the labelled estimates and the decision."""
    from werest.estimation.labels import LabelSettings, check_bootstrap_memory
    from werest.partition.leaderboard import build
    from werest.ranking.leaderboard_decision import decide_board
    from werest.ranking.leaderboard_labels import label_leaderboard

    loop.read(labels)
    settings = few_labels or LabelSettings()
    check_bootstrap_memory(loop.labels, loop.table, settings)
    result = build(loop.table, loop.models, options)
    normaliser, boot = loop.models.normaliser, options.bootstrap
    label_leaderboard(result, loop.table, loop.labels, normaliser, settings, boot)
    decide_board(result, loop)
    return result


def write_leaderboard(
    result,
    output_dir: str | Path,
    *,
    title: str | None = None,
    n_resamples: int = 1000,
    fairness: bool | FairnessSettings = False,
) -> list[Path]:
    """Write a :func:`leaderboard` result into ``output_dir`` as ``werest leaderboard``
    writes it: every table as CSV (``leaderboard.csv``, ``datasets.csv``, ``pairs.csv``,
    ``descriptive.csv``, ``fairness_*.csv``, ``lid_*.csv``), ``leaderboard.md``, the chart
    ``leaderboard.png`` and the web page ``leaderboard.html``. ``title`` is the page's
    (default ``werest leaderboard``); ``n_resamples`` and ``fairness``, the arguments the
    result was computed with, are what the page's metrics tab says. Each file is written
    atomically and other files in the folder stay; returns the files written. (The one
    function here that writes files.)"""
    from werest.evaluation.fairness import FairnessSettings
    from werest.io import recorded_writes
    from werest.report.leaderboard_files import write_leaderboard as write

    audit = fairness if isinstance(fairness, FairnessSettings) else FairnessSettings()
    context = {
        "title": title or "werest leaderboard",
        "n_resamples": n_resamples,
        "alpha": audit.alpha,
    }
    with recorded_writes() as written:
        write(result, Path(output_dir), context)
    return list(dict.fromkeys(written))
