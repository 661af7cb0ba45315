"""How long one round of the label loop takes: ``werest sample strategy=winner`` then
``werest estimate labels=[...]``, through the real CLI, on a table of about 5,000 utterances
and 8 systems (AfriSpeech's test split, clinical and general as one dataset; the references
removed).

    python experiments/bench_winner_round.py [--rounds 3] [--systems 8]

Writes ``experiments/results/bench_winner_round.md`` and ``.json``: the seconds of each
command of each round (the first round fills the cache, the later ones read it), and the
machine's load when it started and ended. The bar (issue 41): a round in at most 10 s on
2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
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
BAR_SECONDS = 10.0


def timed(*args: str, cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [*WEREST, *args, "progress=false"], cwd=cwd, capture_output=True, text=True, check=False
    )
    if done.returncode:
        sys.exit(f"werest {' '.join(args)} failed:\n{done.stderr}")
    return time.perf_counter() - start


def fill(sheet: Path, truth: pd.Series) -> None:
    rows = pd.read_csv(sheet, keep_default_na=False, dtype={"utt_id": str})
    keys = list(zip(rows["dataset"], rows["utt_id"], strict=True))
    rows["reference"] = [truth[k] for k in keys]
    rows.to_csv(sheet, index=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--systems", type=int, default=8)
    args = parser.parse_args()
    if not (SHARED / "afrispeech").is_dir():
        sys.exit(f"needs {SHARED / 'afrispeech'} (../shared beside the repo)")
    load_start = os.getloadavg()
    rounds = []
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        timed("import", "afrispeech", str(SHARED / "afrispeech"), "--out", "all.parquet", cwd=work)
        table = pd.read_parquet(work / "all.parquet")
        table = table[table["dataset"].str.startswith("afrispeech-test")].assign(
            dataset="afrispeech-test"
        )
        systems = sorted(table["system"].unique())[: args.systems]
        table = table[table["system"].isin(systems)]
        truth = table.drop_duplicates(["dataset", "utt_id"]).set_index(["dataset", "utt_id"])
        truth = truth["reference"]
        table.drop(columns=["reference"]).to_parquet(work / "calls.parquet")
        n_utterances = table["utt_id"].nunique()
        sheets: list[str] = []
        for number in range(args.rounds):
            sheet = f"s{number}.csv"
            given = [f"labels=[{','.join(sheets)}]"] if sheets else []
            sample = timed(
                "sample",
                "input=calls.parquet",
                "strategy=winner",
                "budget=10",
                f"out={sheet}",
                *given,
                cwd=work,
            )
            fill(work / sheet, truth)
            sheets.append(sheet)
            estimate = timed(
                "estimate",
                "input=calls.parquet",
                f"labels=[{','.join(sheets)}]",
                "output_dir=est",
                cwd=work,
            )
            rounds.append(
                {
                    "round": number + 1,
                    "sample_s": round(sample, 2),
                    "estimate_s": round(estimate, 2),
                    "round_s": round(sample + estimate, 2),
                }
            )
    result = {
        "utterances": int(n_utterances),
        "systems": len(systems),
        "cores": os.cpu_count(),
        "load_start": round(load_start[0], 2),
        "load_end": round(os.getloadavg()[0], 2),
        "rounds": rounds,
        "bar_seconds": BAR_SECONDS,
    }
    (RESULTS / "bench_winner_round.json").write_text(json.dumps(result, indent=2) + "\n")
    write_markdown(result)


def write_markdown(result: dict) -> None:
    from werest.formatting import markdown_table

    rounds = pd.DataFrame(result["rounds"])
    later = rounds[rounds["round"] > 1]["round_s"]
    lines = [
        "# One round of the label loop",
        "",
        "Written by `python experiments/bench_winner_round.py`: `werest sample "
        "strategy=winner budget=10 labels=[...]` then `werest estimate labels=[...]`, each a "
        f"fresh process as a user runs them, on {result['utterances']:,} utterances × "
        f"{result['systems']} systems (AfriSpeech test, references removed), "
        f"{result['cores']} cores, 1-minute load {result['load_start']} at the start and "
        f"{result['load_end']} at the end.",
        "",
        "## Rounds",
        "",
        markdown_table(rounds),
        "",
        f"A later round (the cache filled): {later.max():.1f} s at most "
        f"(bar: {result['bar_seconds']:g} s)."
        if len(later)
        else "",
    ]
    (RESULTS / "bench_winner_round.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS / 'bench_winner_round.md'}")


if __name__ == "__main__":
    main()
