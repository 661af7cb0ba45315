"""mu-bench: per-utterance round-trip latency of 9 commercial services, and their leaderboard
page (label-free estimates beside true WER, RTFx and latency).

    PYTHONPATH=src .venv/bin/python experiments/latency_mubench.py      # ~2 min

The same as

    werest import mubench ../shared/data/mubench --out outputs/mubench.parquet
    werest leaderboard input=outputs/mubench.parquet \\
        title='mu-bench: label-free werest estimates' \\
        output_dir=experiments/results/leaderboard_mubench

plus the latency table of every system (all locales pooled, and per locale) from the imported
``latency_ms`` (werest.stats.latency on werest.ranking.leaderboard.timed). Writes
``experiments/results/latency_mubench.md`` and the page's screenshot ``screenshot.png``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from werest.cli.main import main as werest
from werest.formatting import markdown_table
from werest.ingest.importers import import_table
from werest.ingest.table import write_table
from werest.ranking.leaderboard import timed
from werest.report.webpage import screenshot
from werest.stats import latency

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
RESULTS = REPO / "experiments" / "results"
PAGE = RESULTS / "leaderboard_mubench"


def latency_table(table: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    rows = []
    for key, part in timed(table).groupby(by, sort=True):
        stats = latency(part)
        rows.append(
            {
                **dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)),
                "utts": stats["n_timed"],
                "mean s": f"{stats['latency_mean']:.3f}",
                "p50 s": f"{stats['latency_p50']:.3f}",
                "p95 s": f"{stats['latency_p95']:.3f}",
                "RTFx": f"{stats['rtfx']:.1f}",
                "RTF≤1 %": f"{100 * stats['rtf_le_1']:.2f}",
                "utt/s": f"{stats['throughput']:.2f}",
            }
        )
    return pd.DataFrame(rows)


def main() -> None:
    table = import_table("mubench", [SHARED / "mubench"])
    source = REPO / "outputs" / "mubench.parquet"
    write_table(table, source)
    status = werest(
        [
            "leaderboard",
            f"input={source}",
            "title='mu-bench: label-free werest estimates'",
            f"output_dir={PAGE}",
        ]
    )
    assert status == 0
    screenshot(PAGE / "leaderboard.html", PAGE / "screenshot.png", 1400, 1500)
    overall = latency_table(table, ["system"]).sort_values("p50 s")
    per_locale = latency_table(table, ["locale", "system"])
    lines = [
        "# mu-bench latency (round trip, per utterance)",
        "",
        "Command: `PYTHONPATH=src .venv/bin/python experiments/latency_mubench.py`. Latency is "
        "mu-bench's measured round trip (`latency.json` `roundTripMs`: network included); "
        "RTFx = Σ audio s / Σ latency s; RTF≤1 = share of utterances answered within their "
        "own duration; utt/s = utterances / Σ latency s (one request at a time).",
        "",
        "## All locales",
        "",
        markdown_table(overall),
        "",
        "## Per locale",
        "",
        markdown_table(per_locale),
        "",
        f"The leaderboard page is written to `{PAGE.relative_to(REPO)}/leaderboard.html` "
        "(not committed: with plotly.js inlined it is about 5 MB); its screenshot, "
        "`screenshot.png`, is.",
    ]
    (RESULTS / "latency_mubench.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
