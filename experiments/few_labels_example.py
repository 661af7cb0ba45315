"""The worked example of a few labels (docs/few_labels.md), run end to end as a user runs it.

    python experiments/few_labels_example.py [--work DIR]

On the mu-bench en-US phone calls (``../shared/data/mubench``; CC BY-NC 4.0, non-commercial):

1. ``werest import mubench`` the shared folder; keep en-US and drop its references (the
   user's table has none);
2. ``werest sample … budget=20 strategy=active`` writes a pilot sheet, with the interval to
   expect from the predictions alone;
3. the sheet is filled from the shared references by the short script shown in docs/few_labels.md
   (a person would transcribe the audio);
4. ``werest sample … labels=pilot.csv budget=30`` writes the next sheet, with the interval to
   expect from all 50 labels measured on the pilot; it is filled the same way;
5. ``werest estimate … labels=[pilot.csv,more.csv]`` gives every system's prediction-powered
   WER and its interval, with the labels-only estimate beside it;
6. ``werest score`` on the full table gives the true WER, which the run never saw.

Writes ``experiments/results/few_labels_example.md``; ``python experiments/readme_blocks.py``
copies its block (between ``<!-- few-labels-example:start -->`` and ``...:end -->``) into
``docs/few_labels.md``.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "experiments" / "results"
MUBENCH = REPO.parent / "shared" / "data" / "mubench"
START, END = "<!-- few-labels-example:start -->", "<!-- few-labels-example:end -->"

#: The filling script of docs/few_labels.md, run here exactly as shown.
FILL = """\
import sys

import pandas as pd

sheet = pd.read_csv(sys.argv[1])
truth = pd.read_parquet("full.parquet").drop_duplicates(["dataset", "utt_id"])
sheet = sheet.drop(columns="reference").merge(
    truth[["dataset", "utt_id", "reference"]], on=["dataset", "utt_id"], how="left"
)
sheet.to_csv(sys.argv[1], index=False)
"""


def werest(*args: str, cwd: Path) -> str:
    """Run ``werest ARGS`` in ``cwd`` as a user would; its stdout."""
    command = [str(Path(sys.executable).with_name("werest")), *args]
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"werest {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=REPO / "outputs" / "few_labels_example")
    args = parser.parse_args()
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    werest("import", "mubench", str(MUBENCH), "--out", "all.parquet", cwd=work)
    table = pd.read_parquet(work / "all.parquet")
    calls = table[table["dataset"] == "mubench-en-US"]
    calls.to_parquet(work / "full.parquet")
    calls.drop(columns="reference").to_parquet(work / "calls.parquet")

    pilot = ["sample", "input=calls.parquet", "budget=20", "strategy=active", "out=pilot.csv"]
    pilot_out = werest(*pilot, cwd=work)
    (work / "fill.py").write_text(FILL, encoding="utf-8")
    subprocess.run([sys.executable, "fill.py", "pilot.csv"], cwd=work, check=True)
    more = ["sample", "input=calls.parquet", "labels=pilot.csv", "budget=30", "out=more.csv"]
    more_out = werest(*more, cwd=work)
    subprocess.run([sys.executable, "fill.py", "more.csv"], cwd=work, check=True)
    estimate = ["estimate", "input=calls.parquet", "labels=[pilot.csv,more.csv]", "output_dir=est"]
    estimate_out = werest(*estimate, cwd=work)
    werest("score", "input=full.parquet", "output_dir=score", cwd=work)

    records = json.loads((work / "est" / "summary.json").read_text(encoding="utf-8"))
    scores = pd.read_csv(work / "score" / "scores.csv").set_index("system")["wer"]
    rows = []
    for r in records:
        truth = float(scores[r["system"]])
        rows.append(
            {
                "system": r["system"],
                "true WER %": f"{100 * truth:.2f}",
                "zero labels %": f"{100 * r['zero_label_wer']:.2f}",
                "50 labels + predictions %": _with_interval(
                    r["estimated_wer"], r["interval_low"], r["interval_high"]
                ),
                "50 labels only %": _with_interval(
                    r["classical_wer"], r["classical_low"], r["classical_high"]
                ),
                "effective labels": f"{r['effective_labels']:.0f}",
                "covered": "yes" if r["interval_low"] <= truth <= r["interval_high"] else "no",
            }
        )
    frame = pd.DataFrame(rows)
    pairs = pd.read_csv(work / "est" / "pairs.csv")
    separated = pairs[pairs["verdict"] != "not separable"]
    realised = 50 * pd.DataFrame(records).eval("interval_high - interval_low")  # points
    promised = re.search(r"about ±([0-9.]+) points", more_out)
    block = "\n".join(
        [
            START,
            "```bash",
            "werest import mubench ../shared/data/mubench --out all.parquet",
            "# calls.parquet: the en-US rows without their references (full.parquet keeps them)",
            "werest " + " ".join(pilot),
            "```",
            "",
            "```text",
            _sheet_lines(pilot_out),
            "```",
            "",
            f"A person would now transcribe the {len(pd.read_csv(work / 'pilot.csv'))} "
            "listed clips (20 draws with replacement); here the sheet is filled from the "
            "shared references (`python fill.py pilot.csv`):",
            "",
            "```python",
            FILL.rstrip(),
            "```",
            "",
            "The next sheet, drawn the same way; its promise for all 50 labels is measured on "
            "the pilot's:",
            "",
            "```bash",
            "werest " + " ".join(more),
            "```",
            "",
            "```text",
            _sheet_lines(more_out),
            "```",
            "",
            "```bash",
            "python fill.py more.csv",
            "werest " + " ".join(f"'{a}'" if "[" in a else a for a in estimate),
            "```",
            "",
            "Every system's WER (the true WER from `werest score` on `full.parquet`, which the "
            "estimate never saw):",
            "",
            _markdown(frame),
            "",
            f"The intervals' median half-width: ±{realised.median():.1f} points; promised after "
            f"the pilot: ±{promised.group(1) if promised else '?'} points.",
            "",
            f"`est/pairs.csv` holds the {len(pairs)} paired differences; "
            f"{len(separated)} are separable at 95 % "
            f"(e.g. {_example_pair(separated)}).",
            "",
            "Written by `python experiments/few_labels_example.py` "
            "(`experiments/results/few_labels_example.md`).",
            END,
        ]
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "few_labels_example.md").write_text(
        "# A few labels, end to end (mu-bench en-US phone calls)\n\n" + block + "\n\n"
        "Console output of `werest estimate`:\n\n```text\n" + estimate_out.strip() + "\n```\n",
        encoding="utf-8",
    )
    print(frame.to_string(index=False))


def _sheet_lines(printed: str) -> str:
    """The lines ``werest sample`` printed, without the "wrote ..." line (the files differ by
    machine only in their folder)."""
    return "\n".join(x for x in printed.strip().splitlines() if not x.startswith("wrote "))


def _with_interval(value: float, low: float, high: float) -> str:
    return f"{100 * value:.2f} [{100 * low:.2f}, {100 * high:.2f}]"


def _example_pair(pairs: pd.DataFrame) -> str:
    if pairs.empty:
        return "none"
    row = pairs.iloc[0]
    better, worse = (
        (row["system_a"], row["system_b"])
        if row["verdict"] == "A better"
        else (row["system_b"], row["system_a"])
    )
    return (
        f"{better} is better than {worse} by {100 * abs(row['difference']):.2f} points: "
        f"{row['system_a']} − {row['system_b']} = {100 * row['difference']:.2f} "
        f"[{100 * row['low']:.2f}, {100 * row['high']:.2f}]"
    )


def _markdown(frame: pd.DataFrame) -> str:
    from werest.formatting import markdown_table

    return markdown_table(frame)


if __name__ == "__main__":
    main()
