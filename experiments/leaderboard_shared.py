"""The label-free leaderboard and fairness audit on the shared dighr English data.

    .venv/bin/python experiments/leaderboard_shared.py        # ~4 min on 2 cores

Runs the same steps as these CLI calls (each saves its config beside its outputs):

    werest import dighr ../shared/data/dighr/en --out outputs/leaderboard/dighr.parquet
    # 1. every multi-vendor folder, the shipped model (trained on all dighr folders: in-sample)
    werest leaderboard input=outputs/leaderboard/dighr.parquet \
        'exclude_datasets=[dighr-181215]' output_dir=experiments/results/leaderboard_dighr
    # 2. 190301 alone with a model that never saw it (out-of-sample fairness audit)
    werest train model=hgb 'data.exclude_datasets=[dighr-190301]' name=heldout_190301 \
        output_dir=outputs/leaderboard/models
    werest leaderboard input=outputs/leaderboard/dighr.parquet 'datasets=[dighr-190301]' \
        model_path=outputs/leaderboard/models/heldout_190301.skops \
        output_dir=experiments/results/leaderboard_190301_heldout

181215 is left out of the leaderboard: it holds one vendor's locale variants of the same
recogniser (google, google-en-GB, ...), which would enter the macro average with one dataset
each and make no cross-vendor comparison. Writes ``experiments/results/leaderboard_shared.md``
with both runs' main tables.
"""

from __future__ import annotations

import sys
from pathlib import Path

from werest.cli.main import main as werest
from werest.ingest.importers import import_table
from werest.ingest.table import write_table

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
RESULTS = REPO / "experiments" / "results"
WORK = REPO / "outputs" / "leaderboard"


def run(*args: str) -> None:
    """One werest command; stop on failure."""
    status = werest(list(args))
    if status:
        sys.exit(status)


def section(title: str, folder: Path) -> list[str]:
    """The run's leaderboard.md under a heading (its own title dropped)."""
    text = (folder / "leaderboard.md").read_text(encoding="utf-8").splitlines()
    body = [line.replace("# ", "### ", 1) if line.startswith("#") else line for line in text[1:]]
    return [f"## {title}", "", f"Outputs: `{folder.relative_to(REPO)}/`", "", *body, ""]


def main() -> None:
    table_path = WORK / "dighr.parquet"
    write_table(import_table("dighr", [SHARED / "dighr" / "en"]), table_path)
    all_folders = RESULTS / "leaderboard_dighr"
    run(
        "leaderboard",
        f"input={table_path}",
        "exclude_datasets=[dighr-181215]",
        f"output_dir={all_folders}",
    )
    model = WORK / "models" / "heldout_190301.skops"
    if not model.exists():
        run(
            "train",
            "model=hgb",
            "data.exclude_datasets=[dighr-190301]",
            "name=heldout_190301",
            f"output_dir={model.parent}",
            "n_jobs=1",
        )
    heldout = RESULTS / "leaderboard_190301_heldout"
    run(
        "leaderboard",
        f"input={table_path}",
        "datasets=[dighr-190301]",
        f"model_path={model}",
        f"output_dir={heldout}",
    )
    lines = [
        "# Label-free leaderboard and fairness audit on dighr English",
        "",
        "`python experiments/leaderboard_shared.py` (see its docstring for the CLI calls).",
        "",
        *section("All multi-vendor folders, shipped model (in-sample)", all_folders),
        *section("dighr-190301, model trained without 190301 (out-of-sample)", heldout),
    ]
    (RESULTS / "leaderboard_shared.md").write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    main()
