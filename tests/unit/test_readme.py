"""The README is a manual whose numbers come from experiments/results/, and its quick start runs.

* every ``<!-- NAME:start -->`` block of README.md and docs/*.md equals what
  ``experiments/readme_blocks.py`` copies from its results file;
* outside those blocks and code, the README quotes no measured number (a percentage other
  than the 95 % level and 100 %, a decimal count of points, seconds, MB or GB, a share of
  domains, systems or cells);
* it has no history phrase, stays a manual (at most about 400 lines) and links only to files
  that exist;
* its quick start (your own CSVs → import → estimate → leaderboard) runs as written.
"""

from __future__ import annotations

import importlib.util
import re
import shutil

import pandas as pd
import pytest

from tests.conftest import REPO
from werest.cli.main import main as werest
from werest.demo import demo_table_path

README = REPO / "README.md"


def _blocks_module():
    spec = importlib.util.spec_from_file_location(
        "readme_blocks", REPO / "experiments" / "readme_blocks.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BLOCKS = _blocks_module()


def _prose(text: str) -> str:
    """``text`` without its generated blocks and fenced code."""
    text = re.sub(r"<!-- ([a-z0-9-]+):start -->.*?<!-- \1:end -->", "", text, flags=re.DOTALL)
    return re.sub(r"```.*?```", "", text, flags=re.DOTALL)


#: what a measured number looks like in prose
MEASURED = re.compile(
    r"\d+\.\d+\s*(?:%|points?|pts|s\b|GB|MB|×)"  # 3.51 points, 2.4 GB, 0.90×
    r"|(?<![\d.])(?!(?:95|100)\s?%)\d+(?:\.\d+)?\s?%"  # a percentage but the level and 100 %
    r"|\b\d+\s*/\s*\d+\s+(?:domains|systems|cells)"  # 10/13 domains
)


@pytest.mark.parametrize("path", BLOCKS.documents(), ids=lambda p: p.name)
def test_every_block_equals_its_results_file(path):
    text = path.read_text(encoding="utf-8")
    names = BLOCKS.MARKER.findall(text)
    for name in names:
        assert name in BLOCKS.BLOCKS, f"{path.name}: unknown block {name!r}"
        assert f"<!-- {name}:end -->" in text, f"{path.name}: block {name!r} has no end"
    assert BLOCKS.render(text, BLOCKS.root_of(path)) == text, (
        f"{path.name} differs from experiments/results/: run python experiments/readme_blocks.py"
    )


def test_every_block_is_used_and_not_empty():
    used = {name for path in BLOCKS.documents() for name in BLOCKS.MARKER.findall(path.read_text())}
    assert used == set(BLOCKS.BLOCKS)
    for name in BLOCKS.BLOCKS:
        assert re.search(r"\d", BLOCKS.block(name)), f"block {name!r} holds no number"


def test_the_measured_number_pattern_catches_numbers():
    """The check below can fail: each of these is a hand-copied measurement."""
    for quoted in (
        "3.51 points",
        "mean error 4.99 pts",
        "29 %",
        "12.3%",
        "2.4 GB",
        "0.90×",
        "10/13 domains",
    ):
        assert MEASURED.search(quoted), quoted
    for fine in ("95 % interval", "95% interval", "above 100 %", "Python 3.11", "over 1 GB"):
        assert not MEASURED.search(fine), fine


def test_readme_quotes_no_number_outside_a_block():
    prose = _prose(README.read_text(encoding="utf-8"))
    found = [m.group(0) for m in MEASURED.finditer(prose)]
    assert not found, f"measured numbers outside a generated block: {found}"


def test_readme_is_a_manual():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 420
    history = re.compile(r"since stop|stop \d+|issue[- ]?\d+|former order|as before", re.I)
    for path in [README, *sorted((REPO / "docs").glob("*.md"))]:
        found = history.findall(path.read_text(encoding="utf-8"))
        assert not found, f"{path.name}: history phrases {found}"
    for heading in (
        "## Set-up: two commands",
        "## Quick start: your own CSVs",
        "## Reading an estimate",
        "## A few labels",
        "## The leaderboard",
    ):
        assert heading in text
    assert "make demo" in text and "make test" in text
    assert "make test" in (REPO / ".ci" / "run").read_text()


def test_links_resolve():
    for path in [README, *sorted((REPO / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text(encoding="utf-8")):
            if target.startswith("http"):
                continue
            assert (path.parent / target).exists(), f"{path.name}: broken link {target}"


def test_glossary_defines_the_readme_terms():
    glossary = (REPO / "docs" / "glossary.md").read_text(encoding="utf-8")
    for term in (
        "pWER",
        "aWER",
        "n̂",
        "LODO",
        "FAAS",
        "Cross-conformal",
        "PPI",
        "RTFx",
        "Sampling CI",
        "Common ground",
    ):
        assert term in glossary, term


def test_quick_start_runs_as_written(tmp_path, monkeypatch):
    """The README's quick start: one CSV per system in a folder, imported without references,
    estimated and ranked with the commands the README prints."""
    text = README.read_text(encoding="utf-8")
    quick = text.split("## Quick start: your own CSVs", 1)[1].split("\n## ", 1)[0]
    commands = re.search(r"```bash\n(.*?)```", quick, flags=re.DOTALL).group(1)
    lines = [line.split("#", 1)[0].split() for line in commands.strip().splitlines()]
    # the venv first (tests/integration/test_quick_start_shell.py runs the block in bash)
    assert lines[0] == [".", ".venv/bin/activate"]
    lines = lines[1:]
    assert [line[:2] for line in lines] == [
        ["werest", "import"],
        ["werest", "estimate"],
        ["werest", "leaderboard"],
    ]
    demo = pd.read_csv(demo_table_path())
    demo = demo[demo["dataset"] == "demo-calls"]
    runs = tmp_path / "runs" / "calls"
    runs.mkdir(parents=True)
    for system, rows in demo.groupby("system"):
        rows.rename(columns={"utt_id": "id"})[["id", "hypothesis"]].to_csv(
            runs / f"{system}.csv", index=False
        )
    monkeypatch.chdir(tmp_path)
    for line in lines:
        args = []
        for arg in line[1:]:
            if "*" in arg:
                args += sorted(str(p.relative_to(tmp_path)) for p in tmp_path.glob(arg))
            else:
                args.append(arg)
        assert werest(args) == 0, " ".join(line)
    table = pd.read_parquet(tmp_path / "calls.parquet")
    assert sorted(table["system"].unique()) == sorted(demo["system"].unique())
    assert set(table["dataset"]) == {"calls"}
    assert "reference" not in table or table["reference"].isna().all()
    summary = pd.read_json(tmp_path / "out" / "calls" / "summary.json")
    assert sorted(summary["system"]) == sorted(demo["system"].unique())
    assert (summary["interval_low"] <= summary["estimated_wer"]).all()
    board = pd.read_csv(tmp_path / "out" / "board" / "leaderboard.csv")
    assert len(board) == demo["system"].nunique()
    assert (tmp_path / "out" / "board" / "leaderboard.html").exists()
    shutil.rmtree(tmp_path / "runs")
