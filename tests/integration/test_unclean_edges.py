"""The last unclean edges of issue 43, through the real CLI in a subprocess, as a user meets
them: each is one line on stderr and exit status 2 with nothing written and a previous output
intact, or the right behaviour (a warning that names the system).

An output that cannot be replaced is made with ``chattr +i`` (immutable: not even root can
rename or remove it), so those tests need root and chattr and are skipped otherwise."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd
import pytest

from tests.helpers import WEREST, snapshot
from werest.demo import demo_table_path

DEMO = demo_table_path()


def werest(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*WEREST, *args], cwd=folder, capture_output=True, text=True, timeout=300)


def one_line_error(done: subprocess.CompletedProcess, command: str) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"werest {command}: error: "), lines[0]
    return lines[0]


def listing(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def demo_with_null_system(folder: Path, null: set[str]) -> Path:
    table = pd.read_csv(DEMO, keep_default_na=False).astype({"hypothesis": object})
    table.loc[table["system"].isin(null), "hypothesis"] = None
    path = folder / "t.parquet"
    table.to_parquet(path)
    return path


# ---- 1 and 6: null hypotheses


@pytest.mark.parametrize("partitioned", [False, True], ids=["in-memory", "partitioned"])
def test_every_hypothesis_null_is_one_line(tmp_path, partitioned):
    systems = set(pd.read_csv(DEMO)["system"])
    demo_with_null_system(tmp_path, systems)
    extra = ["partition.rows=10"] if partitioned else []
    done = werest(tmp_path, "estimate", "input=t.parquet", "output_dir=out", *extra)
    line = one_line_error(done, "estimate")
    assert line == (
        "werest estimate: error: t.parquet, column 'hypothesis': every hypothesis is null "
        "(a null means the system was not run): no system's output to work on"
    )
    assert listing(tmp_path) == {"t.parquet"}


@pytest.mark.parametrize("partitioned", [False, True], ids=["in-memory", "partitioned"])
def test_a_system_without_hypotheses_is_a_warning_and_naming_it_says_so(tmp_path, partitioned):
    demo_with_null_system(tmp_path, {"base"})
    extra = ["partition.rows=10"] if partitioned else []
    done = werest(tmp_path, "estimate", "input=t.parquet", "output_dir=out", *extra)
    assert done.returncode == 0, done.stderr
    assert (
        "WARNING werest.ingest.table: t.parquet: system 'base' left out: it has no hypothesis, "
        "every one is null (not run?)" in done.stderr.splitlines()
    )
    for setting in ("target=base", "proxy=base"):
        done = werest(tmp_path, "estimate", "input=t.parquet", "output_dir=o2", setting, *extra)
        role = setting.split("=")[0]
        assert one_line_error(done, "estimate") == (
            f"werest estimate: error: {role} system 'base' has no hypotheses: every row of it "
            "in the input has a null hypothesis (not run?)"
        )
    assert not (tmp_path / "o2").exists()


# ---- 2, 3 and 4: an output that cannot be replaced, refused before the work


def test_estimate_over_an_immutable_output_folder(tmp_path, immutable):
    assert werest(tmp_path, "estimate", f"input={DEMO}", "output_dir=D").returncode == 0
    before, names = snapshot(tmp_path / "D"), listing(tmp_path)
    immutable(tmp_path / "D")
    done = werest(tmp_path, "estimate", f"input={DEMO}", "output_dir=D", "log_level=INFO")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "stage" not in done.stderr.lower().replace("staging", "")  # no stage ran
    assert done.stderr.splitlines()[-1] == (
        "werest estimate: error: D: cannot replace the previous output: it is immutable or "
        "append-only (lsattr shows the flag; chattr -i or -a clears it)"
    )
    assert snapshot(tmp_path / "D") == before and listing(tmp_path) == names


def test_import_over_an_immutable_table(tmp_path, immutable):
    (tmp_path / "s.csv").write_text("id,hypothesis\nu1,hello\n")
    args = ["import", "csv", "s.csv", "--out", "T.parquet", "reference_column=null"]
    assert werest(tmp_path, *args).returncode == 0
    before, names = snapshot(tmp_path / "T.parquet"), listing(tmp_path)
    immutable(tmp_path / "T.parquet")
    assert one_line_error(werest(tmp_path, *args), "import") == (
        "werest import: error: T.parquet: cannot replace the previous output: it is immutable "
        "or append-only (lsattr shows the flag; chattr -i or -a clears it)"
    )
    assert snapshot(tmp_path / "T.parquet") == before and listing(tmp_path) == names


def test_score_over_a_folder_with_one_immutable_file(tmp_path, immutable):
    assert werest(tmp_path, "score", f"input={DEMO}", "output_dir=S").returncode == 0
    before, names = snapshot(tmp_path / "S"), listing(tmp_path)
    immutable(tmp_path / "S" / "scores.csv")
    assert one_line_error(werest(tmp_path, "score", f"input={DEMO}", "output_dir=S"), "score") == (
        "werest score: error: S: cannot replace the previous output: S/scores.csv is immutable "
        "or append-only (lsattr shows the flag; chattr -i or -a clears it)"
    )
    assert snapshot(tmp_path / "S") == before
    assert listing(tmp_path) == names  # no hidden .S.old-* beside it


# ---- 5 and 7: settings refused before any work


def test_n_jobs_beyond_four_per_core_is_refused(tmp_path):
    done = werest(tmp_path, "estimate", f"input={DEMO}", "output_dir=out", "n_jobs=4000")
    assert "n_jobs must be a whole number <= " in one_line_error(done, "estimate")
    assert "per core, and this machine gives werest" in done.stderr
    assert listing(tmp_path) == set()


@pytest.mark.parametrize("partitioned", [False, True], ids=["in-memory", "partitioned"])
def test_a_fairness_category_that_is_no_column(tmp_path, partitioned):
    extra = ["partition.rows=10"] if partitioned else []
    done = werest(
        tmp_path,
        "leaderboard",
        f"input={DEMO}",
        "output_dir=out",
        "fairness.categories=[dialect]",
        *extra,
    )
    assert one_line_error(done, "leaderboard") == (
        "werest leaderboard: error: fairness.categories: the input has no column 'dialect' "
        "(its columns: dataset, utt_id, system, hypothesis, reference); name demographic "
        "columns it has, or leave fairness.categories unset"
    )
    assert listing(tmp_path) == set()
