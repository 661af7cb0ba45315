"""The transcripts table: formats, canonical form, and one-line errors naming file/row/column."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from werest.errors import InputError
from werest.ingest.table import read_table, validate_table, write_table

ROWS = [
    {
        "dataset": "d",
        "utt_id": "u1",
        "system": "a",
        "hypothesis": "hello world",
        "reference": "hello world",
        "duration": 1.5,
        "gender": "female",
    },
    {
        "dataset": "d",
        "utt_id": "u1",
        "system": "b",
        "hypothesis": "",
        "reference": "hello world",
        "duration": 1.5,
        "gender": "female",
    },
    {
        "dataset": "d",
        "utt_id": "u2",
        "system": "a",
        "hypothesis": "yes",
        "reference": "",
        "duration": 0.4,
        "gender": None,
    },
]


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet"])
def test_round_trip_keeps_empty_hypothesis_and_metadata(tmp_path, suffix):
    path = write_table(pd.DataFrame(ROWS), tmp_path / f"t{suffix}")
    table = read_table(path)
    assert table[["dataset", "utt_id", "system"]].values.tolist() == [
        ["d", "u1", "a"],
        ["d", "u1", "b"],
        ["d", "u2", "a"],
    ]
    assert table.loc[1, "hypothesis"] == ""  # empty: the system returned nothing
    assert pd.isna(table.loc[2, "reference"])  # blank reference: unlabelled
    assert table["duration"].tolist() == [1.5, 1.5, 0.4]
    assert table.loc[0, "gender"] == "female"
    assert not list(tmp_path.glob(".*.tmp"))


def test_null_hypothesis_means_not_run_and_drops_the_row(tmp_path):
    path = tmp_path / "t.jsonl"
    records = [dict(ROWS[0]), dict(ROWS[1], hypothesis=None)]
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    table = read_table(path)
    assert table["system"].tolist() == ["a"]


def _error(path) -> str:
    with pytest.raises(InputError) as caught:
        read_table(path)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_missing_file(tmp_path):
    assert _error(tmp_path / "nope.csv").endswith("nope.csv: no such file")


def test_empty_file(tmp_path):
    (tmp_path / "e.csv").write_text("")
    assert "the file is empty" in _error(tmp_path / "e.csv")
    (tmp_path / "h.csv").write_text("dataset,utt_id,system,hypothesis\n")
    assert "header but no rows" in _error(tmp_path / "h.csv")


def test_missing_required_column_is_named(tmp_path):
    (tmp_path / "m.csv").write_text("dataset,utt_id,hypothesis\nd,u1,hi\n")
    error = _error(tmp_path / "m.csv")
    assert "m.csv, column 'system': missing required column (columns: dataset, utt_id," in error
    assert error.endswith(
        "one system's hypotheses? make a transcripts table first: werest "
        f"import csv {tmp_path / 'm.csv'} --out table.parquet"
    )


def test_other_delimiter_is_explained(tmp_path):
    (tmp_path / "s.csv").write_text("dataset;utt_id;system;hypothesis\nd;u;a;hi\n")
    assert "looks ';'-separated" in _error(tmp_path / "s.csv")


def test_duplicate_key_names_both_rows(tmp_path):
    rows = [ROWS[0], ROWS[1], ROWS[0]]
    pd.DataFrame(rows).to_csv(tmp_path / "d.csv", index=False)
    message = _error(tmp_path / "d.csv")
    assert "row 3, column 'utt_id'" in message and "first seen at row 1" in message


def test_non_utf8_names_the_line(tmp_path):
    text = "dataset,utt_id,system,hypothesis\nd,u1,a,ok\nd,u2,a,caf\xe9\n"
    (tmp_path / "l.csv").write_bytes(text.encode("latin-1"))
    message = _error(tmp_path / "l.csv")
    assert "line 3: not valid UTF-8" in message and "iconv" in message


def test_random_bytes_are_refused(tmp_path):
    (tmp_path / "r.csv").write_bytes(bytes(range(256)) * 4)
    assert "not valid UTF-8" in _error(tmp_path / "r.csv")


def test_non_text_value_in_jsonl_names_row_and_column(tmp_path):
    records = [ROWS[0], dict(ROWS[1], hypothesis=12.5)]
    (tmp_path / "n.jsonl").write_text("\n".join(json.dumps(r) for r in records))
    assert _error(tmp_path / "n.jsonl").endswith(
        "n.jsonl, row 2, column 'hypothesis': expected text, got float 12.5"
    )


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_jsonl_text_may_hold_characters_splitlines_cuts_at(tmp_path, separator):
    """JSON strings may hold U+2028 (and U+2029, NEL) unescaped: a line ends at \\n
    only, so the text reads back whole (json.dumps(ensure_ascii=False) writes them raw)."""
    text = f"hello{separator}world"
    records = [dict(ROWS[0], hypothesis=text), dict(ROWS[1], reference=f"a{separator}b")]
    path = tmp_path / "s.jsonl"
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    path.write_text("\r\n".join(lines) + "\n", encoding="utf-8")
    assert separator in path.read_text(encoding="utf-8")  # written raw, not escaped
    table = read_table(path)
    assert table["hypothesis"].tolist()[0] == text
    assert table["reference"].tolist()[1] == f"a{separator}b"


def test_one_jsonl_reader_for_tables_and_manifests(tmp_path):
    """The manifest importer reads its lines with the table's reader (werest.ingest.table.
    json_lines): U+2028 in a manifest's text survives too."""
    from werest.ingest.importers.manifest import read_lines
    from werest.ingest.table import json_lines

    path = tmp_path / "m.json"
    path.write_text(
        json.dumps({"audio_filepath": "a.wav", "text": "x\u2028y"}, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    assert read_lines(path) == json_lines(path, path.read_text(encoding="utf-8"))
    assert read_lines(path)[0][1]["text"] == "x\u2028y"


def test_bad_json_line(tmp_path):
    (tmp_path / "b.jsonl").write_text(json.dumps(ROWS[0]) + "\n{not json\n")
    assert "row 2: not valid JSON" in _error(tmp_path / "b.jsonl")


def test_blank_key_and_bad_duration(tmp_path):
    pd.DataFrame([ROWS[0], dict(ROWS[1], system=" ")]).to_csv(tmp_path / "k.csv", index=False)
    assert "row 2, column 'system': empty value in a key column" in _error(tmp_path / "k.csv")
    pd.DataFrame([ROWS[0], dict(ROWS[1], duration="long")]).to_csv(tmp_path / "x.csv", index=False)
    assert "row 2, column 'duration': expected a number" in _error(tmp_path / "x.csv")


def test_unknown_suffix_and_folder(tmp_path):
    assert "unknown table format '.xlsx'" in _error(tmp_path / "t.xlsx")
    (tmp_path / "dir.csv").mkdir()
    assert "is a folder" in _error(tmp_path / "dir.csv")


def test_broken_parquet(tmp_path):
    (tmp_path / "p.parquet").write_bytes(b"PAR1 truncated")
    assert "not a readable Parquet file" in _error(tmp_path / "p.parquet")


def test_relative_audio_paths_resolve_against_the_table(tmp_path):
    (tmp_path / "clips").mkdir()
    pd.DataFrame([dict(ROWS[0], audio="clips/u1.wav")]).to_csv(tmp_path / "a.csv", index=False)
    table = read_table(tmp_path / "a.csv")
    assert table.loc[0, "audio"] == str(tmp_path / "clips" / "u1.wav")


def test_keys_are_stripped_and_validate_accepts_frames():
    frame = pd.DataFrame([dict(ROWS[0], utt_id=" u1 ")])
    assert validate_table(frame).loc[0, "utt_id"] == "u1"


def test_bare_carriage_return_in_a_field_is_a_one_line_error(tmp_path):
    """Found by the property tests: csv raises its own error on a lone '\\r' in an unquoted
    field; it must become an InputError naming the file and record."""
    from werest.ingest.table import read_raw_csv

    path = tmp_path / "azure.csv"
    path.write_bytes(b"files,actual,transcription_en-US\n\r\x01")
    with pytest.raises(InputError, match="not a well-formed CSV record") as error:
        read_raw_csv(path)
    assert "azure.csv" in str(error.value) and "row 1" in str(error.value)


def test_bare_carriage_return_in_the_header_is_a_one_line_error(tmp_path):
    """Found by the property tests in a fresh clone's CI run (data=b'\\r\\xc2\\x80'): the
    header's own record raised csv's error from outside the guarded loop."""
    path = tmp_path / "t.csv"
    path.write_bytes(b"\r\xc2\x80")
    with pytest.raises(InputError, match="the header is not a well-formed CSV record") as error:
        read_table(path)
    assert str(error.value).startswith(f"{path}: ") and "row" not in str(error.value)


# ---- issue 43: systems whose every hypothesis is null (not run)


def _with_nulls(systems_null: set[str]) -> pd.DataFrame:
    rows = [
        {"dataset": "d", "utt_id": f"u{i}", "system": s, "hypothesis": f"text {i}"}
        for i in range(3)
        for s in ("alpha", "beta", "gamma")
    ]
    frame = pd.DataFrame(rows).astype({"hypothesis": object})
    frame.loc[frame["system"].isin(systems_null), "hypothesis"] = None
    return frame


def test_a_table_whose_every_hypothesis_is_null_is_one_error(tmp_path):
    path = tmp_path / "allnan.parquet"
    _with_nulls({"alpha", "beta", "gamma"}).to_parquet(path)
    with pytest.raises(InputError) as error:
        read_table(path)
    assert str(error.value).startswith(f"{path}, column 'hypothesis': every hypothesis is null")


def test_a_system_whose_every_hypothesis_is_null_is_named_in_a_warning(tmp_path, caplog):
    path = tmp_path / "t.parquet"
    frame = _with_nulls({"gamma"})
    frame.loc[0, "hypothesis"] = None  # alpha misses one: not left out
    frame.to_parquet(path)
    with caplog.at_level("WARNING", logger="werest.ingest.table"):
        table = read_table(path)
    assert sorted(table["system"].unique()) == ["alpha", "beta"]
    assert table.attrs["systems_without_hypotheses"] == ["gamma"]
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warnings == [
        f"{path}: system 'gamma' left out: it has no hypothesis, every one is null (not run?)"
    ]
    caplog.clear()
    with caplog.at_level("WARNING", logger="werest.ingest.table"):
        assert read_table(path, warn=False).attrs["systems_without_hypotheses"] == ["gamma"]
    assert not caplog.records  # the caller warns (a stage, once its settings are checked)


def test_a_chunk_leaves_nulls_to_its_caller():
    chunk = validate_table(_with_nulls({"alpha", "beta", "gamma"}), whole=False)
    assert len(chunk) == 0
    assert chunk.attrs["systems_without_hypotheses"] == ["alpha", "beta", "gamma"]
