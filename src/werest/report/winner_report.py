"""The report of ``werest evaluate experiment=winner`` (:mod:`werest.evaluation.winner`):
``<name>.md``, ``<name>_shortlist.csv``, ``<name>_datasets.csv``, ``<name>_overall.csv`` and
``<name>_users.csv`` (one row per simulated user)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from werest.evaluation.winner import CHECKPOINTS, WinnerExperiment, WinnerResult
from werest.formatting import markdown_table
from werest.io import write_report

log = logging.getLogger(__name__)

#: the bars the report checks: the shortlist's (issue 41), the decision's (issue 47)
SHORTLIST_COVERAGE, SHORTLIST_SIZE = 0.90, 0.40
WRONG_OVERALL, WRONG_DATASET = 0.05, 0.10
STOPPED_300, STOPPED_100, LABELS_RATIO, REGRET_100 = 0.80, 0.50, 0.6, 2.0


def _pct(value: float) -> str:
    return "" if value is None or not np.isfinite(value) else f"{100 * value:.1f} %"


def _labels(value: float) -> str:
    return "never" if not np.isfinite(value) else f"{value:.0f}"


def _points(value: float) -> str:
    return "" if value is None or not np.isfinite(value) else f"{value:.2f}"


def labels_ratio(datasets: pd.DataFrame) -> tuple[float, int]:
    """The median over the datasets where both the winner and uniform arms' median users
    stop of (winner's median labels ÷ uniform's), and how many datasets that is."""
    medians = datasets.pivot(index="dataset", columns="arm", values="median_labels")
    if not {"winner", "uniform"} <= set(medians.columns):
        return float("nan"), 0
    both = medians[np.isfinite(medians["winner"]) & np.isfinite(medians["uniform"])]
    if both.empty:
        return float("nan"), 0
    return float((both["winner"] / both["uniform"]).median()), len(both)


def bars_table(result: WinnerResult) -> pd.DataFrame:
    """Each bar: what it asks, what was measured, whether it holds."""
    overall = result.overall.set_index("arm")
    rows = [*_shortlist_bars(result.shortlist), *_wrong_stop_bars(result, overall)]
    if "winner" in overall.index:
        rows += _winner_bars(result, overall.loc["winner"])
    return pd.DataFrame(
        [
            {
                "bar": bar,
                "asks": asks,
                "measured": value if isinstance(value, str) else _pct(value),
                "holds": "yes" if holds else "no",
            }
            for bar, asks, value, holds in rows
        ]
    )


#: a bar: what it checks, its bound, the value measured (a share, or text) and whether it holds
Bar = tuple[str, str, object, bool]


def _shortlist_bars(shortlist: pd.DataFrame) -> list[Bar]:
    return [
        (
            "shortlist holds the true best (held-out datasets of ≥ 3 systems)",
            f"≥ {_pct(SHORTLIST_COVERAGE)}",
            shortlist["holds_best"].mean(),
            shortlist["holds_best"].mean() >= SHORTLIST_COVERAGE,
        ),
        (
            "shortlist's mean share of the systems",
            f"≤ {_pct(SHORTLIST_SIZE)}",
            shortlist["kept_share"].mean(),
            shortlist["kept_share"].mean() <= SHORTLIST_SIZE,
        ),
    ]


def _wrong_stop_bars(result: WinnerResult, overall: pd.DataFrame) -> list[Bar]:
    rows = []
    for arm in overall.index:
        mine = result.datasets[result.datasets["arm"] == arm]
        everywhere, worst = overall.loc[arm, "wrong_stops"], mine["wrong_stops"].max()
        where = f" ({mine.loc[mine['wrong_stops'].idxmax(), 'dataset']})" if worst > 0 else ""
        rows.append(
            (
                f"wrong stops ({arm}): all stops / worst dataset",
                f"≤ {_pct(WRONG_OVERALL)} / ≤ {_pct(WRONG_DATASET)}",
                f"{_pct(everywhere)} / {_pct(worst)}{where}",
                everywhere <= WRONG_OVERALL and worst <= WRONG_DATASET,
            )
        )
    return rows


def _winner_bars(result: WinnerResult, winner: pd.Series) -> list[Bar]:
    rows: list[Bar] = [
        (
            "strategy=winner: users stopped within 300 labels or the whole dataset",
            f"≥ {_pct(STOPPED_300)}",
            winner["decided_cap"],
            winner["decided_cap"] >= STOPPED_300,
        ),
        (
            "strategy=winner: users stopped within 100 labels",
            f"≥ {_pct(STOPPED_100)}",
            winner["decided_100"],
            winner["decided_100"] >= STOPPED_100,
        ),
        (
            "strategy=winner: median regret_bound at 100 labels (points)",
            f"≤ {REGRET_100:g}",
            _points(winner["regret_100"]),
            winner["regret_100"] <= REGRET_100,
        ),
    ]
    ratio, count = labels_ratio(result.datasets)
    if count:
        rows.append(
            (
                "median labels to a stop, winner ÷ uniform (median over the "
                f"{count} datasets where both stop)",
                f"≤ {LABELS_RATIO:g}×",
                f"{ratio:.2f}×",
                ratio <= LABELS_RATIO,
            )
        )
    return rows


def _datasets(result: WinnerResult) -> pd.DataFrame:
    frame = result.datasets.copy()
    shares = ["wrong_stops", "good", *(f"decided_{c}" for c in (*CHECKPOINTS, "cap"))]
    for column in (*shares, "regret_held", "forecast_enough"):
        frame[column] = frame[column].map(_pct)
    for column in (*(f"regret_{c}" for c in CHECKPOINTS), "forecast_ratio"):
        frame[column] = frame[column].map(_points)
    for column in ("median_labels", "p90_labels", "fixed_uniform", "fixed_distance"):
        frame[column] = frame[column].map(_labels)
    frame["gap_points"] = frame["gap_points"].map(lambda v: f"{v:.2f}")
    keep = [
        "dataset",
        "arm",
        "utterances",
        "wrong_stops",
        "good",
        *(f"decided_{c}" for c in CHECKPOINTS),
        "decided_cap",
        "median_labels",
        "p90_labels",
        *(f"regret_{c}" for c in CHECKPOINTS),
        "regret_held",
        "forecast_ratio",
        "forecast_enough",
    ]
    return frame[keep]


def _limits(result: WinnerResult) -> pd.DataFrame:
    frame = result.datasets.drop_duplicates("dataset")[
        ["dataset", "utterances", "gap_points", "fixed_uniform", "fixed_distance"]
    ].copy()
    frame["gap_points"] = frame["gap_points"].map(lambda v: f"{v:.2f}")
    for column in ("fixed_uniform", "fixed_distance"):
        frame[column] = frame[column].map(_labels)
    return frame.rename(
        columns={
            "gap_points": "true top-two gap (points)",
            "fixed_uniform": "fixed test, uniform draws",
            "fixed_distance": "fixed test, draws ∝ distance",
        }
    )


def _overall(result: WinnerResult) -> pd.DataFrame:
    frame = result.overall.copy()
    for column in frame.columns:
        if column.startswith(("wrong", "worst", "decided", "regret_held", "forecast_enough")):
            frame[column] = frame[column].map(_pct)
        elif column.startswith(("regret_", "forecast_ratio")):
            frame[column] = frame[column].map(_points)
    frame["median_labels"] = frame["median_labels"].map(_labels)
    return frame


def _shortlist(result: WinnerResult) -> pd.DataFrame:
    frame = result.shortlist.copy()
    frame["kept_share"] = frame["kept_share"].map(_pct)
    return frame[
        ["dataset", "domain", "systems", "true_best", "needed", "share", "contenders", "holds_best"]
    ]


def _introduction(settings: WinnerExperiment) -> str:
    """The report's first paragraph: where the estimates come from, the shortlist, the
    simulated users, the arms and the stress dataset."""
    return (
        "Written by `werest evaluate experiment=winner` (`werest.evaluation.winner`). The "
        "zero-label estimates are the held-out cells of `werest evaluate experiment=lodo` "
        "(each domain estimated by a model never trained on it). The shortlist keeps the "
        "⌈share · S⌉ systems with the lowest estimates; its share is calibrated leave one "
        f"domain out (the smallest that held the true best in {_pct(settings.coverage)} of "
        "the other domains' datasets). Then "
        f"{settings.n_users} simulated users per dataset and arm label batches of "
        f"{settings.batch} draws, look after every batch and stop at the first `decided` or "
        f"`good` (margin: the larger of {settings.margin:g} points and "
        f"{_pct(settings.relative_margin)} of the leader's WER; α = {settings.alpha:g}; "
        f"`{settings.bounds}` confidence sequences), at {settings.max_labels} distinct labels, "
        "or once every utterance is labelled. Arms: `winner` (`werest sample "
        "strategy=winner`: draws ∝ the disagreement of the leader and its rivals), `uniform` "
        "(the same contenders, uniform draws from the utterances not yet labelled: "
        "`strategy=random`) and `labels_only` (no prediction: every system a contender, "
        "uniform draws). A stop is wrong when the named winner is more than the margin "
        "worse than the true best. The datasets include a stress dataset, "
        f"`{settings.stress_dataset}+hallucination`: its true best system loops on "
        f"{_pct(settings.stress)} of the utterances (its output there repeated until it is "
        "3 points worse than the best other system), which random draws mostly miss.\n"
    )


def winner_markdown(result: WinnerResult, cfg: Mapping | None, name: str) -> str:
    shortlist = result.shortlist
    parts = [
        f"# {name}: which system is best\n",
        _introduction(result.settings),
        "## The bars\n",
        markdown_table(bars_table(result)),
        "",
        "## The shortlist, leave one domain out\n",
        f"Held out, it held the true best in {int(shortlist['holds_best'].sum())} of "
        f"{len(shortlist)} datasets ({_pct(shortlist['holds_best'].mean())}), keeping on "
        f"average {_pct(shortlist['kept_share'].mean())} of their systems. `needed`: the "
        "smallest share that would have held it. Calibrated on every dataset, the share is "
        f"{result.shipped_share:g} (`werest.estimation.shortlist.SHORTLIST_SHARE`).\n",
        markdown_table(_shortlist(result)),
        "",
        "## Every arm, over the datasets\n",
        "Each dataset weighs the same in the shares decided; wrong stops are counted over all "
        "stops. `regret_N`: the median over users of `regret_bound` (points) once they had N "
        "labels (or at their stop, if earlier); `regret_held`: the share of those bounds "
        "that the leader's true gap to the best stayed within; `forecast_ratio`: the median "
        "over users of the labels they then needed ÷ `labels_to_go` as first forecast at 50 "
        "labels or more; `forecast_enough`: the share of forecasts at least the labels "
        "needed.\n",
        markdown_table(_overall(result)),
        "",
        "## Per dataset\n",
        "`decided_N`: the share of users who stopped (`decided` or `good`) within N labels; "
        "`decided_cap`: within 300 labels or the whole dataset; labels to a decision: "
        "`never` where more than that share never stopped.\n",
        markdown_table(_datasets(result)),
        "",
        "## The limit of any design\n",
        "The draws a fixed-size 95 % test would need to separate the true top two (or, closer "
        "than the margin, to show them within it), told which two they are: (1.96 σ / gap)². "
        "An anytime-valid decision among all systems, which is not told, needs more; where "
        "this exceeds 300, no design decides within 300 labels.\n",
        markdown_table(_limits(result)),
        "",
        f"Simulation: {result.seconds.get('users', float('nan')):.0f} s.",
    ]
    return "\n".join(parts) + "\n"


def write_winner_reports(
    result: WinnerResult, cfg: Mapping | None, output_dir: str | Path, *, name: str
) -> list[Path]:
    """Write the CSVs and the markdown report; return their paths."""
    paths = write_report(output_dir, name, result.frames, winner_markdown(result, cfg, name))
    log.info("wrote %s", ", ".join(str(p) for p in paths))
    return paths
