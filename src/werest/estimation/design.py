"""The label loop's designs and sheets: how ``strategy=winner`` draws for a leader and its
rivals (q_i ∝ the leader's distance to its open rivals, a uniform share so every weight
1 / (N q_i) is at most 1 / u: :func:`winner_probabilities`), and how a sheet's rows become the
batches the decision reads (:func:`sheet_batches`): each design recomputed from the table and
checked against the sheet's recorded ``selection_probability``, each batch's draws in their
recorded order. Which rivals a decision leaves open, and the next sheet it asks for:
:mod:`werest.estimation.label_round`."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

from werest.estimation.contest import FRESH_UNIFORM, WITH_REPLACEMENT, Batch, Contest

#: ``strategy=winner``: the weight of the leader's pairs with systems that are not its open
#: rivals in the draw's score (:func:`winner_scores`). Not 0: every pair the decision reads
#: keeps a bounded range (its terms at most max(d) / (N q)), so no draw is wasted on it.
SETTLED_WEIGHT = 0.25


def winner_scores(contest: Contest, leader: str, rivals: list[str]) -> np.ndarray:
    """s_i: the largest distance of ``leader`` to another system on utterance i, each pair's
    distances scaled to mean 1 (a pair of near-identical systems gets as much attention as a
    pair that differs everywhere) and weighted 1 for the open ``rivals``,
    :data:`SETTLED_WEIGHT` for the others; zeros when the leader differs from no system."""
    a = contest.index(leader)
    score = np.zeros(contest.n)
    for other in contest.systems:
        if other == leader:
            continue
        d = contest.distance(a, contest.index(other))
        if d.mean() > 0:
            weight = 1.0 if other in rivals else SETTLED_WEIGHT
            score = np.maximum(score, weight * d / d.mean())
    return score


#: ``strategy=winner``: the share of the draw (besides the uniform share) spent on the leader's
#: pair with its *critical* rival, the one whose bound sets ``regret_bound`` (LUCB); the rest
#: follows :func:`winner_scores` over every rival, so each pair's terms stay bounded
CRITICAL_SHARE = 0.5


def winner_probabilities(
    contest: Contest, leader: str, rivals: list[str], uniform_share: float
) -> np.ndarray:
    """The per-draw probabilities of ``strategy=winner``: on the M disputed utterances (where
    two systems differ), q_i = u/M + (1 − u) (π d_i / Σ d + (1 − π) s_i / Σ s), with d the
    distance of the leader to the critical rival (``rivals[0]``: the one that limits the
    certificate, as LUCB draws), π = :data:`CRITICAL_SHARE` and s :func:`winner_scores`; 0
    where every system agrees (every difference is exactly 0 there: a label would say
    nothing). They sum to 1; every disputed utterance has q_i ≥ u/M, so no weight 1/(N q_i)
    exceeds M/(N u) ≤ 1/u, and the critical pair's terms are at most mean(d)/((1 − u) π)."""
    score = winner_scores(contest, leader, rivals)
    disputed = contest.disputed
    m = int(disputed.sum())
    if m == 0:
        return np.full(contest.n, 1.0 / contest.n)
    if score.sum() <= 0:
        return disputed / m
    mix = score / score.sum()
    if rivals and rivals[0] in contest.systems and rivals[0] != leader:
        critical = contest.distance(contest.index(leader), contest.index(rivals[0]))
        if critical.sum() > 0:
            mix = CRITICAL_SHARE * critical / critical.sum() + (1 - CRITICAL_SHARE) * mix
    q = np.where(disputed, uniform_share / m, 0.0) + (1 - uniform_share) * mix
    return q / q.sum()


def draw_order(positions: np.ndarray, dataset: str, number: int) -> np.ndarray:
    """A batch's draws in a fixed pseudo-random order (seeded by the dataset and the batch's
    number), for a sheet that does not record the order its draws were made in (no
    ``draw_order`` column: drawn before werest recorded it, or made by hand): a uniformly
    random order of exchangeable draws is distributed as the draws themselves, so the
    predictable bets of :func:`eb_lower_bounds` stay valid. The order follows the rows' order
    on the sheet; a recorded order (:func:`recorded_draws`) does not."""
    digest = hashlib.blake2b(f"{dataset}/{number}".encode(), digest_size=8).digest()
    rng = np.random.default_rng(int.from_bytes(digest, "little"))
    return np.asarray(positions)[rng.permutation(len(positions))]


def sheet_batches(
    contest: Contest, labels: pd.DataFrame, active: np.ndarray | None = None
) -> tuple[list[Batch], list[str]]:
    """The batches the decision reads from one dataset's labels (``read_labels`` rows: its
    sheets in the order of their numbers), and notes on the sheets it cannot read. Each
    batch's draws are in the order they were made (:func:`recorded_draws`), so neither the
    order the sheets are listed in nor the order of a sheet's rows changes the decision.

    ``winner`` sheets: with replacement, q recomputed from the recorded leader, rivals and
    uniform share (it must match the recorded ``selection_probability``: the same table).
    ``active`` sheets: with replacement, q from ``active`` (the per-draw probabilities of
    ``werest sample strategy=active`` on this table, (N,)), when they match. ``random`` sheets
    and sheets with no design (a test split): fresh uniform draws. ``stratified`` sheets
    carry no design the decision can read and are left out of it (the estimates use them)."""
    from werest.estimation.sheets import check_winner_design, design_matches

    batches, notes = [], []
    for number, sheet in labels.groupby("sheet", sort=True):
        position = contest.utterances.get_indexer(sheet["utt_id"].astype(str))
        sheet, position = sheet[position >= 0], position[position >= 0]
        drawn = recorded_draws(sheet, position, contest.dataset, int(number))
        strategy = str(sheet["strategy"].iat[0]) if len(sheet) else ""
        recorded = sheet["selection_probability"].to_numpy(dtype=float)
        if strategy == "winner":
            rivals = [r for r in str(sheet["rivals"].iat[0]).split("|") if r]
            unknown = [s for s in [sheet["leader"].iat[0], *rivals] if s not in contest.systems]
            q = (
                None
                if unknown
                else winner_probabilities(
                    contest,
                    str(sheet["leader"].iat[0]),
                    rivals,
                    float(sheet["uniform_share"].iat[0]),
                )
            )
            check_winner_design(sheet, None if q is None else q[position], contest.dataset, unknown)
            batches.append(Batch(drawn, WITH_REPLACEMENT, q))
        elif strategy == "active":
            if active is None or not design_matches(recorded, active[position]).all():
                notes.append(
                    f"sheet {int(number) + 1}: its active design does not follow from this "
                    "table and model; left out of the decision"
                )
                continue
            batches.append(Batch(drawn, WITH_REPLACEMENT, active))
        elif strategy in ("random", "", "nan"):
            batches.append(Batch(drawn, FRESH_UNIFORM))
        else:
            notes.append(f"sheet {int(number) + 1}: a {strategy} design; left out of the decision")
    return batches, notes


def recorded_draws(
    sheet: pd.DataFrame, position: np.ndarray, dataset: str, number: int
) -> np.ndarray:
    """One sheet's draws of one dataset (``position``: each row's utterance in the contest)
    in the order they were made: each row's recorded ``draw_order`` places
    (:func:`werest.estimation.sheets.draw_places`; ``werest sample`` writes them), else, on a
    sheet that records none, :func:`draw_order` of the rows as listed."""
    from werest.estimation.sheets import draw_places

    draws = sheet["draws"].fillna(1).round().astype(int).to_numpy()
    cells = sheet["draw_order"] if "draw_order" in sheet else pd.Series("", index=sheet.index)
    places = [draw_places(cell) for cell in cells]
    if not len(places) or not all(places):
        return draw_order(np.repeat(position, draws), dataset, number)
    drawn = np.full(max(max(p) for p in places) + 1, -1)
    for utterance, mine in zip(position, places, strict=True):
        drawn[mine] = utterance
    return drawn[drawn >= 0]


def active_design(
    contest: Contest, labels: pd.DataFrame, utterances: pd.DataFrame | None
) -> np.ndarray | None:
    """The per-draw probabilities ``strategy=active`` drew this dataset's sheets with, from
    the estimate's predictions (None without them or without an active sheet)."""
    active = labels[labels["strategy"] == "active"]
    if utterances is None or active.empty or active["uniform_share"].isna().all():
        return None
    from werest.estimation.sampling import active_probabilities, labelling_scores

    scores = labelling_scores(utterances[utterances["dataset"] == contest.dataset])
    scores = pd.Series(scores.to_numpy(), index=scores.index.get_level_values(1).astype(str))
    scores = scores.reindex(contest.utterances)
    return active_probabilities(scores.to_numpy(float), float(active["uniform_share"].iat[0]))
