"""The winner table and the zero-label intervals of differences of a LODO run's cells.

    python experiments/lodo_winners.py [CELLS.csv]   # -> experiments/results/lodo_winners.md

Reads the cells `werest evaluate experiment=lodo` wrote (default
`experiments/results/lodo_cells.csv`) and writes the same section that run's report now
carries (:func:`werest.report.lodo_report.winner_section`): the truly best system's bias,
whether it is ranked first, the order and gap of the top two, and the pair intervals
calibrated on the other domains' pairs (cross-conformal), with their coverage, width and
verdicts. The cells are the committed run's; nothing is re-estimated.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from werest.evaluation.lodo import cross_conformal_pairs, winner_overall, winner_summary
from werest.report.lodo_report import winner_section

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    source = Path(argv[0]) if argv else ROOT / "experiments/results/lodo_cells.csv"
    cells = pd.read_csv(source)
    pairs = cross_conformal_pairs(cells)
    winners = winner_summary(cells, pairs)
    out = ROOT / "experiments/results/lodo_winners.md"
    text = (
        f"# The best system, the top two and differences: `{source.relative_to(ROOT)}`\n\n"
        "Written by `python experiments/lodo_winners.py` from the cells of the committed "
        "`werest evaluate experiment=lodo` run (the shipped model's estimates of domains it "
        "never saw).\n\n" + winner_section(winners, winner_overall(winners, pairs)) + "\n"
    )
    out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
