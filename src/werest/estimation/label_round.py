"""The label round's glue: the contests of a table with its sheets' batches and scored
labels (:func:`labelled_contests`), ``winner.json``'s entries (:func:`winner_entries`) and
``strategy=winner``'s next sheet (:func:`winner_draw`, :func:`winner_sheet`): the decision
first, then the next batch of draws for the rivals it leaves open (:func:`next_batch`, LUCB's
critical rival first; :mod:`werest.estimation.design` draws them)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from werest.estimation.contest import WITH_REPLACEMENT, Batch, Contest, build_contests, error_matrix
from werest.estimation.decision import (
    UNDECIDED,
    Decision,
    WinnerSettings,
    caveats,
    decide,
)
from werest.estimation.design import active_design, sheet_batches, winner_probabilities
from werest.estimation.settings import WINNER_UNIFORM_SHARE
from werest.estimation.shortlist import shortlist
from werest.text.normalise import Normaliser

log = logging.getLogger(__name__)


def mark_contenders(records: list[dict], contenders: dict[str, list[str]]) -> None:
    """Every summary record gets ``contender`` (true/false), in place."""
    for record in records:
        record["contender"] = record["system"] in contenders.get(record["dataset"], ())


def zero_label_estimates(records: list[dict]) -> dict[str, dict[str, float]]:
    """Per dataset and system, the zero-label estimate (``zero_label_wer`` once ``labels=``
    replaced ``estimated_wer``): what the shortlist, the α split and the first leader read."""
    out: dict[str, dict[str, float]] = {}
    for record in records:
        out.setdefault(record["dataset"], {})[record["system"]] = record.get(
            "zero_label_wer", record["estimated_wer"]
        )
    return out


def zero_label_shortlist(zero_label: dict[str, dict[str, float]]) -> dict[str, list[str]]:
    """:func:`shortlist` of :func:`zero_label_estimates`."""
    return shortlist(
        [
            {"dataset": dataset, "system": system, "estimated_wer": value}
            for dataset, systems in zero_label.items()
            for system, value in systems.items()
        ]
    )


@dataclass
class RoundContext:
    """What a round's decisions and draws read (:class:`werest.estimation.loop.LabelRound`
    makes one for each): the transcripts table and its normaliser, the sheets' labels
    (:func:`werest.estimation.labels.read_labels` rows; None before any), the decision's
    settings, the estimate's rows (for the designs of ``active`` sheets), where the contests
    are kept by content, the workers, and the labels' scores (:func:`labels_scored`; computed
    where needed when None)."""

    table: pd.DataFrame
    normaliser: Normaliser
    labels: pd.DataFrame | None = None
    settings: WinnerSettings = WinnerSettings()
    utterances: pd.DataFrame | None = None
    cache_dir: str | Path | None = None
    n_jobs: int = 1
    scores: pd.DataFrame | None = None


def labelled_contests(zero_label: dict[str, dict[str, float]], context: RoundContext):
    """Per dataset of two systems or more: its contest (the shortlist of ``zero_label``), the
    batches its sheets support (:func:`sheet_batches`), the true errors on the labelled
    utterances (the context's ``scores``) and the notes on sheets left out. Yields
    ``(contest, batches, errors, notes)``."""
    table, labels = context.table, context.labels
    contests = build_contests(
        table,
        context.normaliser,
        contenders=zero_label_shortlist(zero_label),
        zero_label=zero_label,
        cache_dir=context.cache_dir,
        n_jobs=context.n_jobs,
    )
    scores = context.scores
    if scores is None:
        scores = labels_scored(table, labels, context.normaliser)
    for name, contest in contests.items():
        mine = labels[labels["dataset"] == name] if labels is not None else None
        batches, notes = [], []
        if mine is not None and len(mine):
            design = active_design(contest, mine, context.utterances)
            batches, notes = sheet_batches(contest, mine, design)
        yield contest, batches, error_matrix(contest, scores[scores["dataset"] == name]), notes


def decision_entry(decision: Decision, notes: list[str], settings: WinnerSettings) -> dict:
    """A dataset's ``winner.json`` entry: the decision, with the notes on its sheets and the
    caveats of its settings."""
    return {**decision.as_dict(), "notes": notes + caveats(settings)}


def labels_scored(table: pd.DataFrame, labels: pd.DataFrame | None, normaliser) -> pd.DataFrame:
    """Every system's true word errors and reference words on each labelled utterance
    (:func:`werest.estimation.corpus.labelled_scores` of the distinct labels): the one
    scoring of a round's labels, which the estimates and the decision both read."""
    from werest.estimation.corpus import labelled_scores
    from werest.estimation.label_sheets import distinct_labels

    if labels is None or not len(labels):
        return pd.DataFrame(columns=["dataset", "utt_id", "system", "word_errors", "ref_words"])
    return labelled_scores(table, distinct_labels(labels), normaliser)


def winner_entries(records: list[dict], context: RoundContext) -> list[dict]:
    """``winner.json``: per dataset of two systems or more, the zero-label shortlist (the
    records get ``contender``) and, with the context's labels, the decision its sheets
    support (:func:`decide`)."""
    zero_label = zero_label_estimates(records)
    contenders = zero_label_shortlist(zero_label)
    mark_contenders(records, contenders)
    settings = context.settings
    if context.labels is None:  # the shortlist alone: nothing to align
        return [
            zero_label_entry(dataset, zero_label[dataset], contenders[dataset], settings)
            for dataset in sorted(zero_label)
            if len(zero_label[dataset]) >= 2
        ]
    return [
        decision_entry(decide(contest, batches, errors, settings), notes, settings)
        for contest, batches, errors, notes in labelled_contests(zero_label, context)
    ]


def zero_label_entry(
    dataset: str, estimates: dict[str, float], contenders: list[str], settings: WinnerSettings
) -> dict:
    """A dataset's ``winner.json`` entry before any label: undecided, the shortlist, the
    leader (the lowest zero-label estimate among the contenders) and the next contender's
    estimated difference (points); no bound yet (a label decides, not agreement)."""
    ranked = sorted(
        (s for s in estimates if s in contenders and np.isfinite(estimates[s])),
        key=lambda s: (estimates[s], s),
    )
    leader = ranked[0] if ranked else sorted(contenders)[0]
    runner = ranked[1] if len(ranked) > 1 else None
    difference = 100 * (estimates[runner] - estimates[leader]) if runner else None
    leader_wer = 100 * estimates.get(leader, float("nan"))
    return Decision(
        dataset=dataset,
        status=UNDECIDED,
        leader=leader,
        winner=None,
        contenders=list(contenders),
        may_be_best=sorted(estimates),
        runner_up=runner,
        difference=float("nan") if difference is None else difference,
        low=float("nan"),
        high=float("nan"),
        regret_bound=float("nan"),
        margin=settings.margin_points(leader_wer if np.isfinite(leader_wer) else 0.0),
        labels_used=0,
        draws=0,
        labels_to_go=None,
        open=[s for s in sorted(estimates) if s != leader],
    ).as_dict() | {"notes": []}


def next_batch(
    contest: Contest,
    decision: Decision,
    budget: int,
    uniform_share: float,
    rng: np.random.Generator,
) -> tuple[Batch, list[str]]:
    """``budget`` draws with replacement of ``strategy=winner`` after ``decision`` (the
    batch, its positions in draw order, and its rivals): the rivals are the open contenders
    (those the leader is not yet shown within the margin of; once none is left, every open
    system), the critical one first (the runner-up: its bound sets ``regret_bound``)."""
    rivals = [s for s in decision.open if s in contest.contenders] or decision.open
    if decision.runner_up in decision.open:
        rivals = [decision.runner_up] + [s for s in rivals if s != decision.runner_up]
    q = winner_probabilities(contest, decision.leader, rivals, uniform_share)
    positions = rng.choice(contest.n, size=budget, p=q)
    return Batch(positions, WITH_REPLACEMENT, q), rivals


def winner_sheet(
    contest: Contest,
    batches: list[Batch],
    errors: np.ndarray,
    budget: int,
    *,
    settings: WinnerSettings = WinnerSettings(),
    uniform_share: float = WINNER_UNIFORM_SHARE,
    rng: np.random.Generator,
) -> tuple[pd.DataFrame, Decision]:
    """The next ``budget`` draws of ``strategy=winner`` for one dataset (with replacement, from
    every utterance: a redrawn labelled utterance costs no new label) and the decision they
    start from; no draw once it is ``decided`` or ``good`` (:func:`next_batch` picks the
    rivals). ``draw_order``: each row's places in the batch's draw order
    (:func:`werest.estimation.sampling.recorded_order`), which :func:`sheet_batches` reads
    back."""
    from werest.estimation.sampling import recorded_order

    decision = decide(contest, batches, errors, settings)
    columns = ["utt_id", "draws", "expected_draws", "selection_probability", "draw_order"]
    if decision.status != UNDECIDED:
        return pd.DataFrame(columns=columns), decision
    batch, rivals = next_batch(contest, decision, budget, uniform_share, rng)
    counts = np.bincount(batch.positions, minlength=contest.n)
    chosen = np.flatnonzero(counts)
    q = batch.probabilities
    sheet = pd.DataFrame(
        {
            "utt_id": contest.utterances[chosen],
            "draws": counts[chosen],
            "expected_draws": budget * q[chosen],
            "selection_probability": q[chosen],
            "draw_order": recorded_order(batch.positions, contest.n)[chosen],
        }
    )
    return sheet.assign(
        leader=decision.leader, rivals="|".join(rivals), uniform_share=uniform_share
    ), decision


def winner_draw(
    records: list[dict], context: RoundContext, budget: int, *, seed: int = 0
) -> tuple[pd.DataFrame, list[dict]]:
    """``werest sample strategy=winner``: per dataset of two systems or more, the next
    ``budget`` draws (:func:`winner_sheet`) given the sheets labelled so far, and every
    dataset's decision before them. Sheet rows: ``dataset, utt_id, draws, expected_draws,
    selection_probability, leader, rivals, uniform_share``."""
    from werest.estimation.sampling import dataset_rng, next_sheet

    settings = context.settings
    sheets, decisions = [], []
    number = next_sheet(context.labels)
    for contest, batches, errors, notes in labelled_contests(
        zero_label_estimates(records), context
    ):
        rng = dataset_rng(seed, f"{contest.dataset}#{number}")
        sheet, decision = winner_sheet(contest, batches, errors, budget, settings=settings, rng=rng)
        decisions.append(decision_entry(decision, notes, settings))
        sheets.append(sheet.assign(dataset=contest.dataset, n_utterances=contest.n))
    return pd.concat(sheets, ignore_index=True), decisions
