"""Screens of the label loop's decision: the ``winner`` arm of ``werest evaluate
experiment=winner`` (leave one domain out on the shared data), under variants of one of its
constants, with fewer users than the experiment.

    python experiments/winner_screen.py [--users 100] [--truncation 0.9 0.97 0.99]

Each variant runs the same users (the experiment's seeds) on every dataset; the bets'
truncation is set in the worker processes (``werest.estimation.sequences.TRUNCATION`` is
the default of :func:`~werest.estimation.sequences.betting_lower_bounds`). Writes
``experiments/results/winner_screen.md``: per variant, the share of users stopped
(``decided`` or ``good``) within 100 and 300 labels, each dataset weighing the same, and the
wrong stops; per dataset, the share within 100. The experiment itself, under the shipped
constants and with 200 users per arm, is ``experiments/results/winner.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import multiprocessing
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"


def _users(job) -> pd.DataFrame:
    """One dataset's ``winner`` users with the bets truncated at ``truncation`` (a worker)."""
    from werest.estimation import sequences
    from werest.evaluation.winner import simulate_users

    contest, errors, truth, experiment, truncation = job
    sequences.betting_lower_bounds.__kwdefaults__["truncation"] = truncation
    return simulate_users(contest, errors, truth, "winner", experiment)


def screen(truncations: list[float], users: int, jobs: int) -> pd.DataFrame:
    """The ``winner`` arm's users on every dataset, once per truncation (one row per user)."""
    from werest.cli.commands.evaluate import winner_inputs
    from werest.cli.config import load_settings
    from werest.evaluation.winner import held_out_contenders

    settings = load_settings("evaluate", ["experiment=winner", "progress=false"])
    contests, errors, truth, cells, experiment = winner_inputs(settings)
    experiment = dataclasses.replace(experiment, n_users=users)
    held_out_contenders(contests, cells, experiment.coverage)  # as evaluate_winner
    parts = []
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        for truncation in truncations:
            jobs_ = [(contests[n], errors[n], truth[n], experiment, truncation) for n in contests]
            for frame in pool.map(_users, jobs_):
                parts.append(frame.assign(truncation=truncation))
    return pd.concat(parts, ignore_index=True)


def summary(users: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per variant (over datasets, each weighing the same) and per dataset and variant."""
    users = users.assign(stopped=users["status"] != "undecided")
    per = (
        users.groupby(["truncation", "dataset"])
        .apply(
            lambda d: pd.Series(
                {
                    "within_100": (d["stopped"] & (d["labels"] <= 100)).mean(),
                    "within_300": (d["stopped"] & (d["labels"] <= 300)).mean(),
                    "wrong": d["wrong"].sum(),
                    "stops": d["stopped"].sum(),
                }
            ),
            include_groups=False,
        )
        .reset_index()
    )
    overall = per.groupby("truncation").agg(
        within_100=("within_100", "mean"),
        within_300=("within_300", "mean"),
        wrong=("wrong", "sum"),
        stops=("stops", "sum"),
    )
    overall["wrong_stops"] = overall["wrong"] / overall["stops"].clip(lower=1)
    return overall.reset_index(), per


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--truncation", type=float, nargs="+", default=[0.9, 0.97, 0.99])
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    start = time.perf_counter()
    overall, per = summary(screen(args.truncation, args.users, args.jobs))
    percent = {c: "{:.1%}".format for c in ("within_100", "within_300", "wrong_stops")}
    wide = per.pivot(index="dataset", columns="truncation", values="within_100")
    lines = [
        "# winner screen: the bets' truncation",
        "",
        f"Written by `python experiments/winner_screen.py --users {args.users} --truncation "
        f"{' '.join(map(str, args.truncation))}`: the `winner` arm of `werest evaluate "
        f"experiment=winner` (leave one domain out, the shipped constants but the truncation), "
        f"{args.users} users per dataset. `within_N`: the share of users stopped (`decided` or "
        "`good`) within N labels, each dataset weighing the same; `wrong_stops`: over all stops.",
        "",
        overall.drop(columns=["wrong", "stops"])
        .assign(**{c: overall[c].map(f) for c, f in percent.items()})
        .to_markdown(index=False),
        "",
        "## Within 100 labels, per dataset",
        "",
        wide.map("{:.0%}".format).to_markdown(),
        "",
        f"Screen: {time.perf_counter() - start:.0f} s.",
        "",
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "winner_screen.md").write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines[:8]))


if __name__ == "__main__":
    main()
