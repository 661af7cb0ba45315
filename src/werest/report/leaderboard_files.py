"""The files of ``werest leaderboard``: every table as CSV, the Markdown report, the chart and
the web page, each written atomically (:func:`write_leaderboard`). The command writes them into
its staging folder (:func:`werest.io.staged_output`); :func:`werest.api.write_leaderboard`
writes a leaderboard computed in Python the same way.
"""

from __future__ import annotations

from pathlib import Path

from werest import logs
from werest.io import atomic_path, write_json, write_text
from werest.ranking.board import Leaderboard
from werest.report.leaderboard_report import markdown_report, plot_board
from werest.report.page.document import write_page

#: What :func:`write_leaderboard` may write in its folder (an earlier run's files, replaced
#: whole by the command: one with fairness or LID tables leaves none of them behind)
LEADERBOARD_FILES = (
    "leaderboard.*",
    "datasets.csv",
    "pairs.csv",
    "descriptive.csv",
    "fairness_*.csv",
    "lid_*.csv",
    "winner.json",
    "winner_rounds.csv",
)


def write_leaderboard(result: Leaderboard, output_dir: Path, context: dict | None = None) -> None:
    """Every CSV, the Markdown report, the chart and the web page of ``result`` in
    ``output_dir``, each written atomically; with the decision (``labels=``), ``winner.json``
    and ``winner_rounds.csv``. ``context`` (bootstrap and fairness settings,
    ``title``) fills the page's metrics tab."""
    with logs.stage("write"):
        _write(result, Path(output_dir), context)


def _write(result: Leaderboard, output_dir: Path, context: dict | None) -> None:
    frames = {
        "leaderboard.csv": result.board,
        "datasets.csv": result.datasets,
        "pairs.csv": result.pairs,
        "descriptive.csv": result.descriptive,
    }
    frames |= {f"fairness_{name}.csv": frame for name, frame in result.fairness.items()}
    if result.lid is not None:
        frames |= {
            "lid_accuracy.csv": result.lid.accuracy,
            "lid_confusion.csv": result.lid.confusion,
            "lid_thresholds.csv": result.lid.thresholds,
            "lid_confidence.csv": result.lid.confidence,
        }
    if result.rounds is not None:  # labels=: the decision after each sheet
        frames["winner_rounds.csv"] = result.rounds
    output_dir.mkdir(parents=True, exist_ok=True)
    for name, frame in frames.items():
        with atomic_path(output_dir / name) as tmp:
            frame.to_csv(tmp, index=False)
    if result.decisions is not None:  # as werest estimate labels= writes it
        write_json(result.decisions, output_dir / "winner.json")
    write_text(markdown_report(result), output_dir / "leaderboard.md")
    plot_board(result.board, output_dir / "leaderboard.png")
    write_page(result, output_dir / "leaderboard.html", context)
