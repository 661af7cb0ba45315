"""``werest evaluate experiment=winner``: which system is best, measured as a user meets it.

Two questions, on every dataset of the shared data (or a user's table with references):

1. **The zero-label shortlist** (:func:`werest.estimation.shortlist.shortlist`): its rule, the
   share of systems kept, is calibrated leave one domain out (:func:`calibrate_shortlist`):
   for each held-out domain, the smallest share that held the true best in ``coverage`` of
   the other domains' datasets; then its coverage and size on the held-out datasets. The
   zero-label estimates are the LODO cells of ``experiment=lodo`` (never trained on the
   dataset's domain).
2. **The decision** (:func:`werest.estimation.decision.decide`): ``n_users`` simulated users
   per dataset each label batches of ``batch`` draws, look after every batch and stop at the
   first ``decided`` or ``good``, or at ``max_labels`` distinct labels, or once every
   utterance is labelled. Three arms share the stopping rule:

   * ``winner``: ``werest sample strategy=winner`` (draws ∝ the contenders' disagreement);
   * ``uniform``: the same contenders, draws uniform over the utterances not yet labelled
     (``strategy=random``);
   * ``labels_only``: no prediction at all: every system a contender, no zero-label leader,
     uniform draws: what a user does with labels alone.

   A stop is *wrong* when the named winner's true WER is more than the decision's margin
   above the true best's. Each user's ``regret_bound`` is kept at :data:`CHECKPOINTS` labels,
   and the forecast ``labels_to_go`` is checked against the labels the user then needed.

A stress dataset (:func:`hallucination_stress`) is added to the shared data: one dataset's
true best system made to loop on 2 % of its utterances, so that it is no longer the best and
random draws miss the loops.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from werest import logs
from werest.estimation.contest import FRESH_UNIFORM, Batch, Contest
from werest.estimation.decision import GOOD, UNDECIDED, decide
from werest.estimation.label_round import next_batch
from werest.estimation.settings import (
    ALPHA,
    CONTROL,
    MARGIN,
    RELATIVE_MARGIN,
    WINNER_UNIFORM_SHARE,
    WinnerSettings,
)
from werest.estimation.shortlist import shortlist
from werest.evaluation.settings import STRESS_DATASET, STRESS_SHARE

log = logging.getLogger(__name__)

#: The arms of the simulation (module docstring).
ARMS: tuple[str, ...] = ("winner", "uniform", "labels_only")
#: The shares the shortlist's calibration tries.
SHARES = tuple(round(s, 2) for s in np.arange(0.05, 1.0001, 0.05))
#: Labels at which the report counts the users decided and reads their regret_bound.
CHECKPOINTS = (50, 100, 300)
#: The stress dataset's domain: never in the shortlist's calibration.
STRESS_DOMAIN = "hallucination stress"
#: The stress's loops make the looping system at least this many points worse than the
#: best other system (beyond any margin: a stop on it is wrong).
STRESS_GAP = 3.0


@dataclass(frozen=True)
class WinnerExperiment:
    """``winner:`` of ``werest evaluate experiment=winner``.

    Parameters
    ----------
    n_users : simulated users per dataset and arm.
    batch : draws per batch (a user looks after each).
    max_labels : a user gives up after this many distinct labels.
    margin, relative_margin, alpha, bounds : the decision's
        (:class:`werest.estimation.decision.WinnerSettings`).
    uniform_share : ``strategy=winner``'s uniform share.
    coverage : the shortlist's calibration target.
    arms : which arms to run (:data:`ARMS`).
    stress : the share of utterances of the stress dataset where its best system loops
        (:func:`hallucination_stress`; 0: no stress dataset).
    stress_dataset : the shared dataset the stress dataset copies.
    control : the decision's consensus control variate
        (:func:`werest.estimation.decision.pair_terms`; false: the ablation without it).
    seed : the users' seed.
    """

    n_users: int = 200
    batch: int = 10
    max_labels: int = 300
    margin: float = MARGIN
    relative_margin: float = RELATIVE_MARGIN
    alpha: float = ALPHA
    uniform_share: float = WINNER_UNIFORM_SHARE
    bounds: str = "betting"
    coverage: float = 0.9
    arms: tuple[str, ...] = ARMS
    stress: float = STRESS_SHARE
    stress_dataset: str = STRESS_DATASET
    control: bool = CONTROL
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "arms", tuple(str(a) for a in self.arms))
        unknown = sorted(set(self.arms) - set(ARMS))
        if unknown:
            raise ValueError(f"winner.arms: unknown {unknown[0]!r} ({', '.join(ARMS)})")

    def margin_points(self, leader_wer: float) -> float:
        return WinnerSettings(self.margin, self.relative_margin).margin_points(leader_wer)


@dataclass
class WinnerResult:
    """What :func:`evaluate_winner` measured (tables of the report)."""

    shortlist: pd.DataFrame
    users: pd.DataFrame
    datasets: pd.DataFrame
    overall: pd.DataFrame
    shipped_share: float
    settings: WinnerExperiment
    seconds: dict = field(default_factory=dict)

    @property
    def frames(self) -> dict[str, pd.DataFrame]:
        """The tables its report writes, by file suffix (``<name>_<suffix>.csv``)."""
        names = ("shortlist", "datasets", "overall", "users")
        return {name: getattr(self, name) for name in names}


# --------------------------------------------------------------------------- the shortlist


def best_rank_shares(cells: pd.DataFrame) -> pd.DataFrame:
    """Per dataset with at least 3 systems: its domain, S, the true best, and the smallest
    shortlist share whose shortlist holds it (``needed``)."""
    rows = []
    for dataset, mine in cells.groupby("dataset", sort=True):
        if len(mine) < 3:
            continue
        best = str(mine.loc[mine["wer"].idxmin(), "system"])
        needed = next(
            share
            for share in SHARES
            if best in shortlist(mine.to_dict("records"), share)[str(dataset)]
        )
        rows.append(
            {
                "dataset": dataset,
                "domain": mine["domain"].iat[0],
                "systems": len(mine),
                "true_best": best,
                "needed": needed,
            }
        )
    return pd.DataFrame(rows)


def smallest_share(needed: pd.Series, coverage: float) -> float:
    """The smallest share of :data:`SHARES` that holds the true best in ``coverage`` of the
    datasets whose ``needed`` shares are given."""
    for share in SHARES:
        if (needed <= share + 1e-9).mean() >= coverage - 1e-9:
            return share
    return 1.0


def calibrate_shortlist(cells: pd.DataFrame, coverage: float) -> tuple[pd.DataFrame, float]:
    """Leave one domain out: per held-out dataset, the share calibrated on the other domains'
    datasets, whether its shortlist holds the true best, and its size; and the share
    calibrated on every dataset (what ships:
    :data:`werest.estimation.shortlist.SHORTLIST_SHARE`)."""
    ranks = best_rank_shares(cells)
    rows = []
    for domain in sorted(ranks["domain"].unique()):
        share = smallest_share(ranks.loc[ranks["domain"] != domain, "needed"], coverage)
        for _, row in ranks[ranks["domain"] == domain].iterrows():
            mine = cells[cells["dataset"] == row["dataset"]]
            kept = shortlist(mine.to_dict("records"), share)[row["dataset"]]
            rows.append(
                {
                    **row.to_dict(),
                    "share": share,
                    "contenders": len(kept),
                    "kept_share": len(kept) / row["systems"],
                    "holds_best": row["true_best"] in kept,
                }
            )
    return pd.DataFrame(rows), smallest_share(ranks["needed"], coverage)


# --------------------------------------------------------------------------- the users


def simulate_users(
    contest: Contest,
    errors: np.ndarray,
    true_wer: np.ndarray,
    arm: str,
    settings: WinnerExperiment,
) -> pd.DataFrame:
    """``settings.n_users`` users of one arm on one dataset (module docstring): one row each,
    with ``status``, ``labels``, ``draws``, ``winner``, ``gap`` (its true WER above the
    best's), ``wrong``, the ``regret_bound`` and whether it held at each of
    :data:`CHECKPOINTS`, and the first forecast made at 50 labels or more with the labels
    the user then needed."""
    if arm == "labels_only":
        contest = replace(contest, contenders=list(contest.systems), zero_label={})
    rows = []
    for user in range(settings.n_users):
        rng = np.random.default_rng([settings.seed, user, ARMS.index(arm)])
        rows.append(_one_user(contest, errors, true_wer, arm, settings, rng) | {"user": user})
    return pd.DataFrame(rows)


def _one_user(contest, errors, true_wer, arm, settings, rng) -> dict:
    """One simulated user (:func:`simulate_users`)."""
    batches: list[Batch] = []
    labelled = np.zeros(contest.n, dtype=bool)
    memo: dict = {}
    regret: dict[int, tuple[float, bool]] = {}
    forecast = None
    while True:
        decision = decide(contest, batches, errors, settings, memo=memo)
        used = int(labelled.sum())
        best_gap = true_wer[contest.index(decision.leader)] - true_wer.min()
        for checkpoint in CHECKPOINTS:  # the bound a user reads at that many labels
            if checkpoint not in regret and (used >= checkpoint or decision.status != UNDECIDED):
                regret[checkpoint] = (
                    decision.regret_bound,
                    bool(best_gap <= decision.regret_bound + 1e-9),
                )
        if forecast is None and used >= CHECKPOINTS[0] and decision.status == UNDECIDED:
            forecast = (used, decision.labels_to_go)
        if decision.status != UNDECIDED or used >= settings.max_labels or used >= contest.n:
            break
        if arm == "winner":
            batch, _ = next_batch(contest, decision, settings.batch, settings.uniform_share, rng)
        else:
            free = np.flatnonzero(~labelled)
            picked = rng.choice(free, size=min(settings.batch, len(free)), replace=False)
            batch = Batch(picked, FRESH_UNIFORM)
        batches.append(batch)
        labelled[batch.positions] = True
    named = decision.winner
    gap = true_wer[contest.index(named)] - true_wer.min() if named else np.nan
    row = {
        "dataset": contest.dataset,
        "arm": arm,
        "status": decision.status,
        "labels": decision.labels_used,
        "draws": decision.draws,
        "winner": named,
        "gap": gap,
        "margin": decision.margin,
        "wrong": bool(named is not None and gap > decision.margin + 1e-9),
    }
    for checkpoint in CHECKPOINTS:
        bound, held = regret.get(checkpoint, (np.nan, True))
        row[f"regret_{checkpoint}"] = bound
        row[f"regret_held_{checkpoint}"] = held
    stopped = decision.status != UNDECIDED
    row["forecast_at"], row["forecast"] = forecast if forecast else (np.nan, np.nan)
    row["needed"] = decision.labels_used - row["forecast_at"] if stopped and forecast else np.nan
    return row


def dataset_table(users: pd.DataFrame, sizes: dict[str, int], max_labels: int) -> pd.DataFrame:
    """Per dataset and arm: wrong stops, the share decided within each checkpoint (or the
    whole dataset, when smaller), and labels to a decision (median and 90th percentile over
    users, an undecided user counting as never)."""
    rows = []
    for (dataset, arm), mine in users.groupby(["dataset", "arm"], sort=True):
        stopped = mine["status"] != UNDECIDED
        labels = np.where(stopped, mine["labels"], np.inf)
        row = {
            "dataset": dataset,
            "arm": arm,
            "utterances": sizes[dataset],
            "users": len(mine),
            "wrong_stops": float(mine["wrong"].sum() / max(stopped.sum(), 1)),
            "decided": float(stopped.mean()),
            "good": float((mine["status"] == GOOD).mean()),
        }
        for checkpoint in CHECKPOINTS:
            row[f"decided_{checkpoint}"] = float((labels <= checkpoint).mean())
        row["decided_cap"] = float((labels <= min(max_labels, sizes[dataset])).mean())
        row["median_labels"] = float(np.median(labels))
        row["p90_labels"] = float(np.quantile(labels, 0.9))
        for checkpoint in CHECKPOINTS:
            row[f"regret_{checkpoint}"] = float(np.nanmedian(mine[f"regret_{checkpoint}"]))
        row["regret_held"] = float(
            mine[[f"regret_held_{c}" for c in CHECKPOINTS]].to_numpy().mean()
        )
        row.update(forecast_fields(mine))
        rows.append(row)
    return pd.DataFrame(rows)


def forecast_fields(users: pd.DataFrame) -> dict:
    """How the first forecast made at 50 labels or more held, over the users who then
    stopped: the median ratio of the labels they needed to the labels forecast, and the share
    whose forecast was at least the labels needed."""
    made = users.dropna(subset=["forecast", "needed"])
    made = made[made["forecast"] > 0]
    if made.empty:
        return {"forecast_ratio": np.nan, "forecast_enough": np.nan}
    ratio = made["needed"] / made["forecast"]
    return {
        "forecast_ratio": float(ratio.median()),
        "forecast_enough": float((made["forecast"] >= made["needed"]).mean()),
    }


def overall_table(datasets: pd.DataFrame, users: pd.DataFrame) -> pd.DataFrame:
    """Per arm, over every dataset (each weighing the same): wrong stops over all stops, the
    worst dataset's, and the mean shares decided."""
    rows = []
    for arm, mine in datasets.groupby("arm", sort=False):
        theirs = users[users["arm"] == arm]
        stops = theirs["status"] != UNDECIDED
        rows.append(
            {
                "arm": arm,
                "datasets": len(mine),
                "wrong_stops": float(theirs["wrong"].sum() / max(stops.sum(), 1)),
                "worst_wrong_stops": float(mine["wrong_stops"].max()),
                **{
                    f"decided_{c}": float(mine[f"decided_{c}"].mean())
                    for c in (*CHECKPOINTS, "cap")
                },
                "median_labels": float(np.median(mine["median_labels"])),
                **{f"regret_{c}": float(np.nanmedian(theirs[f"regret_{c}"])) for c in CHECKPOINTS},
                "regret_held": float(
                    theirs[[f"regret_held_{c}" for c in CHECKPOINTS]].to_numpy().mean()
                ),
                **forecast_fields(theirs),
            }
        )
    return pd.DataFrame(rows)


def evaluate_winner(
    contests: dict[str, Contest],
    errors: dict[str, np.ndarray],
    true_wer: dict[str, np.ndarray],
    cells: pd.DataFrame,
    settings: WinnerExperiment,
    *,
    n_jobs: int = 1,
) -> WinnerResult:
    """The shortlist's leave-one-domain-out calibration on ``cells`` (``dataset, system,
    domain, estimated_wer, wer``: held-out zero-label estimates and the truth), then every
    arm's users on every contest (its contenders: the shortlist of the share calibrated
    without its domain; its first leader: the lowest zero-label estimate)."""
    import time

    from joblib import Parallel, delayed

    start = time.perf_counter()
    calibration, shipped = held_out_contenders(contests, cells, settings.coverage)
    tasks = [(name, arm) for name in contests for arm in settings.arms]
    runs = Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(simulate_users)(contests[n], errors[n], true_wer[n], arm, settings)
        for n, arm in tasks
    )
    parts = list(logs.track(runs, desc="simulated users", unit="dataset", total=len(tasks)))
    users = pd.concat(parts, ignore_index=True)
    sizes = {name: contest.n for name, contest in contests.items()}
    datasets = dataset_table(users, sizes, settings.max_labels)
    limits = pd.DataFrame(
        [
            {
                "dataset": name,
                **fixed_size_labels(
                    c, errors[name], settings.margin_points(float(true_wer[name].min()))
                ),
            }
            for name, c in contests.items()
        ]
    )
    datasets = datasets.merge(limits, on="dataset", how="left")
    return WinnerResult(
        shortlist=calibration,
        users=users,
        datasets=datasets,
        overall=overall_table(datasets, users),
        shipped_share=shipped,
        settings=settings,
        seconds={"users": round(time.perf_counter() - start, 1)},
    )


def held_out_contenders(
    contests: dict[str, Contest], cells: pd.DataFrame, coverage: float
) -> tuple[pd.DataFrame, float]:
    """Give each contest its zero-label estimates (``cells``) and its contenders: the
    shortlist of the share calibrated without its domain (:func:`calibrate_shortlist`, the
    stress dataset never in it). Returns the calibration and the share calibrated on all."""
    calibration, shipped = calibrate_shortlist(cells[cells["domain"] != STRESS_DOMAIN], coverage)
    share = dict(zip(calibration["dataset"], calibration["share"], strict=True))
    for name, contest in contests.items():
        mine = cells[cells["dataset"] == name]
        contest.zero_label = dict(zip(mine["system"], mine["estimated_wer"], strict=True))
        contest.contenders = shortlist(mine.to_dict("records"), share.get(name, shipped)).get(
            name, list(contest.systems)
        )
    return calibration, shipped


def scored_contests(
    table: pd.DataFrame, normaliser
) -> tuple[dict[str, Contest], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The contests of a labelled transcripts table (every dataset of two systems or more),
    each system's true errors on every utterance (N, S) and its true WER in points (S,),
    counted as ``werest score`` counts them (a missing hypothesis: every reference word
    deleted, as in the contest)."""
    from werest.estimation.contest import build_contests, error_matrix
    from werest.text.scoring import score_utterances

    contests = build_contests(table, normaliser)
    scored = score_utterances(table, normaliser)
    errors, truth = {}, {}
    for name, contest in contests.items():
        mine = scored[scored["dataset"] == name]
        errors[name] = error_matrix(contest, mine)
        words = mine.groupby(mine["utt_id"].astype(str))["ref_words"].max()
        words = words.reindex(contest.utterances).fillna(0).to_numpy(dtype=float)
        complete = np.isfinite(errors[name]).all(axis=1)
        errors[name] = np.where(complete[:, None], errors[name], 0.0)
        truth[name] = 100 * errors[name].sum(axis=0) / max(words[complete].sum(), 1.0)
        if not complete.all():
            log.warning(
                "%s: %d utterances without a reference are left out", name, (~complete).sum()
            )
            contests[name] = _only(contest, complete)
            errors[name] = errors[name][complete]
    return contests, errors, truth


def hallucination_stress(
    table: pd.DataFrame, normaliser, dataset: str, share: float = STRESS_SHARE, seed: int = 0
) -> pd.DataFrame:
    """A copy of ``dataset``'s rows named ``<dataset>+hallucination`` in which its true best
    system loops on ``share`` of the utterances (chosen at random): its hypothesis there is
    repeated r times, r the fewest (≤ 20) that make it :data:`STRESS_GAP` points worse than the
    best other system. Agreement does not see it (the experiment copies the zero-label
    estimates); random draws of a few dozen labels mostly miss the loops; a stop on the
    looping system is wrong."""
    from werest.text.scoring import score_utterances

    mine = table[table["dataset"] == dataset].copy()
    if mine.empty:
        raise ValueError(f"winner.stress_dataset: no dataset {dataset!r} in the table")
    scored = score_utterances(mine, normaliser)
    totals = scored.groupby("system")[["word_errors", "ref_words"]].sum()
    wer = 100 * totals["word_errors"] / totals["ref_words"]
    best, words = str(wer.idxmin()), float(totals["ref_words"].iloc[0])
    others = float(wer.drop(best).min())
    ids = np.sort(mine["utt_id"].unique())
    rng = np.random.default_rng([seed, 47])
    looped = set(rng.choice(ids, size=max(1, round(share * len(ids))), replace=False))
    rows = (mine["system"] == best) & mine["utt_id"].isin(looped)
    hyp = mine.loc[rows, "hypothesis"].fillna("").astype(str)
    for repeats in range(2, 21):
        trial = mine.copy()
        trial.loc[rows, "hypothesis"] = ((hyp + " ") * repeats).str.strip()
        errors = score_utterances(trial[trial["system"] == best], normaliser)["word_errors"]
        if 100 * errors.sum() / words >= others + STRESS_GAP:
            break
    log.info(
        "stress: %s loops %d times on %d utterances of %s", best, repeats, len(looped), dataset
    )
    return trial.assign(dataset=f"{dataset}+hallucination")


def stress_cells(cells: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """The stress dataset's zero-label cells: its source's, renamed (agreement never saw the
    loops), in :data:`STRESS_DOMAIN`."""
    mine = cells[cells["dataset"] == dataset]
    return mine.assign(dataset=f"{dataset}+hallucination", domain=STRESS_DOMAIN)


def _only(contest: Contest, keep: np.ndarray) -> Contest:
    """The contest on the utterances ``keep`` marks."""
    return replace(
        contest,
        utterances=contest.utterances[keep],
        codes=contest.codes[keep],
        _distances={},
    )


def fixed_size_labels(contest: Contest, errors: np.ndarray, margin_points: float) -> dict:
    """The limit of any design: the draws a fixed-size 95 % test would need to separate the
    true top two (or, closer than ``margin_points``, to show them within it), told which two they
    are, with uniform draws and with draws ∝ their distance; (1.96 σ / gap)²."""
    totals = errors.mean(axis=0)
    best, second = np.argsort(totals)[:2]
    x = errors[:, second] - errors[:, best]
    mu = float(x.mean())
    margin = margin_points / 100 * contest.words
    target = mu if mu > margin else margin - mu
    d = contest.distance(int(best), int(second))
    q = d / d.sum() if d.sum() > 0 else np.full(contest.n, 1 / contest.n)
    ht = np.divide(x, contest.n * q, out=np.zeros_like(x), where=q > 0)
    spread = {"uniform": float(x.std()), "distance": float(np.sqrt((q * ht**2).sum() - mu**2))}
    out = {"gap_points": contest.points(mu)}
    for name, sd in spread.items():
        out[f"fixed_{name}"] = float((1.96 * sd / target) ** 2) if target > 0 else np.inf
    return out
