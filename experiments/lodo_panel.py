"""What the bounded panel costs in accuracy: leave one domain out with the held-out systems
compared with their 8 best-ranked others (werest estimate's default) and with every other.

    python experiments/lodo_panel.py           # two LODO runs, ~20 min each on 2 cores
    python experiments/lodo_panel.py --reuse   # compare the runs already written

Runs ``werest evaluate experiment=lodo name=lodo_panel_8 lodo.panel=8`` and the same with
``name=lodo_panel_all lodo.panel=null`` (training is the same in both: every pair), and writes
``experiments/results/lodo_panel.md``: mean corpus error per held-out domain, both ways, with
raw pWER's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

from werest.cli.main import main as werest
from werest.formatting import markdown_table

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "experiments" / "results"
RUNS = {"panel 8": ("lodo_panel_8", "8"), "every pair": ("lodo_panel_all", "null")}


def main(reuse: bool = False) -> None:
    domains, overall = {}, {}
    for label, (name, panel) in RUNS.items():
        if not (reuse and (RESULTS / f"{name}_domains.csv").exists()):
            status = werest(["evaluate", "experiment=lodo", f"name={name}", f"lodo.panel={panel}"])
            if status:
                sys.exit(status)
        domains[label] = pd.read_csv(RESULTS / f"{name}_domains.csv").set_index("domain")
        overall[label] = json.loads((RESULTS / f"{name}_overall.json").read_text())
    panel, every = domains["panel 8"], domains["every pair"]
    table = pd.DataFrame(
        {
            "held-out domain": panel.index,
            "systems": panel["systems"].to_numpy(),
            "panel 8: mean err": (100 * panel["mean_abs_error"]).round(2).to_numpy(),
            "every pair: mean err": (100 * every.loc[panel.index, "mean_abs_error"])
            .round(2)
            .to_numpy(),
            "raw pWER: mean err": (100 * panel["mean_abs_error_raw"]).round(2).to_numpy(),
            "panel 8 − every pair": (
                100 * (panel["mean_abs_error"] - every.loc[panel.index, "mean_abs_error"])
            )
            .round(2)
            .to_numpy(),
        }
    )
    summary = pd.DataFrame(
        [
            {
                "run": label,
                "mean corpus error (points)": f"{100 * o['mean_abs_error']:.2f}",
                "raw pWER (points)": f"{100 * o['mean_abs_error_raw']:.2f}",
                "pairs in the true order": f"{100 * o['pairwise_order']:.1f} %",
                "interval coverage": f"{100 * o['coverage']:.1f} %",
                "interval width (points)": f"{100 * o['mean_width']:.2f}",
            }
            for label, o in overall.items()
        ]
    )
    text = "\n".join(
        [
            "# The bounded panel in leave one domain out",
            "",
            "`python experiments/lodo_panel.py`: `werest evaluate experiment=lodo` with the "
            "held-out systems compared with their 8 best-ranked others (`lodo.panel=8`, as "
            "`werest estimate` compares them) and with every other system (`lodo.panel=null`). "
            "Training compares every pair in both. Only domains with more than 9 systems can "
            "differ. Full reports: `lodo_panel_8.md`, `lodo_panel_all.md`.",
            "",
            "## Overall",
            "",
            markdown_table(summary),
            "",
            "## Per held-out domain",
            "",
            markdown_table(table),
            "",
        ]
    )
    (RESULTS / "lodo_panel.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main(reuse="--reuse" in sys.argv[1:])
