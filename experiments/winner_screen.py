"""Screens of the label loop's decision: the ``winner`` arm of ``werest evaluate
experiment=winner`` (leave one domain out on the shared data), under variants of one of its
constants, with fewer users than the experiment.

    python experiments/winner_screen.py [--users 100] [--truncation 0.9 0.97 0.99]
    python experiments/winner_screen.py [--users 100] --fold 0 0.6

Each variant runs ``werest evaluate experiment=winner winner.arms=[winner] n_jobs=1`` in
this process, the same users (the experiment's seeds) on every dataset, with one constant
set for the run: the bets' truncation (the default of
:func:`~werest.estimation.sequences.betting_lower_bounds`, ``TRUNCATION``) or the most of
each draw's reach the betting sequence folds in (:data:`werest.estimation.decision.FOLD`; 0
folds nothing). Writes ``experiments/results/winner_screen.md`` (truncation) or
``winner_screen_fold.md``: per variant, the share of users stopped (``decided`` or ``good``)
within 100 and 300 labels, each dataset weighing the same, and the wrong stops; per dataset,
the share within 100. The experiment itself, under the shipped constants and with 200 users
per arm, is ``experiments/results/winner.md``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"


def _constant(name: str) -> tuple[dict, str]:
    """Where the screened constant lives: a mapping and its key."""
    from werest.estimation import decision, sequences

    if name == "fold":
        return vars(decision), "FOLD"
    return sequences.betting_lower_bounds.__kwdefaults__, "truncation"


def screen(name: str, values: list[float], users: int) -> pd.DataFrame:
    """The ``winner`` arm's users on every dataset, once per value of the constant ``name``
    (one row per user): ``werest evaluate experiment=winner`` in this process (``n_jobs=1``,
    so the value set here is the one its users' decisions read), its users' table read
    back."""
    from werest.cli.main import main as werest

    home, key = _constant(name)
    shipped = home[key]
    parts = []
    with tempfile.TemporaryDirectory() as folder:
        for value in values:
            home[key] = value
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
                home[key] = shipped
            if code:
                raise SystemExit(code)
            frame = pd.read_csv(Path(folder) / "winner_users.csv")
            parts.append(frame.assign(variant=value))
    return pd.concat(parts, ignore_index=True)


def summary(users: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per variant (over datasets, each weighing the same) and per dataset and variant."""
    users = users.assign(stopped=users["status"] != "undecided")
    per = (
        users.groupby(["variant", "dataset"])
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
    overall = per.groupby("variant").agg(
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
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--truncation", type=float, nargs="+", default=[0.9, 0.97, 0.99])
    chosen.add_argument("--fold", type=float, nargs="+")
    args = parser.parse_args()
    name, values = ("fold", args.fold) if args.fold else ("truncation", args.truncation)
    what = {"fold": "the fold of each draw's reach", "truncation": "the bets' truncation"}[name]
    start = time.perf_counter()
    overall, per = summary(screen(name, values, args.users))
    percent = {c: "{:.1%}".format for c in ("within_100", "within_300", "wrong_stops")}
    wide = per.pivot(index="dataset", columns="variant", values="within_100")
    lines = [
        f"# winner screen: {what}",
        "",
        f"Written by `python experiments/winner_screen.py --users {args.users} --{name} "
        f"{' '.join(map(str, values))}`: the `winner` arm of `werest evaluate "
        f"experiment=winner` (leave one domain out, the shipped constants but {what}), "
        f"{args.users} users per dataset. `within_N`: the share of users stopped (`decided` or "
        "`good`) within N labels, each dataset weighing the same; `wrong_stops`: over all stops.",
        "",
        overall.rename(columns={"variant": name})
        .drop(columns=["wrong", "stops"])
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
    out = RESULTS / ("winner_screen.md" if name == "truncation" else f"winner_screen_{name}.md")
    out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines[:8]))


if __name__ == "__main__":
    main()
