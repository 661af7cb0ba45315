"""The manifest importer: NeMo and Open ASR Leaderboard manifests written in tmp_path as those
tools write them (one ``json.dumps`` object per line: ``audio_filepath``, ``duration``,
``text``, ``pred_text``...), expected values by hand, and the CLI in a subprocess."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from tests.helpers import WEREST
from werest.errors import ConfigError, InputError
from werest.ingest.importers import import_table
from werest.ingest.table import read_table


def manifest(path: Path, records: list[dict]) -> Path:
    """A manifest as NeMo's ``write_manifest`` / the leaderboard write it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def line(audio_filepath, text, pred, duration=1.0, **extra) -> dict:
    return {
        "audio_filepath": audio_filepath,
        "duration": duration,
        "text": text,
        "pred_text": pred,
        **extra,
    }


def rows_of(table: pd.DataFrame) -> dict:
    return {(r["system"], r["utt_id"]): r for r in table.to_dict(orient="records")}


def test_one_file_per_system(tmp_path):
    whisper = manifest(
        tmp_path / "test" / "whisper.json",
        [
            line(
                "wavs/1089-0000.wav",
                "he hoped",
                "he hope",
                2.5,
                lang="en",
                words=[[0, 1]],
                speaker=1089,
            ),
            line("/abs/1089-0001.flac", "stew for dinner", "", 3, lang="en"),
            line("wavs/1089-0002.wav", "", "uh", 0.5, lang="en"),
            line("wavs/1089-0003.wav", "turnips", None, 1, lang="en"),  # not run
        ],
    )
    canary = manifest(
        tmp_path / "test" / "canary.json",
        [line("wavs/1089-0000.wav", "he hoped", "He hoped.", 2.5, lang="en")],
    )
    table = import_table("manifest", [whisper, canary])
    rows = rows_of(table)
    assert sorted(rows) == [
        ("canary", "1089-0000"),
        ("whisper", "1089-0000"),
        ("whisper", "1089-0001"),
        ("whisper", "1089-0002"),
    ]
    assert set(table["dataset"]) == {"test"}  # the files' folder
    first = rows["whisper", "1089-0000"]
    assert (first["hypothesis"], first["reference"], first["duration"], first["lang"]) == (
        "he hope",
        "he hoped",
        2.5,
        "en",
    )
    assert first["audio"] == str((tmp_path / "test" / "wavs" / "1089-0000.wav").resolve())
    assert rows["whisper", "1089-0001"]["audio"] == "/abs/1089-0001.flac"
    assert rows["whisper", "1089-0001"]["hypothesis"] == ""  # returned nothing
    assert pd.isna(rows["whisper", "1089-0002"]["reference"])  # blank text: unlabelled
    assert rows["canary", "1089-0000"]["hypothesis"] == "He hoped."
    assert "words" not in table.columns  # a list: dropped
    assert first["speaker"] == "1089"  # a numeric speaker id, read as text


def test_several_prediction_fields_in_one_manifest(tmp_path):
    path = manifest(
        tmp_path / "ls" / "outputs.json",
        [
            line("a.wav", "one two", "one to", pred_text_canary="one two", pred_text_w2v="won"),
            line("b.wav", "three", "three", pred_text_canary=None, pred_text_w2v="tree"),
        ],
    )
    table = import_table("manifest", [path], system="parakeet")
    got = sorted(table[["system", "utt_id", "hypothesis"]].itertuples(index=False, name=None))
    assert got == [
        ("canary", "a", "one two"),
        ("parakeet", "a", "one to"),
        ("parakeet", "b", "three"),
        ("w2v", "a", "won"),
        ("w2v", "b", "tree"),
    ]
    assert set(table["reference"]) == {"one two", "three"}
    # without system=: pred_text is the file's system; a chosen list of fields
    assert set(import_table("manifest", [path])["system"]) == {"outputs", "canary", "w2v"}
    only = import_table("manifest", [path], hypothesis_columns=["pred_text_w2v", "pred_text"])
    assert sorted(set(only["system"])) == ["outputs", "w2v"]
    assert "pred_text_canary" not in only.columns  # an unselected prediction is not metadata
    one = import_table("manifest", [path], hypothesis_column="pred_text_w2v", system="w")
    assert one[["system", "hypothesis"]].values.tolist() == [["w", "won"], ["w", "tree"]]


def test_fields_named_otherwise(tmp_path):
    path = manifest(
        tmp_path / "d" / "m.jsonl",
        [
            {"audio_filepath": "x.wav", "key": "u1", "gold": "a b", "asr_a": "a", "asr_b": "b"},
            {"audio_filepath": "y.wav", "key": "u2", "gold": "c", "asr_a": "c", "asr_b": ""},
        ],
    )
    table = import_table(
        "manifest",
        [path],
        id_column="key",
        reference_column="gold",
        hypothesis_columns=["asr_a", "asr_b"],
    )
    got = sorted(table[["system", "utt_id", "hypothesis", "reference"]].values.tolist())
    assert got == [
        ["asr_a", "u1", "a", "a b"],
        ["asr_a", "u2", "c", "c"],
        ["asr_b", "u1", "b", "a b"],
        ["asr_b", "u2", "", "c"],
    ]
    unlabelled = import_table(
        "manifest", [path], id_column="key", reference_column=None, hypothesis_column="asr_a"
    )
    assert "reference" not in unlabelled.columns and "gold" in unlabelled.columns


def test_open_asr_leaderboard_result_file(tmp_path):
    """normalizer/eval_utils.write_manifest: MODEL_<model>_DATASET_<path>_<name>_<split>.jsonl,
    ``sample_<n>`` for a sample without a path, ``time`` per sample, extra fields."""
    name = "MODEL_nvidia-parakeet-tdt-0.6b-v2_DATASET_hf-audio-esb-datasets-test-only-sorted"
    path = manifest(
        tmp_path / "results" / f"{name}_librispeech_test.clean.jsonl",
        [
            {"audio_filepath": "sample_0", "duration": 4.2, "time": 0.05, "text": "a b",
             "pred_text": "a b", "reference_lists": [["a"], ["b"]]},
            {"audio_filepath": "sample_1", "duration": 1.5, "time": None, "text": "c",
             "pred_text": "see"},
        ],
    )  # fmt: skip
    table = import_table("manifest", [path])
    assert set(table["system"]) == {"nvidia/parakeet-tdt-0.6b-v2"}
    assert set(table["dataset"]) == {
        "hf-audio-esb-datasets-test-only-sorted_librispeech_test.clean"
    }
    assert table["utt_id"].tolist() == ["sample_0", "sample_1"]
    assert table["audio"].isna().all()  # placeholders, not paths
    assert table["processing_seconds"].tolist()[0] == 0.05
    assert pd.isna(table["processing_seconds"].tolist()[1])
    assert "reference_lists" not in table.columns and "time" not in table.columns


def test_ids_from_fields_and_segments(tmp_path):
    with_ids = manifest(
        tmp_path / "a.json",
        [line("same.wav", "x", "x", utt_id="u-1"), line("same.wav", "y", "y", utt_id="u-2")],
    )
    assert import_table("manifest", [with_ids])["utt_id"].tolist() == ["u-1", "u-2"]
    numbered = manifest(tmp_path / "b.json", [line("p.wav", "x", "x", id=7)])
    assert import_table("manifest", [numbered])["utt_id"].tolist() == ["7"]
    segments = manifest(
        tmp_path / "c.json",
        [line("talk.wav", "x", "x", offset=0), line("talk.wav", "y", "y", offset=12.5)],
    )
    assert import_table("manifest", [segments])["utt_id"].tolist() == ["talk", "talk@12.5"]
    clash = manifest(tmp_path / "d.json", [line("a/u.wav", "x", "x"), line("b/u.wav", "y", "y")])
    with pytest.raises(
        InputError,
        match=r"d\.json, row 2, column 'audio_filepath': utterance id 'u' appears twice: "
        r"lines 1 and 2; ids here are the audio files' stems",
    ):
        import_table("manifest", [clash])


def test_clashing_and_mixed_metadata(tmp_path):
    path = manifest(
        tmp_path / "m.json",
        [
            line("a.wav", "x", "x", dataset="librispeech", audio="ignored", score=1),
            line("b.wav", "y", "y", dataset="librispeech", score="high"),
        ],
    )
    table = import_table("manifest", [path], dataset="ls")
    assert set(table["dataset"]) == {"ls"}
    assert table["source_dataset"].tolist() == ["librispeech", "librispeech"]
    assert table["source_audio"].tolist()[0] == "ignored"
    assert table["score"].tolist() == ["1", "high"]  # mixed types: text


A = '{"audio_filepath": "a.wav", '
REFUSED = [
    (A + '"pred_text": "x"}\n{"audio_filepath": ', r"row 2: not valid JSON"),
    ('[{"audio_filepath": "a.wav"}]\n', r"row 1: expected one JSON object per line .* got list"),
    (
        '{"dataset": "d", "utt_id": "u", "system": "s", "hypothesis": "h"}\n',
        r"row 1, column 'audio_filepath': missing: every line of a NeMo manifest",
    ),
    (
        A + '"pred_text": "x"}\n{"audio_filepath": 3, "pred_text": "y"}\n',
        r"row 2, column 'audio_filepath': expected a path, got 3",
    ),
    (
        A + '"duration": 1, "text": "x"}\n',
        r"column 'pred_text': missing field \(fields found: 'audio_filepath', 'duration', "
        r"'text'\); a manifest of system outputs",
    ),
    (A + '"pred_text": 3}\n', r"row 1, column 'pred_text': expected text, got int 3"),
    (A + '"pred_text": "x", "text": ["x"]}\n', r"row 1, column 'text': expected text, got list"),
    (
        A + '"pred_text": "x", "duration": 1}\n\n'
        '{"audio_filepath": "b.wav", "pred_text": "y", "duration": "long"}\n',
        r"row 3, column 'duration': expected a number",
    ),
    (A + '"pred_text": null}\n', r"no line holds a prediction"),
    (
        A + '"pred_text": "x", "id": "u"}\n{"audio_filepath": "b.wav", "pred_text": "y"}\n',
        r"row 2, column 'id': expected an utterance id .*missing",
    ),
    ("  \n", r"the file is empty"),
]


@pytest.mark.parametrize(("content", "message"), REFUSED)
def test_refusals_name_file_line_and_field(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=rf"bad\.json, {message}|bad\.json: {message}"):
        import_table("manifest", [path])


def test_refused_files_and_settings(tmp_path):
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"audio_filepath": "a.wav", "pred_text": "caf\xe9"}\n')
    with pytest.raises(InputError, match=r"line 1: not valid UTF-8"):
        import_table("manifest", [latin])
    with pytest.raises(InputError, match=r"nowhere\.json: no such file or folder"):
        import_table("manifest", [tmp_path / "nowhere.json"])
    a = manifest(tmp_path / "x" / "sys.json", [line("a.wav", "x", "x")])
    b = manifest(tmp_path / "y" / "sys.json", [line("a.wav", "x", "y")])
    with pytest.raises(ConfigError, match="system='s' names one system but 2 files"):
        import_table("manifest", [a, b], system="s")
    with pytest.raises(InputError, match=r"system 'sys' already came from .*x/sys\.json"):
        import_table("manifest", [a, b], dataset="same")
    with pytest.raises(InputError, match=r"column 'pred_b': missing field"):
        import_table("manifest", [a], hypothesis_columns=["pred_b"])
    with pytest.raises(ConfigError, match="give one of them"):
        import_table("manifest", [a], hypothesis_column="p", hypothesis_columns=["q"])


def test_cli_imports_a_manifest_and_reports_errors_in_one_line(tmp_path):
    path = manifest(
        tmp_path / "dev" / "out.json",
        [line("a.wav", "x y", "x", pred_text_b="x y"), line("b.wav", "z", "")],
    )
    out = tmp_path / "table.parquet"
    ok = subprocess.run(
        [*WEREST, "import", "manifest", str(path), "--out", str(out), "system=a"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    table = read_table(out)
    got = sorted(table[["dataset", "utt_id", "system", "hypothesis", "reference"]].values.tolist())
    assert got == [
        ["dev", "a", "a", "x", "x y"],
        ["dev", "a", "b", "x y", "x y"],
        ["dev", "b", "a", "", "z"],
    ]
    bad = tmp_path / "dev" / "table.jsonl"  # a transcripts table is not a manifest
    bad.write_text('{"dataset": "d", "utt_id": "u", "system": "s", "hypothesis": "h"}\n', "utf-8")
    refused = subprocess.run(
        [*WEREST, "import", "manifest", str(bad), "--out", str(tmp_path / "bad.parquet")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.strip().count("\n") == 0
    assert "table.jsonl, row 1, column 'audio_filepath': missing" in refused.stderr
    assert not (tmp_path / "bad.parquet").exists()
