"""The hf importer: ``save_to_disk`` folders written in tmp_path as ``datasets`` writes them
(Arrow IPC stream shards with the ``huggingface`` schema metadata, ``state.json``,
``dataset_info.json``, ``dataset_dict.json``) with pyarrow alone, Parquet files, and, where
the [test] extra's ``datasets`` is installed, folders written by ``datasets`` itself (which
also reads the hand-written ones back). Expected values are written by hand."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.helpers import WEREST
from werest.errors import ConfigError, InputError
from werest.ingest.importers import import_table
from werest.ingest.table import read_table

#: a predictions dataset as ``load_dataset(...).map(transcribe)`` leaves it: LibriSpeech-like
#: columns, an Audio struct, a ClassLabel and the model's output in ``prediction``
ROWS = {
    "id": ["1089-0000", "1089-0001", "1089-0002"],
    "text": ["he hoped", "stew for dinner", ""],
    "prediction": ["he hope", "", "uh"],
    "speaker_id": [1089, 1089, 1089],
    "gender": [1, 0, -1],
    "audio": [{"bytes": b"RIFF", "path": "1089-0000.flac"}] * 3,
    "dataset": ["librispeech"] * 3,
}
FEATURES = {
    "id": {"dtype": "string", "_type": "Value"},
    "text": {"dtype": "string", "_type": "Value"},
    "prediction": {"dtype": "string", "_type": "Value"},
    "speaker_id": {"dtype": "int64", "_type": "Value"},
    "gender": {"names": ["male", "female"], "_type": "ClassLabel"},
    "audio": {"sampling_rate": 16000, "_type": "Audio"},
    "dataset": {"dtype": "string", "_type": "Value"},
}


def arrow_table(rows: dict, features: dict) -> pa.Table:
    """The table with the schema metadata ``datasets`` stores its features in."""
    table = pa.table(rows)
    meta = {"huggingface": json.dumps({"info": {"features": features}})}
    return table.replace_schema_metadata(meta)


def save_to_disk(folder: Path, table: pa.Table, shards: int = 1, split: str | None = None):
    """What ``Dataset.save_to_disk`` writes: ``data-NNNNN-of-NNNNN.arrow`` shards (Arrow IPC
    streams), ``state.json`` listing them and ``dataset_info.json``."""
    folder.mkdir(parents=True, exist_ok=True)
    names = [f"data-{i:05d}-of-{shards:05d}.arrow" for i in range(shards)]
    size = -(-table.num_rows // shards)
    for i, name in enumerate(names):
        with (
            pa.OSFile(str(folder / name), "wb") as sink,
            pa.ipc.new_stream(sink, table.schema) as writer,
        ):
            writer.write_table(table.slice(i * size, size))
    state = {
        "_data_files": [{"filename": name} for name in names],
        "_fingerprint": "0123456789abcdef",
        "_format_columns": None,
        "_format_kwargs": {},
        "_format_type": None,
        "_output_all_columns": False,
        "_split": split,
    }
    (folder / "state.json").write_text(json.dumps(state, indent=2), "utf-8")
    features = json.loads(table.schema.metadata[b"huggingface"])["info"]["features"]
    info = {"citation": "", "description": "", "features": features, "homepage": "", "license": ""}
    (folder / "dataset_info.json").write_text(json.dumps(info, indent=2), "utf-8")
    return folder


def save_dict_to_disk(folder: Path, splits: dict[str, pa.Table]) -> Path:
    """What ``DatasetDict.save_to_disk`` writes: ``dataset_dict.json`` and a folder per split."""
    for split, table in splits.items():
        save_to_disk(folder / split, table, split=split)
    (folder / "dataset_dict.json").write_text(json.dumps({"splits": list(splits)}), "utf-8")
    return folder


def test_a_saved_dataset_with_guessed_columns(tmp_path):
    folder = save_to_disk(tmp_path / "preds" / "whisper-small", arrow_table(ROWS, FEATURES), 2)
    table = import_table("hf", [folder])
    assert table[["dataset", "utt_id", "system", "hypothesis"]].values.tolist() == [
        ["preds", "1089-0000", "whisper-small", "he hope"],
        ["preds", "1089-0001", "whisper-small", ""],  # returned nothing
        ["preds", "1089-0002", "whisper-small", "uh"],
    ]
    assert table["reference"].tolist()[:2] == ["he hoped", "stew for dinner"]
    assert pd.isna(table["reference"].tolist()[2])  # blank: unlabelled
    assert table["speaker_id"].tolist() == [1089, 1089, 1089]
    assert table["gender"].tolist()[:2] == ["female", "male"]  # ClassLabel names
    assert pd.isna(table["gender"].tolist()[2])  # -1: no label
    assert table["source_dataset"].tolist() == ["librispeech"] * 3  # ESB's column kept aside
    assert "audio" not in table.columns  # the Audio struct (samples) is not a path
    assert not {"text", "prediction", "id"} & set(table.columns)


def test_named_columns_several_systems_and_parquet(tmp_path):
    rows = {
        "key": [3, 1, 2],
        "speaker": [7, 7, 8],
        "gold": ["a b", "c", "d"],
        "pred_text_whisper": ["a b", "c", None],  # not run on key 2
        "w2v": ["a", "see", "d"],
        "audio": ["clips/3.wav", "/abs/1.wav", None],
    }
    path = tmp_path / "calls" / "outputs.parquet"
    path.parent.mkdir()
    pq.write_table(pa.table(rows), path)
    table = import_table(
        "hf",
        [path],
        id_column="key",
        reference_column="gold",
        hypothesis_columns=["pred_text_whisper", "w2v"],
    )
    got = sorted(table[["system", "utt_id", "hypothesis", "reference"]].values.tolist())
    assert got == [
        ["w2v", "1", "see", "c"],
        ["w2v", "2", "d", "d"],
        ["w2v", "3", "a", "a b"],
        ["whisper", "1", "c", "c"],
        ["whisper", "3", "a b", "a b"],
    ]
    assert set(table["dataset"]) == {"calls"}
    audio = dict(zip(table["utt_id"], table["audio"], strict=False))
    assert audio["3"] == str((tmp_path / "calls" / "clips" / "3.wav").resolve())
    assert audio["1"] == "/abs/1.wav"
    assert set(table["speaker"]) == {"7", "8"}  # numeric speaker ids, read as text
    one = import_table(
        "hf", [path], id_column="key", reference_column=None, hypothesis_column="w2v", system="s"
    )
    assert set(one["system"]) == {"s"} and "reference" not in one.columns
    assert "gold" in one.columns  # not the reference here: metadata


def test_dataset_dict_splits_and_a_single_shard(tmp_path):
    table = arrow_table(ROWS, FEATURES)
    folder = save_dict_to_disk(
        tmp_path / "runs" / "canary", {"test": table, "validation": table.slice(0, 1)}
    )
    imported = import_table("hf", [folder], dataset="ls")
    assert imported.groupby("dataset").size().to_dict() == {"ls-test": 3, "ls-validation": 1}
    assert set(imported["system"]) == {"canary"}
    shard = folder / "test" / "data-00000-of-00001.arrow"
    assert import_table("hf", [shard], system="c")["hypothesis"].tolist() == ["he hope", "", "uh"]


def test_refusals_name_file_row_and_column(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "data.csv").write_text("id,text\n")
    with pytest.raises(InputError, match=r"plain: not a Hugging Face datasets folder: no state"):
        import_table("hf", [plain])
    with pytest.raises(InputError, match=r"expected a datasets folder \(save_to_disk\), a \.parq"):
        import_table("hf", [plain / "data.csv"])
    with pytest.raises(InputError, match=r"nowhere: no such file or folder"):
        import_table("hf", [tmp_path / "nowhere"])

    broken = save_to_disk(tmp_path / "broken", arrow_table(ROWS, FEATURES))
    (broken / "data-00000-of-00001.arrow").write_bytes(b"not arrow at all")
    with pytest.raises(InputError, match=r"data-00000-of-00001\.arrow: not an Arrow stream file"):
        import_table("hf", [broken])
    (broken / "state.json").write_text('{"_data_files": "data.arrow"}')
    with pytest.raises(InputError, match=r"state\.json, column '_data_files': expected a non-emp"):
        import_table("hf", [broken])
    (broken / "state.json").write_text("{")
    with pytest.raises(InputError, match=r"state\.json: not valid JSON"):
        import_table("hf", [broken])

    no_prediction = save_to_disk(tmp_path / "np", arrow_table({"id": ["a"], "text": ["x"]}, {}))
    with pytest.raises(
        InputError,
        match=r"np, column 'hypothesis': missing column \(columns found: 'id', 'text'\); none "
        r"of hypothesis, prediction, .*hypothesis_column=NAME",
    ):
        import_table("hf", [no_prediction])
    with pytest.raises(InputError, match=r"column 'pred': missing column .*check hypothesis_col"):
        import_table("hf", [no_prediction], hypothesis_columns=["pred"])
    no_reference = save_to_disk(tmp_path / "nr", arrow_table({"id": ["a"], "hyp": ["x"]}, {}))
    with pytest.raises(InputError, match=r"reference_column=null for a dataset without refer"):
        import_table("hf", [no_reference])
    assert import_table("hf", [no_reference], reference_column=None)["hypothesis"].tolist() == ["x"]

    lists = save_to_disk(
        tmp_path / "lists", arrow_table({"id": ["a"], "text": ["x"], "prediction": [["x"]]}, {})
    )
    with pytest.raises(
        InputError, match=r"column 'prediction': holds list<item: string>, expected text"
    ):
        import_table("hf", [lists])
    repeated = save_to_disk(
        tmp_path / "rep",
        arrow_table({"id": [1, 2, 1], "text": ["x"] * 3, "prediction": ["x"] * 3}, {}),
    )
    with pytest.raises(
        InputError, match=r"rep, row 3, column 'id': utterance id '1' appears twice: rows 1 and 3"
    ):
        import_table("hf", [repeated])
    blank = save_to_disk(
        tmp_path / "blank", arrow_table({"id": ["a", " "], "text": ["x"] * 2, "hyp": ["x"] * 2}, {})
    )
    with pytest.raises(InputError, match=r"blank, row 2, column 'id': empty utterance id"):
        import_table("hf", [blank])
    floats = save_to_disk(
        tmp_path / "floats", arrow_table({"id": [1.5], "text": ["x"], "hyp": ["x"]}, {})
    )
    with pytest.raises(InputError, match=r"column 'id': holds double, expected text or whole"):
        import_table("hf", [floats])
    bad_duration = save_to_disk(
        tmp_path / "bd",
        arrow_table({"id": ["a", "b"], "text": ["x"] * 2, "hyp": ["x"] * 2,
                     "duration": ["1.5", "long"]}, {}),
    )  # fmt: skip
    with pytest.raises(InputError, match=r"bd, row 2, column 'duration': expected a number"):
        import_table("hf", [bad_duration])


def test_refused_settings_and_repeated_systems(tmp_path):
    a = save_to_disk(tmp_path / "x" / "sys", arrow_table(ROWS, FEATURES))
    b = save_to_disk(tmp_path / "y" / "sys", arrow_table(ROWS, FEATURES))
    with pytest.raises(ConfigError, match="system='s' names one system but 2 paths"):
        import_table("hf", [a, b], system="s")
    with pytest.raises(InputError, match=r"system 'sys' already came from .*x/sys"):
        import_table("hf", [a, b], dataset="same")
    with pytest.raises(ConfigError, match="one column named for two roles"):
        import_table("hf", [a], hypothesis_column="text")
    dictionary = save_dict_to_disk(tmp_path / "dd", {"test": arrow_table(ROWS, FEATURES)})
    (dictionary / "dataset_dict.json").write_text('{"splits": ["test", "train"]}')
    with pytest.raises(InputError, match=r"dataset_dict\.json: split 'train' has no folder"):
        import_table("hf", [dictionary])


@pytest.mark.test_extra
def test_folders_written_by_datasets_itself(tmp_path):
    """``datasets`` writes the folders (several shards, a DatasetDict, Parquet) and reads the
    hand-written ones back: the importer and the helpers above follow the real format."""
    datasets = pytest.importorskip("datasets", reason="needs the [test] extra (datasets)")
    features = datasets.Features(
        {
            "id": datasets.Value("string"),
            "text": datasets.Value("string"),
            "prediction": datasets.Value("string"),
            "gender": datasets.ClassLabel(names=["male", "female"]),
            "duration": datasets.Value("float32"),
            "words": datasets.Sequence(datasets.Value("string")),
        }
    )
    data = {
        "id": ["u1", "u2", "u3", "u4"],
        "text": ["one two", "three", "four", ""],
        "prediction": ["one to", "three", "", "five"],
        "gender": [0, 1, 1, 0],
        "duration": [1.5, 2.0, 0.5, 1.0],
        "words": [["one", "to"], ["three"], [], ["five"]],
    }
    dataset = datasets.Dataset.from_dict(data, features=features)
    dataset.save_to_disk(str(tmp_path / "runs" / "whisper"), num_shards=3)
    datasets.DatasetDict({"test": dataset, "dev": dataset.select([0])}).save_to_disk(
        str(tmp_path / "runs" / "canary")
    )
    dataset.to_parquet(str(tmp_path / "runs" / "w2v.parquet"))
    runs = tmp_path / "runs"
    table = import_table("hf", [runs / "whisper", runs / "canary", runs / "w2v.parquet"])
    counts = table.groupby(["dataset", "system"]).size().to_dict()
    assert counts == {
        ("runs", "whisper"): 4,
        ("runs", "w2v"): 4,
        ("runs-test", "canary"): 4,
        ("runs-dev", "canary"): 1,
    }
    whisper = table[table["system"] == "whisper"]
    assert whisper["hypothesis"].tolist() == ["one to", "three", "", "five"]
    assert whisper["reference"].tolist()[:3] == ["one two", "three", "four"]
    assert pd.isna(whisper["reference"].tolist()[3])
    assert whisper["gender"].tolist() == ["male", "female", "female", "male"]
    assert whisper["duration"].tolist() == [1.5, 2.0, 0.5, 1.0]
    assert "words" not in table.columns  # a list: dropped
    # the hand-written layout is one datasets loads
    folder = save_to_disk(tmp_path / "hand", arrow_table(ROWS, FEATURES), 2)
    loaded = datasets.load_from_disk(str(folder))
    assert loaded["prediction"] == ROWS["prediction"]
    assert loaded.features["gender"].names == ["male", "female"]
    both = save_dict_to_disk(tmp_path / "hand-dict", {"test": arrow_table(ROWS, FEATURES)})
    assert list(datasets.load_from_disk(str(both))) == ["test"]


def test_cli_imports_a_saved_dataset_and_reports_errors_in_one_line(tmp_path):
    rows = {"utt": ["a", "b"], "ref": ["x y", "z"], "p1": ["x", ""], "p2": ["x y", "z"]}
    folder = save_to_disk(tmp_path / "dev" / "run", arrow_table(rows, {}))
    out = tmp_path / "table.csv"
    ok = subprocess.run(
        [
            *WEREST,
            *("import", "hf", str(folder), "--out", str(out)),
            *("id_column=utt", "reference_column=ref", "hypothesis_columns=[p1,p2]"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    table = read_table(out)
    got = sorted(table[["dataset", "utt_id", "system", "hypothesis", "reference"]].values.tolist())
    assert got == [
        ["dev", "a", "p1", "x", "x y"],
        ["dev", "a", "p2", "x y", "x y"],
        ["dev", "b", "p1", "", "z"],
        ["dev", "b", "p2", "z", "z"],
    ]
    refused = subprocess.run(
        [*WEREST, "import", "hf", str(folder), "--out", str(tmp_path / "bad.parquet")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.strip().count("\n") == 0
    assert "run, column 'id': missing column (columns found: 'utt', 'ref', 'p1', 'p2')" in (
        refused.stderr
    )
    assert not (tmp_path / "bad.parquet").exists()
