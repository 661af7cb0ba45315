"""Bounded-memory and Dask runs of werest estimate give exactly the in-memory summary."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from werest.cli.main import main
from werest.demo import demo_table_path
from werest.estimation.outputs import write_outputs
from werest.estimation.pipeline import estimate_frame
from werest.features.agreement import CONTEXT_FEATURES
from werest.ingest.table import read_table
from werest.model.files import Models, default_model_path, load_model
from werest.partition import engine as partitioned
from werest.partition import reading
from werest.partition.engine import (
    MIN_PARTITIONS,
    Partitioning,
    automatic_partitions,
    partition_of,
)
from werest.partition.estimate import estimate_input


def in_process(rows: int | None, count: int | None = None) -> Partitioning:
    """``rows`` a chunk, ``count`` partitions, run one after another in this process."""
    return Partitioning(rows, count, per_process=0)


@pytest.fixture(scope="module")
def models():
    return Models(load_model(default_model_path()))


def _in_memory(table, models, tmp_path):
    run = estimate_frame(table, models)
    utterances, records, warnings = run.utterances, run.records, run.warnings
    write_outputs(utterances, records, tmp_path)  # the same CSV formatting as the partitions
    return pd.read_csv(tmp_path / "utterances.csv"), records, warnings


def _same_rows(expected: pd.DataFrame, files: list[Path]) -> None:
    found = pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
    key = ["dataset", "utt_id", "system"]
    expected = expected.drop(columns=list(CONTEXT_FEATURES))
    expected = expected.sort_values(key, ignore_index=True)
    found = found[expected.columns].sort_values(key, ignore_index=True)
    pd.testing.assert_frame_equal(found, expected, check_dtype=False)


@pytest.mark.parametrize("labelled", [True, False])
def test_demo_in_chunks_and_partitions_equals_the_in_memory_run(models, tmp_path, labelled):
    """Chunks of 7 rows split utterances across chunks; 3 partitions regroup them."""
    table = read_table(demo_table_path())
    if not labelled:
        table = table.drop(columns="reference")
    path = tmp_path / "input.csv"
    table.to_csv(path, index=False)
    expected_rows, records, warnings = _in_memory(table, models, tmp_path / "mem")
    result = estimate_input(path, models, tmp_path / "part", partitioning=in_process(7, 3))
    assert all(("wer" in r) == labelled for r in records)
    assert result.records == records  # estimates, bootstrap CIs, intervals, proxies, truth
    assert result.warnings == warnings
    assert result.n_partitions == 3 and result.n_rows == 56
    _same_rows(expected_rows, result.utterance_files)
    saved = json.loads((tmp_path / "part" / "summary.json").read_text())
    assert saved == json.loads((tmp_path / "mem" / "summary.json").read_text())
    assert not list(tmp_path.glob(".werest-partitions-*"))  # the spilled input is removed


def test_shared_data_as_a_hive_parquet_folder_equals_the_in_memory_run(
    dighr_table, thennal10_table, models, tmp_path
):
    """Real data, several datasets and languages, with references (true WER) and systems
    missing utterances (15 rows dropped: the different-sets guard), read from dataset=<name>/
    folders in chunks of 500 rows."""
    folder = shared_hive_folder(dighr_table, thennal10_table, tmp_path / "input")
    table = read_table_folder(folder)
    expected_rows, records, warnings = _in_memory(table, models, tmp_path / "mem")
    result = estimate_input(folder, models, tmp_path / "part", partitioning=in_process(500))
    assert len(records) >= 8 and all("wer" in r for r in records)
    assert any("different utterance sets" in w["message"] for w in warnings)
    assert result.records == records
    assert result.warnings == warnings
    assert result.order.systems == estimate_order(models, table).systems
    _same_rows(expected_rows, result.utterance_files)


def shared_hive_folder(dighr_table, thennal10_table, folder: Path) -> Path:
    """300 utterances of two dighr datasets and all of thennal10, 15 rows dropped, written
    as a Parquet dataset partitioned by dataset (``folder/dataset=<name>/part-0.parquet``)."""
    dighr = dighr_table[dighr_table["dataset"].isin(["dighr-190423", "dighr-190301"])]
    keep = dighr[["dataset", "utt_id"]].drop_duplicates().groupby("dataset").head(300)
    table = pd.concat(
        [dighr.merge(keep, on=["dataset", "utt_id"]), thennal10_table], ignore_index=True
    )
    table = table.drop(index=table.index[table["dataset"] == "dighr-190423"][:15])
    for dataset, rows in table.groupby("dataset"):
        (folder / f"dataset={dataset}").mkdir(parents=True)
        rows.drop(columns="dataset").to_parquet(folder / f"dataset={dataset}" / "part-0.parquet")
    return folder


def read_table_folder(folder: Path) -> pd.DataFrame:
    """The hive folder as one validated table (the in-memory run's input)."""
    from werest.ingest.table import validate_table

    frames = [
        pd.read_parquet(file).assign(dataset=file.parent.name.split("=", 1)[1])
        for file in sorted(folder.rglob("*.parquet"))
    ]
    return validate_table(pd.concat(frames, ignore_index=True))


def estimate_order(models, table):
    from werest.estimation.estimate import choose_ranking
    from werest.estimation.guards import sample_pairs

    pairs = sample_pairs(table, normaliser=models.normaliser)
    return choose_ranking(models, table, pairs=pairs)


def _child_pid(folder, output, context) -> tuple[int, str]:
    """A partition function that tells which process ran it (importable by a spawned child)."""
    return os.getpid(), Path(folder).name


def test_child_processes_are_replaced_after_their_share_of_partitions(tmp_path):
    folders = [tmp_path / f"p-{i:05d}" for i in range(5)]
    outputs = [tmp_path / f"part-{i:05d}.csv" for i in range(5)]
    results = partitioned.child_process_runner(per_process=2)(_child_pid, folders, outputs, None)
    assert [name for _, name in results] == [f.name for f in folders]  # in partition order
    pids = [pid for pid, _ in results]
    assert os.getpid() not in pids
    assert pids[0] == pids[1] != pids[2] == pids[3] != pids[4]  # 2 partitions, then a new one


def test_child_processes_give_the_in_memory_summary_and_rows(models, tmp_path):
    """The default runner of werest estimate (no cluster): the same records and rows as the
    in-memory run, with one partition per child so every partition crosses a process."""
    table = read_table(demo_table_path())
    expected_rows, records, warnings = _in_memory(table, models, tmp_path / "mem")
    result = estimate_input(
        demo_table_path(),
        models,
        tmp_path / "part",
        partitioning=Partitioning(7, 3, per_process=1),
    )
    assert result.records == records
    assert result.warnings == warnings
    _same_rows(expected_rows, result.utterance_files)


def test_partition_numbers_are_stable_and_keep_utterances_together():
    frame = pd.DataFrame(
        {"dataset": ["a", "a", "b", "a"], "utt_id": ["1", "1", "1", "2"], "system": list("xyxz")}
    )
    parts = partition_of(frame, 7)
    assert parts[0] == parts[1] and list(parts) == list(partition_of(frame.iloc[::-1], 7))[::-1]
    assert list(parts) == [1, 1, 3, 6]  # fixed across runs and machines (a stable hash)


def test_the_cli_setting_writes_the_same_summary_and_partitioned_rows(tmp_path, capsys):
    demo = str(demo_table_path())
    assert main(["estimate", f"input={demo}", f"output_dir={tmp_path / 'mem'}"]) == 0
    overrides = ["partition.rows=10", "partition.count=4", f"output_dir={tmp_path / 'part'}"]
    capsys.readouterr()
    assert main(["estimate", f"input={demo}", *overrides]) == 0
    out = capsys.readouterr().out
    assert f"wrote 6 files in {tmp_path / 'part'}" in out  # utterances/, winner.json among them
    mem, part = tmp_path / "mem" / "summary.json", tmp_path / "part" / "summary.json"
    assert part.read_bytes() == mem.read_bytes()
    assert len(list((tmp_path / "part" / "utterances").glob("part-*.csv"))) == 4
    assert "rows: 10" in (tmp_path / "part" / "config.yaml").read_text()


@pytest.mark.parametrize(
    "command, output",
    [("estimate", "summary.json"), ("score", "scores.csv")],
)
def test_a_duplicate_across_chunks_is_one_line_naming_file_row_and_column(
    tmp_path, capsys, command, output
):
    table = read_table(demo_table_path())
    path = tmp_path / "dup.csv"
    pd.concat([table, table.iloc[[3]]], ignore_index=True).to_csv(path, index=False)
    out = tmp_path / "out"
    status = main([command, f"input={path}", f"output_dir={out}", "partition.rows=10"])
    error = capsys.readouterr().err.strip()
    assert status == 2 and "\n" not in error
    assert f"error: {path}, row 57, column 'utt_id': duplicate" in error
    assert error.endswith("first seen at row 4")
    assert not (out / output).exists() and not (out / "utterances").exists()
    assert not [p for p in tmp_path.rglob(".*") if p.is_dir()]  # no scratch left


def test_the_spill_child_logs_and_fails_as_the_driver_would(tmp_path, capfd):
    """The spill runs in a spawned child: its INFO lines still reach stderr, and a bad cell it
    finds is the usual one line naming file, row and column, with nothing left behind."""
    table = read_table(demo_table_path())
    nulls = tmp_path / "nulls.parquet"  # a CSV's empty cell is an empty hypothesis, not null
    table.assign(hypothesis=table["hypothesis"].mask(table.index == 5)).to_parquet(nulls)
    overrides = ["partition.rows=10", "log_level=INFO"]
    assert main(["estimate", f"input={nulls}", f"output_dir={tmp_path / 'ok'}", *overrides]) == 0
    assert (
        f"{nulls}: 1 row(s) with a null hypothesis (system not run) dropped"
        in capfd.readouterr().err
    )

    bad = tmp_path / "bad.csv"
    table.assign(system=table["system"].mask(table.index == 8, " ")).to_csv(bad, index=False)
    out = tmp_path / "out"
    assert main(["estimate", f"input={bad}", f"output_dir={out}", *overrides]) == 2
    err = capfd.readouterr().err
    assert "Traceback" not in err
    error = err.strip().splitlines()[-1]
    assert error.endswith(f"error: {bad}, row 9, column 'system': empty value in a key column")
    assert not out.exists() or not any(out.iterdir())
    assert not [p for p in tmp_path.rglob(".*") if p.is_dir()]  # no scratch left


@pytest.mark.parametrize(
    "override, message",
    [
        ("missing_hypotheses=deletions", "needs the whole table"),
        ("ranking=references", "needs the whole table"),
    ],
)
def test_settings_that_need_the_whole_table_are_refused(tmp_path, capsys, override, message):
    args = [f"input={demo_table_path()}", f"output_dir={tmp_path}", "partition.rows=10"]
    assert main(["estimate", *args, override]) == 2
    assert message in capsys.readouterr().err


# --------------------------------------------------------------------------- Dask

distributed = pytest.importorskip("distributed", reason="needs werest[cluster] (dask)")
from tests.cluster_helpers import KillOnce  # noqa: E402

pytestmark = [pytest.mark.shared, pytest.mark.cluster]


@pytest.fixture(scope="module")
def client():
    from werest.partition.cluster import dask_client

    with dask_client("local", workers=2) as client:
        yield client


def test_a_local_cluster_gives_the_in_memory_summary(client, models, tmp_path):
    from werest.partition.cluster import dask_runner

    in_memory = estimate_frame(read_table(demo_table_path()), models)
    records, warnings = in_memory.records, in_memory.warnings
    result = estimate_input(
        demo_table_path(),
        models,
        tmp_path / "dask",
        partitioning=Partitioning(10, 6, runner=dask_runner(client)),
    )
    assert result.records == records and result.warnings == warnings
    assert len(result.utterance_files) == 6


def test_the_cli_joins_a_running_scheduler_by_address(client, tmp_path, capsys):
    demo = str(demo_table_path())
    assert main(["estimate", f"input={demo}", f"output_dir={tmp_path / 'mem'}"]) == 0
    address = f"cluster.address={client.scheduler.address}"
    args = [f"input={demo}", f"output_dir={tmp_path / 'dask'}", address, "partition.count=5"]
    assert main(["estimate", *args]) == 0  # a cluster named: partitioned without partition.rows
    mem, dask = tmp_path / "mem" / "summary.json", tmp_path / "dask" / "summary.json"
    assert dask.read_bytes() == mem.read_bytes()
    assert len(list((tmp_path / "dask" / "utterances").glob("part-*.csv"))) == 5
    assert client.status == "running"  # the CLI closed its own client, not the cluster


def test_a_worker_killed_mid_run_has_its_partitions_retried(models, tmp_path):
    from werest.partition.cluster import dask_client, dask_runner

    clean = estimate_input(
        demo_table_path(), models, tmp_path / "clean", partitioning=in_process(None, 4)
    )
    marker = tmp_path / "killed"
    with dask_client("local", workers=2) as client:
        # the worker holding the shared context (often its only copy): it is computed again
        client.register_plugin(KillOnce(str(marker), "estimate_partition", holding="_shared_value"))
        result = estimate_input(
            demo_table_path(),
            models,
            tmp_path / "dask",
            partitioning=Partitioning(count=4, runner=dask_runner(client, retries=2)),
        )
    assert marker.exists()  # a worker did die mid-run
    assert result.records == clean.records
    for a, b in zip(sorted(result.utterance_files), sorted(clean.utterance_files), strict=True):
        assert a.read_bytes() == b.read_bytes()


def test_the_normalisation_cache_changes_no_output_on_shared_data(thennal10_table, dighr_table):
    """Strings normalised for one partition are reused for the next; every output equals the
    reference (uncached) normaliser's, across languages (auto: ar, ml, en)."""
    from werest.text import AUTO, NormalisationCache, cached_normalisation, normalise_many

    table = pd.concat([thennal10_table, dighr_table.head(20_000)], ignore_index=True)
    parts = [table.iloc[i::2] for i in range(2)]
    cache = NormalisationCache()
    with cached_normalisation(cache):
        cached = [normalise_many(p["hypothesis"], AUTO, p.get("language")) for p in parts]
        again = normalise_many(parts[0]["hypothesis"], AUTO, parts[0].get("language"))
    for part, found in zip(parts, cached, strict=True):
        expected = normalise_many(part["hypothesis"], AUTO, part.get("language"))
        pd.testing.assert_series_equal(found, expected)
    pd.testing.assert_series_equal(again, cached[0])
    languages = table["language"].fillna("").astype(str)
    distinct = pd.MultiIndex.from_arrays([table["hypothesis"], languages]).nunique()
    assert len(cache.entries) == distinct  # each distinct (text, language) normalised once


def test_automatic_partition_count_follows_the_input_size(tmp_path, monkeypatch):
    """Parquet rows are counted from the footers, a CSV's rows estimated from its size; the
    count keeps each partition near ROWS_PER_PARTITION rows and never goes below the floor."""
    table = read_table(demo_table_path())
    folder = tmp_path / "folder"
    folder.mkdir()
    for number in range(3):
        table.to_parquet(folder / f"part-{number}.parquet", index=False)
    csv = tmp_path / "input.csv"
    table.to_csv(csv, index=False)
    assert automatic_partitions(folder) == MIN_PARTITIONS  # 3 x 56 rows
    monkeypatch.setattr(reading, "ROWS_PER_PARTITION", 10)  # the engine's input reader
    assert automatic_partitions(folder) == -(-3 * len(table) // 10) > MIN_PARTITIONS
    monkeypatch.setattr(reading, "MIN_PARTITIONS", 1)
    estimated = automatic_partitions(csv)
    assert abs(estimated - len(table) / 10) <= 1  # the header line counts as a row
