"""Screens of the label loop's decision: the ``winner`` arm of ``werest evaluate
experiment=winner`` (leave one domain out on the shared data), under variants of one of its
constants, with fewer users than the experiment.

    python experiments/winner_screen.py [--users 100] [--truncation 0.9 0.97 0.99]

Each variant runs ``werest evaluate experiment=winner winner.arms=[winner] n_jobs=1`` in
this process, the same users (the experiment's seeds) on every dataset, with the bets'
truncation set for the run (the default of
:func:`~werest.estimation.sequences.betting_lower_bounds`, ``TRUNCATION``). Writes
``experiments/results/winner_screen.md``: per variant, the share of users stopped
(``decided`` or ``good``) within 100 and 300 labels, each dataset weighing the same, and the
wrong stops; per dataset, the share within 100. The experiment itself, under the shipped
constants and with 200 users per arm, is ``experiments/results/winner.md``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"


def screen(truncations: list[float], users: int) -> pd.DataFrame:
    """The ``winner`` arm's users on every dataset, once per truncation (one row per user):
    ``werest evaluate experiment=winner`` in this process (``n_jobs=1``, so the truncation
    set here is the one its users bet with), its users' table read back."""
    from werest.cli.main import main as werest
    from werest.estimation import sequences

    defaults = sequences.betting_lower_bounds.__kwdefaults__
    shipped = defaults["truncation"]
    parts = []
    with tempfile.TemporaryDirectory() as folder:
        for truncation in truncations:
            defaults["truncation"] = truncation
            try:
                code = werest(
                    [
                        "evaluate",
                        "experiment=winner",
                        "winner.arms=[winner]",
                        f"winner.n_users={users}",
                        "n_jobs=1",
                        "progress=false",
                        f"output_dir={folder}",
                    ]
                )
            finally:
                defaults["truncation"] = shipped
            if code:
                raise SystemExit(code)
            frame = pd.read_csv(Path(folder) / "winner_users.csv")
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
    args = parser.parse_args()
    start = time.perf_counter()
    overall, per = summary(screen(args.truncation, args.users))
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
