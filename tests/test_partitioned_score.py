"""Bounded-memory and Dask runs of werest score give exactly the in-memory scores and ranking."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.test_partitioned import read_table_folder, shared_hive_folder
from werest.cli import main
from werest.demo import demo_table_path
from werest.partitioned_score import score_partitioned
from werest.proxy import rank_systems
from werest.scoring import corpus_scores, readable_scores, score_utterances
from werest.table import KEY, read_table, write_table


def _in_memory(table: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """The in-memory run's scores, with its utterances.csv written as werest score does."""
    scored = score_utterances(table)
    write_table(readable_scores(scored, table), folder / "utterances.csv")
    return corpus_scores(scored)


def _same_rows(expected: Path, files: list[Path]) -> None:
    found = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    expected_rows = pd.read_csv(expected).sort_values(KEY, ignore_index=True)
    pd.testing.assert_frame_equal(found.sort_values(KEY, ignore_index=True), expected_rows)


def test_demo_in_chunks_and_partitions_equals_the_in_memory_run(tmp_path):
    """Chunks of 7 rows split utterances across chunks; 3 partitions regroup them."""
    expected = _in_memory(read_table(demo_table_path()), tmp_path)
    result = score_partitioned(demo_table_path(), tmp_path / "part", chunk_rows=7, n_partitions=3)
    pd.testing.assert_frame_equal(result.scores, expected)  # rates, bootstrap CIs, counts
    assert rank_systems(result.scores) == rank_systems(expected)
    assert result.n_partitions == 3 and result.n_rows == 56
    _same_rows(tmp_path / "utterances.csv", result.utterance_files)
    assert not [p.name for p in tmp_path.rglob(".*")]  # scratch and staging removed


def test_the_bootstrap_does_not_depend_on_the_row_order():
    """The canonical (utterance hash) order that makes partitions agree: a shuffled table
    gives the same intervals."""
    table = read_table(demo_table_path())
    shuffled = table.sample(frac=1, random_state=3).reset_index(drop=True)
    expected = corpus_scores(score_utterances(table))
    pd.testing.assert_frame_equal(corpus_scores(score_utterances(shuffled)), expected)


@pytest.mark.shared
def test_shared_data_as_a_hive_parquet_folder_equals_the_in_memory_run(
    dighr_table, thennal10_table, tmp_path
):
    """Real data: two dighr datasets (English, empty hypotheses, systems missing utterances)
    and thennal10 (English, Arabic, Malayalam), from dataset=<name>/ folders, 500 rows a
    chunk."""
    folder = shared_hive_folder(dighr_table, thennal10_table, tmp_path / "input")
    expected = _in_memory(read_table_folder(folder), tmp_path)
    result = score_partitioned(folder, tmp_path / "part", chunk_rows=500, n_partitions=5)
    assert len(expected) >= 8 and expected["dataset"].nunique() == 5
    pd.testing.assert_frame_equal(result.scores, expected)
    assert rank_systems(result.scores) == rank_systems(expected)
    _same_rows(tmp_path / "utterances.csv", result.utterance_files)


def test_the_cli_writes_the_same_scores_and_ranking_byte_for_byte(tmp_path, capsys):
    demo = str(demo_table_path())
    assert main(["score", f"input={demo}", f"output_dir={tmp_path / 'mem'}"]) == 0
    shown = capsys.readouterr().out
    overrides = ["partition.rows=10", "partition.count=4", f"output_dir={tmp_path / 'part'}"]
    assert main(["score", f"input={demo}", *overrides]) == 0
    out = capsys.readouterr().out
    assert out.split("wrote")[0] == shown.split("wrote")[0]  # the same table and ranking
    assert f"wrote 5 files in {tmp_path / 'part'}" in out  # utterances/ is one of them
    for name in ("scores.csv", "ranking.json"):
        assert (tmp_path / "part" / name).read_bytes() == (tmp_path / "mem" / name).read_bytes()
    assert len(list((tmp_path / "part" / "utterances").glob("part-*.csv"))) == 4
    assert "rows: 10" in (tmp_path / "part" / "config.yaml").read_text()


def test_an_input_without_references_is_one_line_naming_the_file(tmp_path, capsys):
    path = tmp_path / "unlabelled.csv"
    read_table(demo_table_path()).drop(columns="reference").to_csv(path, index=False)
    out = tmp_path / "out"
    status = main(["score", f"input={path}", f"output_dir={out}", "partition.rows=10"])
    error = capsys.readouterr().err.strip()
    assert status == 2 and "\n" not in error
    assert f"{path}, column 'reference': the table has no 'reference' column" in error
    assert not out.exists() or not any(out.iterdir())


# --------------------------------------------------------------------------- Dask

distributed = pytest.importorskip("distributed", reason="needs werest[cluster] (dask)")


def test_a_local_cluster_and_a_killed_worker_give_the_in_memory_scores(tmp_path, capsys):
    """The CLI joins a running LocalCluster by address; a worker killed while it scores a
    partition has its task rescheduled, and every output equals the in-memory run's."""
    from tests.test_partitioned import KillOnce
    from werest.cluster import dask_client

    demo = str(demo_table_path())
    assert main(["score", f"input={demo}", f"output_dir={tmp_path / 'mem'}"]) == 0
    marker = tmp_path / "killed"
    with dask_client("local", workers=2) as client:
        client.register_plugin(KillOnce(str(marker), task="score_partition"))
        address = f"cluster.address={client.scheduler.address}"
        args = [f"input={demo}", f"output_dir={tmp_path / 'dask'}", address, "partition.count=5"]
        assert main(["score", *args]) == 0  # a cluster named: partitioned without rows
        assert client.status == "running"  # the CLI closed its own client, not the cluster
    assert marker.exists()  # a worker did die mid-run
    for name in ("scores.csv", "ranking.json"):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "mem" / name).read_bytes()
    files = sorted((tmp_path / "dask" / "utterances").glob("part-*.csv"))
    assert len(files) == 5
    _same_rows(tmp_path / "mem" / "utterances.csv", files)
