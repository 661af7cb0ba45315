"""Which system is best on my audio: the label loop, end to end, as a user runs it.

    python experiments/winner_example.py [--dataset mubench-en-US] [--budget 10]

Imports mu-bench's phone calls (``../shared/data/mubench``), keeps one locale's turns without
their references (what a user has), and runs the loop of docs/winner.md through the real CLI:
``werest sample strategy=winner labels=[...]``, a person's transcripts (here the shared
references, filled in by the script), ``werest estimate labels=[...]``, until
``winner.json`` says ``decided`` or ``good``. Writes ``experiments/results/winner_example.md``:
the commands, the first and last console blocks, and one row per round (labels, status,
leader, difference and interval; a round's seconds: ``bench_winner_round.py``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
SHARED = ROOT.parent / "shared" / "data"
WEREST = [str(Path(sys.executable).with_name("werest"))]


def werest(*args: str, cwd: Path) -> tuple[str, float]:
    """Run ``werest ARGS`` in ``cwd``; its stdout and seconds (a failure stops the script)."""
    start = time.perf_counter()
    done = subprocess.run(
        [*WEREST, *args, "progress=false"], cwd=cwd, capture_output=True, text=True, check=False
    )
    if done.returncode:
        sys.exit(f"werest {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout, time.perf_counter() - start


def fill(sheet: Path, truth: pd.Series) -> int:
    """A person transcribes the sheet's empty references; returns how many."""
    rows = pd.read_csv(sheet, keep_default_na=False, dtype={"utt_id": str})
    empty = rows["reference"].astype(str).str.strip() == ""
    keys = list(zip(rows["dataset"], rows["utt_id"], strict=True))
    rows.loc[empty, "reference"] = [truth[k] for k, e in zip(keys, empty, strict=True) if e]
    rows.to_csv(sheet, index=False)
    return int(empty.sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="mubench-en-US")
    parser.add_argument("--budget", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    if not (SHARED / "mubench").is_dir():
        sys.exit(f"needs {SHARED / 'mubench'} (../shared beside the repo)")
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        werest("import", "mubench", str(SHARED / "mubench"), "--out", "all.parquet", cwd=work)
        table = pd.read_parquet(work / "all.parquet")
        table = table[table["dataset"] == args.dataset]
        table.drop(columns=["reference"]).to_parquet(work / "calls.parquet")
        labelled = table.dropna(subset=["reference"]).drop_duplicates(["dataset", "utt_id"])
        truth = labelled.set_index(["dataset", "utt_id"])["reference"]
        werest("score", "input=all.parquet", "output_dir=score", cwd=work)
        first, _ = werest("estimate", "input=calls.parquet", "output_dir=est", cwd=work)
        sheets, rounds, last = [], [], None
        for number in range(args.rounds):
            sheet = f"s{number}.csv"
            given = [f"labels=[{','.join(sheets)}]"] if sheets else []
            werest(
                "sample",
                "input=calls.parquet",
                "strategy=winner",
                f"budget={args.budget}",
                f"out={sheet}",
                *given,
                cwd=work,
            )
            transcribed = fill(work / sheet, truth)
            sheets.append(sheet)
            shown, _ = werest(
                "estimate",
                "input=calls.parquet",
                f"labels=[{','.join(sheets)}]",
                "output_dir=est",
                cwd=work,
            )
            entry = json.loads((work / "est" / "winner.json").read_text())[0]
            last = shown
            rounds.append(
                {
                    "round": number + 1,
                    "new transcripts": transcribed,
                    "labels used": entry["labels_used"],
                    "status": entry["status"],
                    "leader": entry["leader"],
                    "regret bound": entry["regret_bound"],
                    "may be best": len(entry["may_be_best"]),
                    "runner-up": entry["runner_up"],
                    "difference": entry["difference"],
                    "low": entry["low"],
                    "high": entry["high"],
                }
            )
            if entry["status"] != "undecided":
                break
        scores = pd.read_csv(work / "score" / "scores.csv")
    write(args, rounds, first, last, scores)


def block(text: str) -> str:
    return "```text\n" + text.split("evidence:")[0].rstrip() + "\n```"


def write(args, rounds: list[dict], first: str, last: str, scores: pd.DataFrame) -> None:
    from werest.formatting import markdown_table

    mine = scores[scores["dataset"] == args.dataset].sort_values("wer")
    truth_line = (
        "The truth (`werest score` on the full table, which the loop never saw): "
        + ", ".join(f"{r.system} {100 * r.wer:.2f} %" for r in mine.itertuples())
        + "."
    )
    commands = [
        "```bash",
        "werest import mubench ../shared/data/mubench --out all.parquet",
        "# calls.parquet: the en-US turns without their references",
        "werest sample input=calls.parquet strategy=winner budget=10 out=s0.csv",
        "# transcribe the empty references of s0.csv, then",
        "werest estimate input=calls.parquet 'labels=[s0.csv]' output_dir=est",
        "werest sample input=calls.parquet strategy=winner budget=10 'labels=[s0.csv]' out=s1.csv",
        "# ... until est/winner.json says decided or good",
        "```",
    ]
    lines = [
        f"# Which system is best on {args.dataset}: the label loop, as a user runs it",
        "",
        "Written by `python experiments/winner_example.py`. The references were removed "
        "from the table; each round the script plays the person who transcribes the new "
        "rows of the sheet (from the shared references).",
        "",
        "<!-- winner-example-short:start -->",
        block(last),
        "",
        f"{rounds[-1]['labels used']} transcribed utterances. " + truth_line,
        "<!-- winner-example-short:end -->",
        "",
        "<!-- winner-example:start -->",
        *commands,
        "",
        "Before any label, `werest estimate` opens with the shortlist:",
        "",
        block(first),
        "",
        f"After round {len(rounds)}:",
        "",
        block(last),
        "",
        markdown_table(pd.DataFrame(rounds)),
        "",
        truth_line,
        "<!-- winner-example:end -->",
    ]
    (RESULTS / "winner_example.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS / 'winner_example.md'}")


if __name__ == "__main__":
    main()
