"""How often the leaderboard's 95 % interval holds the true WER.

    python experiments/leaderboard_coverage.py           # ~15 min on 2 cores
    python experiments/leaderboard_coverage.py --reuse   # re-read existing leaderboards only

Runs ``werest leaderboard`` with the shipped model, as a user would, on dighr (every
multi-vendor folder), mu-bench and AfriSpeech from ``../shared/data`` (their references
give the truth, which the estimate does not use), and counts, per leaderboard, the systems
whose ``95% interval`` (the model's error included; ``interval_low``/``interval_high`` in
``leaderboard.csv``) and whose sampling CI (``est_ci_*``) hold the true macro WER.
The shipped model was trained on these domains (in-sample for its corrections; its interval
was calibrated on leave-one-domain-out cells). Writes
``experiments/results/leaderboard_coverage.md``; the leaderboards go to
``outputs/leaderboard_coverage/``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from werest.cli.main import main as werest
from werest.formatting import markdown_table

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
WORK = REPO / "outputs" / "leaderboard_coverage"
RESULTS = REPO / "experiments" / "results"

#: name -> (importer, shared folder, extra leaderboard settings)
BOARDS = {
    "dighr": ("dighr", SHARED / "dighr" / "en", ["exclude_datasets=[dighr-181215]"]),
    "mu-bench": ("mubench", SHARED / "mubench", []),
    "AfriSpeech": ("afrispeech", SHARED / "afrispeech", []),
}


def run(*args: str) -> None:
    status = werest(list(args))
    if status:
        sys.exit(status)


def main(reuse: bool = False) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    rows, filled = [], []
    for name, (fmt, folder, extra) in BOARDS.items():
        table = WORK / f"{fmt}.parquet"
        if not table.exists():
            run("import", f"format={fmt}", f"paths=[{folder}]", f"out={table}")
        out = WORK / fmt
        if not (reuse and (out / "leaderboard.csv").exists()):
            run("leaderboard", f"input={table}", f"output_dir={out}", *extra)
        board = pd.read_csv(out / "leaderboard.csv")
        truth = board["true_wer"]
        held = (board["interval_low"] <= truth) & (truth <= board["interval_high"])
        sampled = (board["est_ci_low"] <= truth) & (truth <= board["est_ci_high"])
        width = 100 * (board["interval_high"] - board["interval_low"]).mean()
        full = board["datasets"].max()
        for row in board[board["filled_cells"] > 0].itertuples():
            filled.append(
                {
                    "leaderboard": name,
                    "system": row.system,
                    "datasets": f"{row.datasets}/{full}",
                    "rank": row.rank,
                    "est. WER % own datasets": f"{100 * row.est_wer:.2f}",
                    "est. WER % all (filled)": f"{100 * row.est_wer_all:.2f}",
                    "true WER % all (filled)": f"{100 * row.true_wer_all:.2f}",
                    "true rank": row.true_rank,
                    "ranked above a system run on all datasets": bool(
                        (board.loc[board["datasets"] == full, "rank"] > row.rank).any()
                    ),
                }
            )
        rows.append(
            {
                "leaderboard": name,
                "systems": len(board),
                "95% interval holds the truth": f"{int(held.sum())}/{len(board)} "
                f"({100 * held.mean():.0f} %)",
                "mean width, points": f"{width:.1f}",
                "sampling CI holds the truth": f"{int(sampled.sum())}/{len(board)} "
                f"({100 * sampled.mean():.0f} %)",
            }
        )
    text = "\n".join(
        [
            "# Does the leaderboard's 95 % interval hold the true WER?",
            "",
            "`python experiments/leaderboard_coverage.py`: `werest leaderboard` with the shipped "
            "model on the shared tables (references used only for the truth). Bar: at least "
            "90 % of the systems of each leaderboard.",
            "",
            "## Coverage",
            "",
            markdown_table(pd.DataFrame(rows)),
            "",
            "## Systems not run on every dataset (ranked on common ground)",
            "",
            "Each is ranked by its macro WER over every dataset, its missing cells filled by the "
            "multiplicative dataset × system fit (`werest.ranking.leaderboard.filled_macro`); the "
            "truth "
            "is filled the same way from the true cells. Bar: none ranks above a "
            "system run on all datasets unless the fit says it is better.",
            "",
            markdown_table(pd.DataFrame(filled)) if filled else "None.",
            "",
        ]
    )
    (RESULTS / "leaderboard_coverage.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main(reuse="--reuse" in sys.argv[1:])
