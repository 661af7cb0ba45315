"""The Latency tab: per system, RTFx, latency and utterance WER statistics."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from werest.formatting import missing, number
from werest.report.page.board import has_truth
from werest.report.page.markup import Cell, html_table, links, pct_cell

if TYPE_CHECKING:
    from werest.ranking.board import Leaderboard


def latency_view(result: Leaderboard) -> pd.DataFrame:
    """Per system with timings, in ranking order: RTFx, latency (s), real-time share and
    throughput, beside the mean utterance WER/CER (%)."""
    board = result.board
    stats = (
        result.descriptive.set_index(["system", "measure"])
        if not result.descriptive.empty
        else None
    )

    def stat(system, measure, field):
        if stats is None or (system, measure) not in stats.index or field not in stats:
            return float("nan")
        return stats.loc[(system, measure), field]

    rows = []
    for _, b in board.iterrows():
        if missing(b.get("rtfx")):
            continue
        system = b["system"]
        row = {
            "rank": Cell(str(b["rank"]), sort=float(b["rank"])),
            "system": Cell(str(system), title=str(system)),
            "timed utts": Cell(
                number(stat(system, "latency_s", "n"), 0),
                sort=float(stat(system, "latency_s", "n")),
            ),
            "RTFx": Cell(number(b["rtfx"], 1), sort=float(b["rtfx"])),
            "latency mean s": Cell(number(b["latency_mean"], 3), sort=float(b["latency_mean"])),
            "latency p50 s": Cell(number(b["latency_p50"], 3), sort=float(b["latency_p50"])),
            "latency p95 s": Cell(number(b["latency_p95"], 3), sort=float(b["latency_p95"])),
            "RTF≤1 %": pct_cell(b["rtf_le_1"], digits=1),
            "utt/s": Cell(number(b["throughput"], 2), sort=float(b["throughput"])),
            "mean utt. est. WER %": pct_cell(stat(system, "est_wer", "mean")),
        }
        if has_truth(board):
            row["mean utt. true WER %"] = pct_cell(stat(system, "true_wer", "mean"))
            row["mean utt. true CER %"] = pct_cell(stat(system, "true_cer", "mean"))
        rows.append(row)
    return pd.DataFrame(rows)


def latency_tab(result: Leaderboard) -> str:
    return (
        '<p class="note">Per system, all its datasets pooled: speed (RTFx, per-utterance '
        "processing or round-trip seconds, the share of utterances processed at least as "
        "fast as real time, utterances per second) and the mean utterance WER/CER in %. "
        "The utterance statistics (sd, range, CI) are in "
        + links(["descriptive.csv"])
        + ".</p>"
        + html_table(latency_view(result), "latency")
    )
