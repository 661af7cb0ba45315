"""The generic csv importer: hand-written files in tmp_path (expected values by hand), the CLI
in a subprocess, and one shared AfriSpeech file read through custom column names."""

from __future__ import annotations

import csv
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import shared_path
from tests.helpers import WEREST
from werest.errors import ConfigError, InputError
from werest.ingest.importers import import_table
from werest.ingest.table import read_table


def write(path: Path, rows: list[list[str]], delimiter: str = ",") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        csv.writer(handle, delimiter=delimiter).writerows(rows)
    return path


def two_systems(folder: Path) -> list[Path]:
    whisper = write(
        folder / "test" / "whisper.csv",
        [
            ["id", "reference", "hypothesis", "duration", "speaker", "audio", "notes"],
            ["u1", "hello world", "hello word", "1.5", "s1", "clips/u1.wav", "x"],
            ["u2", "good morning", "", "2", "s2", "/abs/u2.wav", ""],
            ["u3", "", "NA", "0.5", "s1", "", "y"],
        ],
    )
    w2v = write(
        folder / "test" / "w2v.tsv",
        [["id", "hypothesis", "reference"], ["u1", "hello, world", "hello world"]],
        delimiter="\t",
    )
    return [whisper, w2v]


def test_two_files_rows_and_kept_columns(tmp_path):
    table = import_table("csv", two_systems(tmp_path))
    rows = {(r["system"], r["utt_id"]): r for r in table.to_dict(orient="records")}
    assert sorted(rows) == [("w2v", "u1"), ("whisper", "u1"), ("whisper", "u2"), ("whisper", "u3")]
    assert set(table["dataset"]) == {"test"}  # the files' folder
    u1 = rows["whisper", "u1"]
    assert (u1["reference"], u1["hypothesis"], u1["speaker"], u1["notes"]) == (
        "hello world",
        "hello word",
        "s1",
        "x",
    )
    assert u1["duration"] == 1.5
    assert u1["audio"] == str((tmp_path / "test" / "clips" / "u1.wav").resolve())
    assert rows["whisper", "u2"]["audio"] == "/abs/u2.wav"
    # a blank hypothesis stays "" (empty answer); "NA" is text; a blank reference is unlabelled
    assert rows["whisper", "u2"]["hypothesis"] == ""
    assert rows["whisper", "u3"]["hypothesis"] == "NA"
    assert pd.isna(rows["whisper", "u3"]["reference"])
    assert rows["w2v", "u1"]["hypothesis"] == "hello, world"  # TSV: the comma is text


def test_custom_columns_system_and_dataset(tmp_path):
    path = write(
        tmp_path / "out.csv",
        [["utt", "ref", "hyp", "language"], ["a", "one two", "one", "en"], ["b", "x", "x", "de"]],
    )
    table = import_table(
        "csv",
        [path],
        id_column="utt",
        reference_column="ref",
        hypothesis_column="hyp",
        system="my-asr",
        dataset="calls",
    )
    assert table[["dataset", "utt_id", "system", "hypothesis", "reference", "language"]].to_dict(
        orient="records"
    ) == [
        {"dataset": "calls", "utt_id": "a", "system": "my-asr", "hypothesis": "one"}
        | {"reference": "one two", "language": "en"},
        {"dataset": "calls", "utt_id": "b", "system": "my-asr", "hypothesis": "x"}
        | {"reference": "x", "language": "de"},
    ]
    assert "ref" not in table.columns and "hyp" not in table.columns


def test_unlabelled_files_with_reference_column_none(tmp_path):
    path = write(tmp_path / "d" / "s.csv", [["id", "hypothesis"], ["a", "words"]])
    table = import_table("csv", [path], reference_column=None)
    assert "reference" not in table.columns and table["hypothesis"].tolist() == ["words"]
    labelled = write(tmp_path / "d" / "t.csv", [["id", "hypothesis", "reference"], ["a", "w", "w"]])
    with pytest.raises(InputError, match=r"column 'reference': a column named 'reference' clash"):
        import_table("csv", [labelled], reference_column=None)


def test_system_with_several_files_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="system='x' names one system but 2 files"):
        import_table("csv", two_systems(tmp_path), system="x")


def test_missing_column_lists_the_columns_found(tmp_path):
    path = write(tmp_path / "s.csv", [["id", "ref", "hypothesis"], ["a", "b", "c"]])
    with pytest.raises(
        InputError, match=r"s\.csv, column 'reference': missing column \(columns found: 'id', "
    ):
        import_table("csv", [path])


def test_duplicate_id_names_both_rows(tmp_path):
    rows = [["id", "reference", "hypothesis"], ["a", "x", "x"], ["b", "y", "y"], [" a", "z", "z"]]
    path = write(tmp_path / "s.csv", rows)
    with pytest.raises(InputError, match=r"row 3, column 'id': .*'a' appears twice: rows 1 and 3"):
        import_table("csv", [path])


def test_blank_id_and_bad_duration_name_row_and_column(tmp_path):
    path = write(
        tmp_path / "s.csv", [["id", "reference", "hypothesis"], ["a", "x", "x"], ["", "y", "y"]]
    )
    with pytest.raises(InputError, match=r"s\.csv, row 2, column 'id': empty utterance id"):
        import_table("csv", [path])
    path = write(
        tmp_path / "t.csv",
        [["id", "reference", "hypothesis", "duration"], ["a", "x", "x", "1"], ["b", "y", "y", "?"]],
    )
    with pytest.raises(InputError, match=r"t\.csv, row 2, column 'duration': expected a number"):
        import_table("csv", [path])


def test_non_utf8_and_wrong_suffix(tmp_path):
    path = tmp_path / "s.csv"
    path.write_bytes(b"id,reference,hypothesis\na,caf\xe9,cafe\n")
    with pytest.raises(InputError, match=r"line 2: not valid UTF-8"):
        import_table("csv", [path])
    other = write(tmp_path / "s.txt", [["id", "reference", "hypothesis"]])
    with pytest.raises(InputError, match=r"expected a \.csv or \.tsv file"):
        import_table("csv", [other])


def test_clashing_column_and_repeated_system(tmp_path):
    path = write(
        tmp_path / "s.csv", [["id", "reference", "hypothesis", "system"], ["a", "x", "x", "q"]]
    )
    with pytest.raises(InputError, match=r"column 'system': a column named 'system' clashes"):
        import_table("csv", [path])
    first = write(tmp_path / "a" / "asr.csv", [["id", "reference", "hypothesis"], ["a", "x", "x"]])
    second = write(tmp_path / "b" / "asr.csv", [["id", "reference", "hypothesis"], ["a", "x", "y"]])
    import_table("csv", [first, second])  # datasets a and b: fine
    with pytest.raises(InputError, match=r"system 'asr' already came from .*a/asr\.csv"):
        import_table("csv", [first, second], dataset="same")


def test_cli_imports_csv_and_reports_errors_in_one_line(tmp_path):
    path = write(tmp_path / "dev" / "sys1.csv", [["utt", "ref", "hyp"], ["a", "x y", ""]])
    out = tmp_path / "table.csv"
    result = subprocess.run(
        [
            *WEREST,
            *("import", "csv", str(path), "--out", str(out)),
            *("id_column=utt", "reference_column=ref", "hypothesis_column=hyp"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    table = read_table(out)
    assert table[["dataset", "utt_id", "system", "hypothesis", "reference"]].values.tolist() == [
        ["dev", "a", "sys1", "", "x y"]
    ]
    bad = subprocess.run(
        [*WEREST, "import", "csv", str(path), "--out", str(tmp_path / "bad.csv")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.strip().count("\n") == 0
    assert (
        "sys1.csv, column 'id': missing column (columns found: 'utt', 'ref', 'hyp')" in bad.stderr
    )
    assert not (tmp_path / "bad.csv").exists()
    unlabelled = write(tmp_path / "u.csv", [["id", "hypothesis"], ["a", "w"]])
    none = subprocess.run(
        [*WEREST, "import", "csv", str(unlabelled), "--out", str(out), "reference_column=null"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert none.returncode == 0, none.stderr
    assert "reference" not in read_table(out).columns
    # without reference_column=null, the error says how to import an unlabelled file
    missing = subprocess.run(
        [*WEREST, "import", "csv", str(unlabelled), "--out", str(tmp_path / "m.parquet")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert missing.returncode == 2 and missing.stderr.strip().count("\n") == 0
    assert "column 'reference': missing column" in missing.stderr
    assert "reference_column=null for a file without references" in missing.stderr
    assert not (tmp_path / "m.parquet").exists()


@pytest.mark.shared
def test_shared_afrispeech_gcp_file_through_custom_columns():
    """The GCP LibriSpeech file read as a plain CSV gives the afrispeech importer's rows."""
    path = shared_path(
        "afrispeech", "results", "intron-open-libri-test-clean-gcp-transcribe-wer-0.1328-2620.csv"
    )
    table = import_table(
        "csv",
        [path],
        id_column="id",
        reference_column="transcript",
        hypothesis_column="predictions_raw",
        system="gcp-speech",
    )
    assert len(table) == 2620 and set(table["dataset"]) == {"results"}
    assert {"file", "audio_paths", "speaker_id", "wer"} <= set(table.columns)  # kept as is
    assert (table["hypothesis"] == "").sum() == 2  # 2 blank predictions_raw cells (grep)
    reference = import_table("afrispeech", [path])
    key = ["utt_id", "hypothesis", "reference"]
    pd.testing.assert_frame_equal(
        table[key].sort_values("utt_id").reset_index(drop=True),
        reference[key].sort_values("utt_id").reset_index(drop=True),
    )
