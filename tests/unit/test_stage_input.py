"""One orchestrator per stage (docs/architecture.md): ``werest.partition.engine.stage_input``
gives a stage its input as partitions, a table in memory as its one partition, and each
stage's ``*_input`` function runs the same code on both."""

from __future__ import annotations

import pandas as pd
import pytest

from werest.demo import demo_table_path
from werest.errors import ConfigError
from werest.ingest.table import read_table
from werest.partition.engine import Partitioning, stage_input
from werest.partition.score import score_input
from werest.stats import Bootstrap


def _calls(folder, output, context):
    return (folder, output, context)


def test_a_table_is_its_one_partition_run_here_and_nothing_is_written(tmp_path):
    table = read_table(demo_table_path())
    select = lambda frame: frame[frame["system"] != "tiny"]  # noqa: E731
    no_runner = Partitioning(runner=lambda *args: pytest.fail("an in-memory run runs here"))
    with stage_input(
        table, tmp_path / "out", no_runner, final=tmp_path / "out" / "parts", select=select
    ) as run:
        assert run.in_memory
        assert run.spill.systems == sorted(set(table["system"]) - {"tiny"})
        assert run.spill.datasets == sorted(table["dataset"].unique())  # before the selection
        [part] = run.spill.partitions
        assert part.equals(table[table["system"] != "tiny"])
        [(folder, output, context)] = run.run(_calls, "context")
        assert folder is part and output is None and context == "context"
        assert run.place([]) == []
    assert list(tmp_path.iterdir()) == []  # no scratch, no staging, no output folder


def test_a_path_is_spilled_and_its_outputs_placed_at_once(tmp_path):
    out = tmp_path / "out"
    seen = []

    def runner(function, folders, outputs, context):
        seen.append(list(outputs))
        return [function(f, o, context) for f, o in zip(folders, outputs, strict=True)]

    partitioning = Partitioning(rows=7, count=3, runner=runner)
    with stage_input(demo_table_path(), out, partitioning, final=out / "parts") as run:
        assert not run.in_memory
        assert len(run.spill.partitions) == 3
        results = run.run(_calls, None)
        assert [r[1].name for r in results] == [f"part-{i:05d}.csv" for i in range(3)]
        assert run.run(_calls, None, write=False)[0][1] is None
        assert len(seen) == 2  # both runs went through the partitioning's runner
        for _, output, _ in results:
            output.write_text("x\n")
        files = run.place([type("R", (), {"output": o})() for _, o, _ in results])
    assert [f.name for f in files] == [f"part-{i:05d}.csv" for i in range(3)]
    assert all(f.is_file() for f in files)
    assert sorted(p.name for p in out.iterdir()) == ["parts"]  # the scratch folder is gone


@pytest.mark.parametrize("partitions", [None, 4])
def test_score_runs_one_code_path_in_memory_and_in_partitions(tmp_path, monkeypatch, partitions):
    """The in-memory run goes through the same per-partition function as the partitioned
    one (counted), and both give the same scores."""
    from werest.partition import score

    calls = []
    original = score.score_partition

    def counted(folder, output, context):
        calls.append(isinstance(folder, pd.DataFrame))
        return original(folder, output, context)

    monkeypatch.setattr(score, "score_partition", counted)
    table = read_table(demo_table_path())
    source = table if partitions is None else demo_table_path()
    result = score_input(
        source,
        tmp_path / "run",
        partitioning=Partitioning(count=partitions, per_process=0),
        bootstrap=Bootstrap(n_resamples=50),
    )
    expected = 1 if partitions is None else partitions
    assert calls == [partitions is None] * expected
    reference = score_input(table, tmp_path / "again", bootstrap=Bootstrap(n_resamples=50))
    pd.testing.assert_frame_equal(result.scores, reference.scores)
    assert (result.rows is None) == (partitions is not None)


def test_partitioning_is_the_partition_block_built():
    """The commands build the section from their ``partition`` block (its ``_target_``), whose
    defaults are the section's own: declared once, in the library."""
    from werest.cli.commands._common import build
    from werest.cli.config import load_settings
    from werest.partition.engine import DEFAULT_CHUNK_ROWS, local_runner, run_locally

    settings = load_settings("estimate", ["input=t.csv", "partition.count=5"])
    built = build(settings.partition, Partitioning)
    assert built == Partitioning(count=5)
    assert built.per_process == Partitioning().per_process == 8
    assert built.chunk_rows == DEFAULT_CHUNK_ROWS
    assert Partitioning(per_process=0).run_partitions is run_locally is local_runner(0)
    with pytest.raises(ConfigError, match=r"partition\.count must be >= 1"):
        Partitioning(count=0)
