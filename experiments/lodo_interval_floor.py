"""How narrow can a zero-label interval be on the shared domains? (issue 23)

    python experiments/lodo_interval_floor.py [cells.csv]

Reads the cells of ``werest evaluate experiment=lodo`` (default
``experiments/results/lodo_cells.csv``) and writes ``experiments/results/lodo_interval_floor.md``:
the share of held-out cells whose corpus error |aWER − WER| is within ±7.5 points (what any
interval 15 points wide centred on the estimate would cover), the width an interval centred on
the estimate needs to cover 90 % and 95 % of the cells even if its width were chosen knowing the
errors (an oracle: no calibration can do better with a fixed width), and the error per domain,
whose spread between domains (errors every system shares) is what sets that floor.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from werest.formatting import markdown_table, percent

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "experiments" / "results"


def floor_summary(cells: pd.DataFrame) -> dict:
    """Coverage of a ±7.5-point interval and the oracle widths for 90 % and 95 % coverage."""
    error = (cells["awer"] - cells["wer"]).abs().to_numpy(dtype=float)
    return {
        "cells": len(cells),
        "within ±7.5 points": f"{np.mean(error <= 0.075):.1%}",
        "oracle width for 90 % (points)": percent(2 * np.quantile(error, 0.90)),
        "oracle width for 95 % (points)": percent(2 * np.quantile(error, 0.95)),
        "interval's mean width (points)": percent(cells["interval_width"].mean()),
        "interval's coverage": f"{cells['covered'].mean():.1%}",
    }


def per_domain(cells: pd.DataFrame) -> pd.DataFrame:
    signed = cells["wer"] - cells["awer"]
    grouped = signed.groupby(cells["domain"])
    return pd.DataFrame(
        {
            "domain": grouped.mean().index,
            "cells": grouped.size().to_numpy(),
            "mean WER − aWER": grouped.mean().map(percent).to_numpy(),
            "min": grouped.min().map(percent).to_numpy(),
            "max": grouped.max().map(percent).to_numpy(),
        }
    )


def main(path: Path) -> Path:
    cells = pd.read_csv(path)
    summary = pd.DataFrame([floor_summary(cells)])
    text = (
        "# How narrow can a zero-label interval be? (`python experiments/lodo_interval_floor.py`)"
        f"\n\nFrom `{path.relative_to(REPO) if path.is_relative_to(REPO) else path}` "
        "(`werest evaluate experiment=lodo`). An oracle width is the narrowest single width of an "
        "interval centred on each estimate that covers that share of the held-out cells, chosen "
        "knowing every error: a bound no fixed-width calibration reaches (werest's widths vary by "
        "bin of the estimate).\n\n"
        + markdown_table(summary)
        + "\n\n## Truth minus estimate per held-out domain (points)\n\n"
        + markdown_table(per_domain(cells))
        + "\n"
    )
    out = RESULTS / "lodo_interval_floor.md"
    out.write_text(text, encoding="utf-8")
    return out


if __name__ == "__main__":
    print(main(Path(sys.argv[1]) if len(sys.argv) > 1 else RESULTS / "lodo_cells.csv"))
