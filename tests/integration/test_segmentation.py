"""Word-segmentation metrics by hand: R-value points, tolerance edges, one-to-one hits,
the input formats (CTM, TextGrid, JSON, a transcripts table's asr_words), and the command."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from werest.cli.main import main
from werest.errors import InputError
from werest.ingest.table import write_table
from werest.text.segmentation import (
    BoundaryCounts,
    evaluate,
    match_boundaries,
    normalised_edit_distance,
    r_value,
    read_words,
    scores,
    words_from_table,
    write_json,
)

pytestmark = [pytest.mark.audio]


def words(utt: str, *items: tuple[str, float, float]) -> pd.DataFrame:
    return pd.DataFrame([(utt, w, s, e) for w, s, e in items],
                        columns=["utt_id", "word", "start", "end"])  # fmt: skip


@pytest.mark.parametrize(
    ("hit_rate", "over", "expected"),
    [
        (100, 0, 1.0),  # perfect
        (0, -100, 1 - math.sqrt(2) / 2),  # no boundary at all: r1 = √2·100, r2 = 0
        (100, 100, 1 - (100 + 100 / math.sqrt(2)) / 200),  # every boundary, twice as many
        (50, 0, 1 - (50 + 50 / math.sqrt(2)) / 200),
    ],
)
def test_r_value_at_known_points(hit_rate, over, expected):
    assert r_value(hit_rate, over) == pytest.approx(expected)


def test_r_value_does_not_reward_over_segmentation_as_f1_does():
    exact = scores(BoundaryCounts(hits=10, n_hyp=10, n_ref=10))
    doubled = scores(BoundaryCounts(hits=10, n_hyp=20, n_ref=10))
    assert exact["r_value"] == 1.0 and exact["over_segmentation"] == 0.0
    assert doubled["over_segmentation"] == 100.0 and doubled["recall"] == 1.0
    assert doubled["r_value"] < doubled["f1"]


def test_tolerance_edges_are_inclusive():
    assert match_boundaries([0.50], [0.52], 0.02) == 1  # exactly 20 ms: a hit
    assert match_boundaries([0.50], [0.48], 0.02) == 1
    assert match_boundaries([0.50], [0.5201], 0.02) == 0  # just beyond
    assert match_boundaries([0.50], [0.55], 0.05) == 1 and match_boundaries([0.5], [0.5], 0) == 1


def test_matching_is_one_to_one():
    assert match_boundaries([1.0], [0.99, 1.01], 0.02) == 1
    assert match_boundaries([0.99, 1.01], [1.0], 0.02) == 1
    assert match_boundaries([0.0, 0.03], [0.015, 0.045], 0.02) == 2  # both, paired in order


def test_an_utterance_by_hand():
    reference = words("u1", ("a", 0.0, 0.5), ("b", 0.5, 1.0))  # boundaries 0, .5, 1
    hypothesis = words("u1", ("a", 0.01, 0.3), ("x", 0.3, 0.52), ("b", 0.52, 1.05))
    corpus, per = evaluate(reference, hypothesis, tolerance=0.02)
    # hits: 0↔0.01, 0.5↔0.52 (the edge); 1.0↔1.05 misses; 0.3 is an extra boundary
    assert (corpus["hits"], corpus["n_hyp"], corpus["n_ref"]) == (2, 4, 3)
    assert corpus["precision"] == 0.5 and corpus["recall"] == pytest.approx(2 / 3)
    assert corpus["f1"] == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    assert corpus["over_segmentation"] == pytest.approx(100 / 3)
    assert corpus["ned"] == pytest.approx(1 / 3)  # one inserted word over three
    assert len(per) == 1 and corpus["utterances"] == 1


def test_missing_utterances_are_counted_not_scored():
    reference = pd.concat([words("u1", ("a", 0, 1)), words("u2", ("b", 0, 1))])
    corpus, _ = evaluate(reference, words("u1", ("a", 0, 1)), 0.02)
    assert corpus["utterances"] == 1 and corpus["missing_hypothesis"] == 1
    assert corpus["r_value"] == 1.0


def test_normalised_edit_distance():
    assert normalised_edit_distance([], []) == 0.0
    assert normalised_edit_distance(["a", "b"], ["a", "c", "b", "d"]) == 0.5


def test_ctm_textgrid_and_json_read_the_same_words(tmp_path):
    from praatio import textgrid

    expected = words("utt-1", ("hello", 0.1, 0.5), ("world", 0.6, 1.0))
    (tmp_path / "w.ctm").write_text(
        ";; a comment\nutt-1 1 0.10 0.40 hello 0.9\nutt-1 1 0.50 0.10 <sil>\n"
        "utt-1 1 0.60 0.40 world\n",
        encoding="utf-8",
    )
    grid = textgrid.Textgrid()
    grid.addTier(textgrid.IntervalTier("words", [(0.1, 0.5, "hello"), (0.5, 0.6, "sil"),
                                                 (0.6, 1.0, "world")], 0, 1.2))  # fmt: skip
    grid.save(str(tmp_path / "utt-1.TextGrid"), format="short_textgrid",
              includeBlankSpaces=True)  # fmt: skip
    write_json(expected, tmp_path / "w.json")
    for name in ("w.ctm", "utt-1.TextGrid", "w.json"):
        got = read_words(tmp_path / name)
        pd.testing.assert_frame_equal(got.reset_index(drop=True), expected, check_dtype=False)


def test_bad_ctm_line_names_the_row(tmp_path):
    path = tmp_path / "bad.ctm"
    path.write_text("u 1 0.1 0.2 a\nu 1 zero 0.2 b\n", encoding="utf-8")
    with pytest.raises(Exception, match="row 2"):
        read_words(path)


def test_command_writes_scores(tmp_path, capsys):
    write_json(words("u1", ("a", 0.0, 0.5), ("b", 0.5, 1.0)), tmp_path / "ref.json")
    write_json(words("u1", ("a", 0.0, 0.51), ("b", 0.51, 1.1)), tmp_path / "hyp.json")
    out = tmp_path / "seg"
    status = main(["segmentation", f"reference={tmp_path / 'ref.json'}",
                   f"hypothesis={tmp_path / 'hyp.json'}", f"output_dir={out}"])  # fmt: skip
    assert status == 0
    corpus = pd.read_csv(out / "segmentation.csv").iloc[0]
    assert (corpus["hits"], corpus["n_hyp"], corpus["n_ref"]) == (2, 3, 3)
    assert "R-value" in capsys.readouterr().out
    assert (out / "segmentation_utterances.csv").is_file()
    missing = main(["segmentation", f"reference={tmp_path / 'nope.ctm'}",
                    f"hypothesis={tmp_path / 'hyp.json'}", f"output_dir={out}"])  # fmt: skip
    assert missing == 2


def test_labels_are_compared_without_case_and_edge_punctuation():
    reference = words("u1", ("two", 0.0, 0.5), ("don't", 0.5, 1.0))
    hypothesis = words("u1", ("Two,", 0.0, 0.5), ("Don't.", 0.5, 1.0))
    assert evaluate(reference, hypothesis, 0.02)[0]["ned"] == 0.0
    other = words("u1", ("2", 0.0, 0.5), ("dont", 0.5, 1.0))
    assert evaluate(reference, other, 0.02)[0]["ned"] == 1.0  # spelling still counts


def transcripts(**systems: list) -> pd.DataFrame:
    """A transcripts table: per system, per utterance ``(utt_id, asr_words or None)``."""
    rows = [
        {"dataset": "d", "utt_id": utt, "system": system, "hypothesis": "x",
         "asr_words": None if timed is None else json.dumps(timed)}
        for system, items in systems.items()
        for utt, timed in items
    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_a_transcripts_table_gives_its_asr_words(tmp_path):
    table = transcripts(
        whisper=[("u1", [["Hello,", 0.1, 0.5, 0.9], [" world", 0.6, 1.0, 0.8]]), ("u2", [])],
        sphinx=[("u1", None)],
    )
    expected = words("u1", ("Hello,", 0.1, 0.5), ("world", 0.6, 1.0))
    for name in ("t.parquet", "t.csv", "t.jsonl", "t.json"):
        write_table(table, tmp_path / name)
        got = read_words(tmp_path / name)  # the only system with timings
        pd.testing.assert_frame_equal(got, expected, check_dtype=False)
    write_json(read_words(tmp_path / "t.csv"), tmp_path / "w.json")
    pd.testing.assert_frame_equal(read_words(tmp_path / "w.json"), expected, check_dtype=False)


def test_transcripts_table_errors_name_the_setting_row_and_column(tmp_path):
    two = transcripts(a=[("u1", [["x", 0, 1, 1]])], b=[("u1", [["y", 0, 1, 1]])])
    with pytest.raises(InputError, match=r"several systems.*give hypothesis_system=NAME"):
        words_from_table(two, None, "hypothesis_system", tmp_path / "t.csv")
    with pytest.raises(InputError, match=r"reference_system=c: no word timings.*a, b"):
        words_from_table(two, "c", "reference_system", tmp_path / "t.csv")
    assert list(words_from_table(two, "b", "s", tmp_path)["word"]) == ["y"]
    bad = transcripts(a=[("u1", [["x", 0, 1, 1]]), ("u2", [["y", "soon"]])])
    with pytest.raises(InputError, match=r"row 2.*asr_words"):
        words_from_table(bad, None, "s", tmp_path / "t.csv")
    with pytest.raises(InputError, match=r"no word timings.*faster_whisper"):
        words_from_table(bad.drop(columns="asr_words"), None, "s", tmp_path / "t.csv")
    twice = pd.concat([two.iloc[:1], two.iloc[:1].assign(dataset="e")], ignore_index=True)
    with pytest.raises(InputError, match="several datasets"):
        words_from_table(twice, None, "s", tmp_path / "t.csv")


def test_command_picks_systems_of_a_transcripts_table(tmp_path, capsys):
    table = transcripts(
        a=[("u1", [["a", 0.0, 0.5, 1], ["b", 0.5, 1.0, 1]])],
        b=[("u1", [["a", 0.0, 0.51, 1], ["b", 0.51, 1.1, 1]])],
    )
    write_table(table, tmp_path / "t.parquet")
    out = tmp_path / "seg"
    status = main(["segmentation", f"reference={tmp_path / 't.parquet'}", "reference_system=a",
                   f"hypothesis={tmp_path / 't.parquet'}", "hypothesis_system=b",
                   f"output_dir={out}"])  # fmt: skip
    assert status == 0
    corpus = pd.read_csv(out / "segmentation.csv").iloc[0]
    assert (corpus["hits"], corpus["n_hyp"], corpus["n_ref"]) == (2, 3, 3)
    ambiguous = main(["segmentation", f"reference={tmp_path / 't.parquet'}",
                      f"hypothesis={tmp_path / 't.parquet'}", f"output_dir={out}"])  # fmt: skip
    assert ambiguous == 2
    assert "several systems have word timings (a, b)" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "data", "fragment"),
    [
        ("ref.ctm", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "a PNG image"),
        ("ref.ctm", b"u1 1 0.0 0.5 caf\xe9\n", "line 1: not valid UTF-8"),
        ("ref.json", b'{"u1": [{"word": "caf\xe9", "start": 0, "end": 1}]}', "not valid UTF-8"),
        ("ref.jsonl", "hello (u1)\n".encode("utf-16"), "UTF-16"),
    ],
)
def test_word_timings_that_are_not_utf8_text_are_one_line(tmp_path, capsys, name, data, fragment):
    """A binary file or another encoding named .ctm/.json is the usual one-line error (it was a
    UnicodeDecodeError traceback: issue 36's audit, segmentation-png-reference)."""
    (tmp_path / name).write_bytes(data)
    write_json(words("u1", ("a", 0.0, 0.5)), tmp_path / "hyp.json")
    out = tmp_path / "seg"
    status = main(["segmentation", f"reference={tmp_path / name}",
                   f"hypothesis={tmp_path / 'hyp.json'}", f"output_dir={out}"])  # fmt: skip
    err = capsys.readouterr().err
    assert "Traceback" not in err and status == 2, err
    assert err.count("\n") == 1 and err.startswith("werest segmentation: error: "), err
    assert name in err and fragment in err, err
    assert not out.exists()
