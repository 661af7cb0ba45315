"""Bounded-memory and Dask runs of werest score and werest features give exactly the
in-memory scores, ranking and feature rows."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.integration.test_partitioned import in_process, read_table_folder, shared_hive_folder
from werest.cli.main import main
from werest.demo import demo_table_path
from werest.features.agreement import agreement_features
from werest.features.proxy import Ranking, choose_proxies, rank_systems, references_ranking
from werest.ingest.table import KEY, read_table, write_table
from werest.partition.engine import Partitioning, child_process_runner
from werest.partition.features import RANKING_ALTERNATIVES, features_input
from werest.partition.score import score_input
from werest.text import AUTO
from werest.text.scoring import corpus_scores, readable_scores, score_utterances

pytestmark = [pytest.mark.shared, pytest.mark.cluster]


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
    result = score_input(demo_table_path(), tmp_path / "part", partitioning=in_process(7, 3))
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
    result = score_input(folder, tmp_path / "part", partitioning=in_process(500, 5))
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


# --------------------------------------------------------------------------- features


def _features_in_memory(table, ranking=None, *, targets=None, proxy=None) -> pd.DataFrame:
    """What werest features writes in memory, sorted by key."""
    ranking = ranking or references_ranking(table, AUTO, RANKING_ALTERNATIVES)
    proxies = choose_proxies(table, ranking, targets=targets, proxy=proxy)
    return agreement_features(table, proxies).sort_values(KEY, ignore_index=True)


def _read_features(folder: Path) -> pd.DataFrame:
    """A features folder as one frame sorted by key (the Parquet dataset read whole)."""
    return pd.read_parquet(folder).sort_values(KEY, ignore_index=True)


def test_features_in_chunks_and_partitions_equal_the_in_memory_table(tmp_path):
    """Ranked on the references from the partitions, as the in-memory run ranks the table."""
    table = read_table(demo_table_path())
    result = features_input(demo_table_path(), tmp_path / "features", partitioning=in_process(7, 3))
    assert result.ranking == references_ranking(table, AUTO, RANKING_ALTERNATIVES)
    assert [f.name for f in result.files] == [f"part-{i:05d}.parquet" for i in range(3)]
    expected = _features_in_memory(table)
    assert result.n_features == len(expected)
    pd.testing.assert_frame_equal(_read_features(tmp_path / "features"), expected)
    assert not [p.name for p in tmp_path.rglob(".*")]  # scratch and staging removed


def test_an_explicit_proxy_missing_from_whole_partitions_gives_no_proxy_rows(tmp_path):
    """The proxy transcribed 2 utterances: most of 12 partitions have none of its rows, and
    their target rows get no proxy, as in memory."""
    table = read_table(demo_table_path())
    kept = table["utt_id"].isin(table["utt_id"].unique()[:2])
    table = table[(table["system"] != "base") | kept].reset_index(drop=True)
    path = tmp_path / "input.csv"
    table.to_csv(path, index=False)
    targets = ["tiny", "edge-kws"]
    result = features_input(
        path, tmp_path / "f", targets=targets, proxy="base", partitioning=in_process(9, 12)
    )
    assert result.n_partitions > 2  # so some partition lacks both of the proxy's utterances
    ranking = Ranking.from_order(["base"])
    expected = _features_in_memory(table, ranking, targets=targets, proxy="base")
    assert (expected["status"] == "no proxy hypothesis").sum() > len(expected) / 2
    pd.testing.assert_frame_equal(_read_features(tmp_path / "f"), expected)


def test_systems_missing_from_the_ranking_are_reported_once_and_ranked_last(
    tmp_path, capfd, caplog
):
    """Partitions run in child processes that log to stderr: the warning that ``tiny`` and
    ``edge-kws`` are not ranked comes once, from the driver, not once per partition."""
    table = read_table(demo_table_path())
    ranking = Ranking.from_order(["large-v3", "base"])
    result = features_input(
        demo_table_path(),
        tmp_path / "f",
        ranking=ranking,
        partitioning=Partitioning(9, 4, runner=child_process_runner(2)),
    )
    assert result.n_partitions == 4
    message = "systems not in the ranking, ranked last: ['edge-kws', 'tiny']"
    assert [r.getMessage() for r in caplog.records] == [message]  # the driver's
    assert f"werest.features.proxy: {message}" not in capfd.readouterr().err  # no child's line
    pd.testing.assert_frame_equal(
        _read_features(tmp_path / "f"), _features_in_memory(table, ranking)
    )


@pytest.mark.shared
def test_features_of_shared_data_as_a_hive_parquet_folder(dighr_table, thennal10_table, tmp_path):
    """Real data (English, Arabic, Malayalam; systems missing utterances), ranked on its
    references from 4 partitions."""
    folder = shared_hive_folder(dighr_table, thennal10_table, tmp_path / "input")
    table = read_table_folder(folder)
    result = features_input(folder, tmp_path / "features", partitioning=in_process(500, 4))
    assert result.ranking == references_ranking(table, AUTO, RANKING_ALTERNATIVES)
    expected = _features_in_memory(table)
    pd.testing.assert_frame_equal(_read_features(tmp_path / "features"), expected)


def test_the_features_cli_writes_a_parquet_folder_of_the_in_memory_rows(tmp_path, capsys):
    demo = str(demo_table_path())
    assert main(["features", f"input={demo}", f"out={tmp_path / 'mem.parquet'}"]) == 0
    out = tmp_path / "part.parquet"
    overrides = ["partition.rows=10", "partition.count=4"]
    assert main(["features", f"input={demo}", f"out={out}", *overrides]) == 0
    assert f"wrote {out}, {out}.config.yaml" in capsys.readouterr().out
    expected = pd.read_parquet(tmp_path / "mem.parquet").sort_values(KEY, ignore_index=True)
    pd.testing.assert_frame_equal(_read_features(out), expected)
    assert len(list(out.glob("part-*.parquet"))) == 4


@pytest.mark.parametrize(
    "drop, out, message",
    [
        ("reference", "f", "the input has no references to rank its systems on: pass ranking="),
        (None, "f.csv", "a partitioned run writes a folder of Parquet files"),
    ],
)
def test_features_refusals_are_one_line_and_leave_nothing(tmp_path, capsys, drop, out, message):
    path = tmp_path / "input.csv"
    table = read_table(demo_table_path())
    (table.drop(columns=drop) if drop else table).to_csv(path, index=False)
    status = main(["features", f"input={path}", f"out={tmp_path / out}", "partition.rows=10"])
    error = capsys.readouterr().err.strip()
    assert status == 2 and "\n" not in error and message in error
    assert sorted(p.name for p in tmp_path.iterdir()) == ["input.csv"]


# --------------------------------------------------------------------------- Dask

distributed = pytest.importorskip("distributed", reason="needs werest[cluster] (dask)")


@pytest.fixture(scope="module")
def client():
    from werest.partition.cluster import dask_client

    with dask_client("local", workers=2) as client:
        yield client


def test_a_local_cluster_and_a_killed_worker_give_the_in_memory_scores(client, tmp_path):
    """The CLI joins a running LocalCluster by address; a worker killed while it scores a
    partition has its task rescheduled, and every output equals the in-memory run's."""
    from tests.cluster_helpers import KillOnce

    demo = str(demo_table_path())
    assert main(["score", f"input={demo}", f"output_dir={tmp_path / 'mem'}"]) == 0
    marker = tmp_path / "killed"
    client.register_plugin(KillOnce(str(marker), "score_partition"))
    address = f"cluster.address={client.scheduler.address}"
    args = [f"input={demo}", f"output_dir={tmp_path / 'dask'}", address, "partition.count=5"]
    assert main(["score", *args]) == 0  # a cluster named: partitioned without partition.rows
    assert client.status == "running"  # the CLI closed its own client, not the cluster
    assert marker.exists()  # a worker did die mid-run
    for name in ("scores.csv", "ranking.json"):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "mem" / name).read_bytes()
    files = sorted((tmp_path / "dask" / "utterances").glob("part-*.csv"))
    assert len(files) == 5
    _same_rows(tmp_path / "mem" / "utterances.csv", files)


def test_features_on_a_local_cluster_equal_the_in_memory_table(client, tmp_path):
    """Both passes on the workers: the ranking on the references, then the features."""
    from werest.partition.cluster import dask_runner

    table = read_table(demo_table_path())
    result = features_input(
        demo_table_path(),
        tmp_path / "f",
        partitioning=Partitioning(count=5, runner=dask_runner(client)),
    )
    assert len(result.files) == 5
    pd.testing.assert_frame_equal(_read_features(tmp_path / "f"), _features_in_memory(table))
