"""A user's mistake gets the hint that fits it: an output folder given as a file (or the
reverse), an image given as a CSV, one system's file given where a transcripts table is
expected."""

from __future__ import annotations

from tests.helpers import SMALL, assert_one_line_error, run_cli

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(32)


def small(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(SMALL, encoding="utf-8")
    return path


def test_out_naming_a_folder_says_so_not_kaldi(capsys, tmp_path):
    kaldi = tmp_path / "text"
    kaldi.write_text("u1 hello\n", encoding="utf-8")
    folder = tmp_path / "outputs"
    folder.mkdir()
    status, _, err = run_cli(capsys, "import", "kaldi", kaldi, "--out", folder)
    line = assert_one_line_error(status, err, "import", "is a folder", "table.parquet")
    assert "Kaldi" not in line
    assert list(folder.iterdir()) == []


def test_out_without_a_table_suffix_gets_no_kaldi_hint(capsys, tmp_path):
    kaldi = tmp_path / "text"
    kaldi.write_text("u1 hello\n", encoding="utf-8")
    status, _, err = run_cli(capsys, "import", "kaldi", kaldi, "--out", tmp_path / "table")
    line = assert_one_line_error(status, err, "import", "to write", ".parquet")
    assert "Kaldi" not in line


def test_sample_out_naming_a_folder_shows_a_sheet_name(capsys, tmp_path):
    status, _, err = run_cli(
        capsys, "sample", f"input={small(tmp_path)}", "budget=1", f"out={tmp_path}"
    )
    assert_one_line_error(status, err, "sample", "is a folder", "to_label.csv")


def test_a_png_named_csv_is_not_text_not_latin1(capsys, tmp_path):
    image = tmp_path / "t.csv"
    image.write_bytes(PNG)
    status, _, err = run_cli(capsys, "estimate", f"input={image}")
    line = assert_one_line_error(status, err, "estimate", "not a text file: a PNG image")
    assert "iconv" not in line and "latin1" not in line


def test_a_parquet_file_named_csv_says_to_name_it_parquet(capsys, tmp_path):
    wrong = tmp_path / "t.csv"
    wrong.write_bytes(b"PAR1" + bytes(40))
    status, _, err = run_cli(capsys, "leaderboard", f"input={wrong}")
    assert_one_line_error(status, err, "leaderboard", "a Parquet file", "name it .parquet")


def test_output_dir_naming_a_file_says_so_before_any_work(capsys, tmp_path):
    taken = tmp_path / "out"
    taken.write_text("mine\n", encoding="utf-8")
    for command in ("estimate", "leaderboard", "score"):
        status, _, err = run_cli(capsys, command, f"input={small(tmp_path)}", f"output_dir={taken}")
        line = assert_one_line_error(status, err, command, "output_dir=", "is a file")
        assert "File exists" not in line
    assert taken.read_text(encoding="utf-8") == "mine\n"


def test_one_systems_csv_given_to_estimate_points_to_import_csv(capsys, tmp_path):
    one = tmp_path / "whisper.csv"
    one.write_text("id,hypothesis\nu1,hello\nu2,world\n", encoding="utf-8")
    for command in ("estimate", "leaderboard"):
        status, _, err = run_cli(capsys, command, f"input={one}")
        assert_one_line_error(
            status,
            err,
            command,
            "column 'dataset': missing required column",
            "(columns: id, hypothesis)",
            f"werest import csv {one} --out table.parquet",
        )
