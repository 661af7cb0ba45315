"""Bounded-memory and Dask runs of werest leaderboard give exactly the in-memory tables."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.integration.test_partitioned import read_table_folder, shared_hive_folder
from tests.unit.test_leaderboard import toy_table
from werest.cli.main import main
from werest.demo import demo_table_path
from werest.evaluation.fairness import FairnessSettings
from werest.ingest.table import read_table
from werest.model.files import load_models
from werest.partition.engine import Partitioning, run_locally
from werest.partition.leaderboard import LeaderboardOptions, build, leaderboard_input
from werest.ranking.leaderboard import Leaderboard, select_datasets
from werest.stats import Bootstrap

BOOT = Bootstrap(200, 0.95, 0)
#: What the CLI writes that must not differ (the page differs only in the SVG's date).
OUTPUTS = ("leaderboard.csv", "datasets.csv", "pairs.csv", "descriptive.csv", "leaderboard.md")


@pytest.fixture(scope="module")
def models():
    return load_models()


def assert_same_leaderboard(found: Leaderboard, expected: Leaderboard) -> None:
    """Every table, exactly: estimates, CIs, paired tests, statistics, audits, LID."""
    for name in ("board", "datasets", "pairs", "descriptive", "utterances"):
        pd.testing.assert_frame_equal(getattr(found, name), getattr(expected, name))
    assert found.fairness.keys() == expected.fairness.keys()
    for name, frame in expected.fairness.items():
        pd.testing.assert_frame_equal(found.fairness[name], frame)
    assert (found.lid is None) == (expected.lid is None)
    if expected.lid is not None:
        for name in ("accuracy", "confusion", "thresholds", "confidence"):
            pd.testing.assert_frame_equal(getattr(found.lid, name), getattr(expected.lid, name))
    assert found.agreement == expected.agreement
    assert found.warnings == expected.warnings


def test_demo_in_chunks_and_partitions_equals_the_in_memory_run(models, tmp_path):
    """Chunks of 7 rows split utterances across chunks; 3 partitions regroup them."""
    options = LeaderboardOptions(bootstrap=BOOT)
    expected = build(read_table(demo_table_path()), models, options)
    result = leaderboard_input(
        demo_table_path(), models, tmp_path / "out", options, Partitioning(7, 3, per_process=0)
    )
    assert result.n_partitions == 3 and result.n_rows == 56
    assert_same_leaderboard(result.leaderboard, expected)
    assert not list(tmp_path.rglob(".*"))  # the spilled input is removed


def _toy_with_languages() -> pd.DataFrame:
    """The toy table (gender, durations, processing times, two datasets) with a speaker and
    language identification whose confidence differs by row."""
    table = toy_table(60)
    number = table["utt_id"].str[1:].astype(int)
    return table.assign(
        speaker="s" + (number % 7).astype(str),
        language="en",
        detected_language=["en" if n % 5 else "fr" for n in number],
        detected_language_probability=0.5 + (number % 10) / 20,
    )


@pytest.mark.parametrize(
    "selection, model", [({}, "glm"), ({"exclude_datasets": ["toy-b"]}, "glmm")]
)
def test_fairness_timings_and_language_ids_are_the_in_memory_ones(
    models, tmp_path, selection, model
):
    """The audits (the GLM's cluster-robust test with speakers and the GLMM's LRT, a
    log-duration covariate), RTFx and latency, LID accuracy and confidence, from 4 partitions
    of 11-row chunks; a dataset excluded while the chunks are read."""
    table = _toy_with_languages()
    path = tmp_path / "toy.csv"
    table.to_csv(path, index=False)
    settings = FairnessSettings(categories=("gender",), min_group_size=5, model=model)
    selected = select_datasets(table, None, selection.get("exclude_datasets"))
    expected = build(selected, models, LeaderboardOptions(bootstrap=BOOT, fairness=settings))
    assert {"summary", "comparison"} <= expected.fairness.keys() and expected.lid is not None
    assert "rtfx" in expected.board
    options = LeaderboardOptions(bootstrap=BOOT, fairness=settings, **selection)
    result = leaderboard_input(
        path, models, tmp_path / "out", options, Partitioning(11, 4, per_process=0)
    )
    assert_same_leaderboard(result.leaderboard, expected)


def test_partitions_that_lack_a_column_get_it_empty_as_the_whole_table_does(models, tmp_path):
    """A Parquet folder whose files differ in columns (only demo-calls has gender and
    durations): in 9 partitions some hold no demo-calls row, so their rows lack the columns
    the whole table has (empty for demo-meetings)."""
    table = toy_table(56)
    number = table["utt_id"].str[1:].astype(int)
    table = table.assign(dataset=["calls" if n % 4 == 0 else "meetings" for n in number])
    folder = tmp_path / "input"
    for dataset, rows in table.groupby("dataset"):
        if dataset == "meetings":
            rows = rows.drop(columns=["gender", "duration", "processing_seconds"])
        (folder / f"dataset={dataset}").mkdir(parents=True)
        rows.drop(columns="dataset").to_parquet(folder / f"dataset={dataset}" / "part-0.parquet")
    settings = FairnessSettings(categories=("gender",), min_group_size=5)
    options = LeaderboardOptions(bootstrap=BOOT, fairness=settings)
    expected = build(read_table_folder(folder), models, options)
    assert "summary" in expected.fairness and "rtfx" in expected.board
    has_gender = []

    def run(function, folders, outputs, context):
        results = run_locally(function, folders, outputs, context)
        has_gender.extend("gender" in r.rows.columns for r in results)
        return results

    result = leaderboard_input(
        folder, models, tmp_path / "out", options, Partitioning(count=9, runner=run)
    )
    assert len(has_gender) == 9 and any(has_gender) and not all(has_gender)
    assert_same_leaderboard(result.leaderboard, expected)


@pytest.mark.shared
def test_shared_data_as_a_hive_parquet_folder_equals_the_in_memory_run(
    dighr_table, thennal10_table, models, tmp_path
):
    """Real data: two dighr datasets (gender, age, accent: audited; systems missing
    utterances) and thennal10 (English, Arabic, Malayalam), from dataset=<name>/ folders
    that do not share their columns, 500 rows a chunk."""
    folder = shared_hive_folder(dighr_table, thennal10_table, tmp_path / "input")
    settings = FairnessSettings()
    boot = Bootstrap(50, 0.95, 0)
    options = LeaderboardOptions(bootstrap=boot, fairness=settings)
    expected = build(read_table_folder(folder), models, options)
    assert expected.board["datasets"].max() >= 2 and "true_wer" in expected.board
    assert "summary" in expected.fairness
    result = leaderboard_input(
        folder, models, tmp_path / "out", options, Partitioning(500, 5, per_process=0)
    )
    assert_same_leaderboard(result.leaderboard, expected)


def _same_files(found: Path, expected: Path) -> None:
    for name in OUTPUTS:
        assert (found / name).read_bytes() == (expected / name).read_bytes(), name
    # the page too: fixed chart ids, no date, nothing random
    assert (found / "leaderboard.html").read_bytes() == (expected / "leaderboard.html").read_bytes()


def test_the_cli_writes_the_same_files_byte_for_byte(tmp_path, capsys):
    path = tmp_path / "toy.csv"
    _toy_with_languages().to_csv(path, index=False)
    common = [f"input={path}", "bootstrap.n_resamples=100", "fairness.min_group_size=5"]
    assert main(["leaderboard", *common, f"output_dir={tmp_path / 'mem'}"]) == 0
    shown = capsys.readouterr().out
    overrides = ["partition.rows=10", "partition.count=4", f"output_dir={tmp_path / 'part'}"]
    assert main(["leaderboard", *common, *overrides]) == 0
    out = capsys.readouterr().out
    assert out.split("wrote")[0] == shown.split("wrote")[0]  # the same console tables
    _same_files(tmp_path / "part", tmp_path / "mem")
    assert sorted(p.name for p in (tmp_path / "part").iterdir()) == sorted(
        p.name for p in (tmp_path / "mem").iterdir()
    )  # fairness_*.csv and lid_*.csv too, and no per-utterance folder
    for name in ("fairness_summary.csv", "fairness_groups.csv", "lid_accuracy.csv"):
        assert (tmp_path / "part" / name).read_bytes() == (tmp_path / "mem" / name).read_bytes()
    assert "rows: 10" in (tmp_path / "part" / "config.yaml").read_text()
    assert not [p for p in tmp_path.rglob(".*")]  # no scratch left


@pytest.mark.parametrize(
    "override, message",
    [
        ("ranking=references", "error: ranking=references needs the whole table"),
        ("datasets=[nope]", "error: dataset 'nope' is not in the input"),
    ],
)
def test_refusals_are_one_line_and_write_nothing(tmp_path, capsys, override, message):
    args = [f"input={demo_table_path()}", f"output_dir={tmp_path / 'out'}", "partition.rows=10"]
    assert main(["leaderboard", *args, override]) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and message in error
    assert not list(tmp_path.iterdir())


# --------------------------------------------------------------------------- Dask

distributed = pytest.importorskip("distributed", reason="needs werest[cluster] (dask)")
# the module-scoped LocalCluster fixture of the score/features tests
from tests.integration.test_partitioned_commands import client  # noqa: E402, F401

pytestmark = [pytest.mark.shared, pytest.mark.audio, pytest.mark.cluster]


def test_a_local_cluster_writes_the_in_memory_files(client, tmp_path):  # noqa: F811
    """A cluster named: partitioned without partition.rows; every partition on a worker."""
    path = tmp_path / "toy.csv"
    _toy_with_languages().to_csv(path, index=False)
    common = [f"input={path}", "bootstrap.n_resamples=100", "fairness.min_group_size=5"]
    assert main(["leaderboard", *common, f"output_dir={tmp_path / 'mem'}"]) == 0
    address = f"cluster.address={client.scheduler.address}"
    dask = [address, "partition.count=5", f"output_dir={tmp_path / 'dask'}"]
    assert main(["leaderboard", *common, *dask]) == 0
    assert client.status == "running"  # the CLI closed its own client, not the cluster
    _same_files(tmp_path / "dask", tmp_path / "mem")
    for name in ("fairness_summary.csv", "lid_accuracy.csv"):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "mem" / name).read_bytes()
