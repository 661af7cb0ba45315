"""The line-based importers (kaldi, sclite, sphinx, thennal10) recognise their own format and
refuse a file that is clearly another (a CSV or TSV table, JSON, a binary file) with one line
naming the file and line and the importer that reads it."""

from __future__ import annotations

import pytest

from tests.helpers import assert_one_line_error, run_cli

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(32)


@pytest.mark.parametrize("fmt", ["kaldi", "sclite", "sphinx"])
@pytest.mark.parametrize(
    ("name", "content", "fragments"),
    [
        ("some.csv", "id,hypothesis\nu1,hello\n", ["line 1", "CSV header", "werest import csv"]),
        ("noheader.csv", "u1,hello world\nu2,good morning\n", ["line 1", "werest import csv"]),
        ("table.tsv", "utt_id\treference\nu1\thello\n", ["TSV header", "werest import csv"]),
        (
            "m.json",
            '\n{"audio_filepath": "a.wav", "text": "hi", "pred_text": "hi"}\n',
            ["line 2", "JSON", "werest import manifest"],
        ),
        ("all.json", '[{"id": "u1", "text": "hi"}]', ["JSON", "werest import manifest"]),
        ("image.png", PNG, ["not a text file: a PNG image"]),
    ],
)
def test_a_file_of_another_format_is_refused(capsys, tmp_path, fmt, name, content, fragments):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    out = tmp_path / "t.parquet"
    status, _, err = run_cli(capsys, "import", fmt, path, "--out", out)
    line = assert_one_line_error(status, err, "import", str(path), *fragments)
    assert "row" not in line.split(":")[0]
    assert not out.exists()


def test_kaldi_and_sclite_files_are_still_read(capsys, tmp_path):
    (tmp_path / "exp").mkdir()
    kaldi = tmp_path / "exp" / "text"
    kaldi.write_text("u1 hello world\nu2 good, morning\nu3\n", encoding="utf-8")
    out = tmp_path / "k.parquet"
    status, stdout, err = run_cli(capsys, "import", "kaldi", kaldi, "--out", out)
    assert status == 0, err
    assert "exp" in stdout  # a `text` file is named after its folder
    trn = tmp_path / "a.trn"
    trn.write_text("[noise] hello world (u1)\n{uh} hi (u2)\n", encoding="utf-8")
    status, _, err = run_cli(capsys, "import", "sclite", trn, "--out", tmp_path / "s.parquet")
    assert status == 0, err


def test_a_kaldi_text_in_the_working_folder_is_named_after_it(tmp_path, monkeypatch):
    from pathlib import Path

    from werest.ingest.importers._common import system_name

    monkeypatch.chdir(tmp_path)
    assert system_name(Path("text")) == tmp_path.name
