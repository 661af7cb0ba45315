"""How often the progress bars of ``werest estimate`` move on a 10,000-row table, as a person
watching the terminal sees them (issue 43: "the normalising bar sits at 0 % for about 3 s with
no refresh; the features bar shows 0/1 chunk for the whole stage").

    PYTHONPATH=src .venv/bin/python experiments/bench_progress.py
    PYTHONPATH=src .venv/bin/python experiments/bench_progress.py --baseline ../other/src

A table of ``--rows`` rows (10,000 by default: 2,500 utterances of 4 systems, each hypothesis a
distinct sentence of random words, so every string is normalised) is written to a temporary
folder, and ``werest estimate`` runs on it in a pseudo-terminal (120 columns), as a user's
shell runs it. Every byte it writes is read as it arrives and time-stamped; each bar's
renders (the text between carriage returns) are parsed for the stage's name and its count
(``3/20``). For each stage the report gives the bar's steps (its total), the stage's length
(first render to last), and the longest wait between two renders whose count differs, which
is what a person reads as "it is stuck". The bar: every wait at most 1 s.

Writes ``experiments/results/bench_progress.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import re
import select
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
STAGES = ("normalising", "features")
BAR = 1.0
_RENDER = re.compile(r"^(?P<stage>[\w ]+?): +(?P<percent>\d+)%\|[^|]*\| (?P<n>\d+)/(?P<total>\d+)")


def write_table(path: Path, rows: int, seed: int = 43) -> None:
    """``rows`` rows: 4 systems per utterance, each hypothesis its own random sentence."""
    rng = random.Random(seed)
    words = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
        for _ in range(3000)
    ]
    lines = ["dataset,utt_id,system,hypothesis"]
    systems = ("large", "medium", "small", "base")
    for utterance in range(rows // len(systems)):
        reference = [rng.choice(words) for _ in range(rng.randint(20, 60))]
        for system in systems:
            said = [w if rng.random() > 0.15 else rng.choice(words) for w in reference]
            text = " ".join(said).capitalize() + rng.choice([".", "?", "!", ", right?"])
            lines.append(f'd{utterance % 3},u{utterance},{system},"{text}"')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def run_on_a_terminal(args: list[str], src: Path, cwd: Path) -> list[tuple[float, str]]:
    """``(seconds since start, text)`` of every read of what ``python -m werest.cli args``
    writes to a pseudo-terminal."""
    import fcntl
    import pty
    import struct
    import termios

    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        os.environ["PYTHONPATH"] = str(src)
        os.execv(sys.executable, [sys.executable, "-m", "werest.cli", *args])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    reads = []
    while True:
        ready, _, _ = select.select([fd], [], [], 300)
        if not ready:
            break
        try:
            data = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        reads.append((time.perf_counter() - start, data.decode(errors="replace")))
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError("".join(text for _, text in reads)[-2000:])
    return reads


def renders(reads: list[tuple[float, str]]) -> list[tuple[float, str, int, int]]:
    """``(seconds, stage, n, total)`` of every bar render in the output."""
    out = []
    for seconds, text in reads:
        for piece in re.split(r"[\r\n]", text):
            piece = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", piece).strip()
            match = _RENDER.match(piece)
            if match:
                n, total = int(match["n"]), int(match["total"])
                out.append((seconds, match["stage"].strip(), n, total))
    return out


def summarise(found: list[tuple[float, str, int, int]]) -> dict[str, dict]:
    summary = {}
    for stage in STAGES:
        shown = [(t, n, total) for t, s, n, total in found if s == stage]
        if not shown:
            summary[stage] = None
            continue
        moves = [shown[0][0]]
        last_n = shown[0][1]
        for t, n, _ in shown[1:]:
            if n != last_n:
                moves.append(t)
                last_n = n
        waits = [b - a for a, b in itertools.pairwise(moves)]
        summary[stage] = {
            "steps": shown[-1][2],
            "seconds": round(shown[-1][0] - shown[0][0], 2),
            "moves": len(moves) - 1,
            "longest_wait_s": round(max(waits), 2) if waits else round(shown[-1][0] - moves[0], 2),
        }
    return summary


def measure(src: Path, rows: int) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        write_table(cwd / "t.csv", rows)
        args = ["estimate", "input=t.csv", "output_dir=out", "progress=true"]
        reads = run_on_a_terminal(args, src, cwd)
    return summarise(renders(reads))


def report(measured: dict[str, dict], rows: int) -> str:
    lines = [
        "# Progress that moves",
        "",
        f"Written by `python experiments/bench_progress.py`: `werest estimate` on a {rows:,}-row "
        "table (4 systems, every hypothesis a distinct sentence) in a 120-column "
        "pseudo-terminal; each bar render time-stamped as it arrives. *longest wait*: the most "
        "seconds between two renders whose count differs (for a bar that never moves, from its "
        f"first render to its last). The bar: at most {BAR} s.",
        "",
        "| tree | stage | steps | stage s | moves | longest wait s |",
        "|---|---|---|---|---|---|",
    ]
    for name, summary in measured.items():
        for stage, row in summary.items():
            if row is None:
                lines.append(f"| {name} | {stage} | (no bar) | | | |")
                continue
            lines.append(
                f"| {name} | {stage} | {row['steps']} | {row['seconds']:.2f} | {row['moves']} "
                f"| {row['longest_wait_s']:.2f} |"
            )
    lines.append("")
    last = list(measured)[-1]
    for stage, row in measured[last].items():
        if row is not None:
            held = row["longest_wait_s"] <= BAR
            lines.append(
                f"* {stage} ({last}): longest wait {row['longest_wait_s']:.2f} s, "
                f"{'within' if held else '**over**'} the {BAR} s bar"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--src", type=Path, default=ROOT / "src", help="the tree measured")
    parser.add_argument("--baseline", type=Path, default=None, help="another tree, measured first")
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_progress.md")
    args = parser.parse_args()
    measured = {}
    if args.baseline is not None:
        measured["before"] = measure(args.baseline.resolve(), args.rows)
    measured["after" if args.baseline is not None else "now"] = measure(
        args.src.resolve(), args.rows
    )
    text = report(measured, args.rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    args.out.with_suffix(".json").write_text(
        json.dumps({"rows": args.rows, "bar_s": BAR, "measured": measured}, indent=2) + "\n",
        encoding="utf-8",
    )
    print(text)


if __name__ == "__main__":
    main()
