"""The svarah and verli importers: the real layouts in ../shared/data, then small hand-written
layouts in tmp_path for the rules and the error paths.

Every expected value on real data is derived here from the raw files (csv, gzip, json, os);
nothing is copied from werest's own output. The integration tests skip with a reason when
../shared/data is absent (see conftest.py).
"""

from __future__ import annotations

import csv
import gzip
import json
import os
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import shared_path
from werest.errors import InputError
from werest.ingest.importers import import_table

pytestmark = [pytest.mark.shared]

LABELS = {
    "wer",
    "hits",
    "substitutions",
    "deletions",
    "insertions",
    "reference_words",
    "rtf",
    "normalized_reference",
    "normalized_hypothesis",
}


def csv_records(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


# --------------------------------------------------------------------------- svarah: real data

TEN = ("comparisons", "v0823-ten-system")
BASELINE = ("runs", "baseline-3-models")


def svarah_file(*parts: str) -> Path:
    return shared_path("svarah", "results", *parts, "per_utterance.csv")


@pytest.fixture(scope="module")
def svarah_table():
    return import_table("svarah", [shared_path("svarah")])


@pytest.fixture(scope="module")
def svarah_expected() -> dict[str, list[dict[str, str]]]:
    """backend -> its raw rows, by the documented rule: the ten-system comparison (the
    largest), then the runs in name order, first file wins; archive/ and gates/ not read."""
    files = [svarah_file(*TEN)]
    runs = shared_path("svarah", "results", "runs")
    files += sorted(p / "per_utterance.csv" for p in runs.iterdir() if p.is_dir())
    chosen: dict[str, list[dict[str, str]]] = {}
    for path in files:
        by_backend: dict[str, list[dict[str, str]]] = {}
        for record in csv_records(path):
            by_backend.setdefault(record["backend_id"], []).append(record)
        for backend, records in by_backend.items():
            chosen.setdefault(backend, records)
    return chosen


def test_svarah_twelve_systems_each_once(svarah_table, svarah_expected):
    assert len(svarah_expected) == 12  # the data README's count, from the raw files
    assert set(svarah_table["system"]) == set(svarah_expected)
    assert svarah_table["system"].nunique() == 12
    assert set(svarah_table["dataset"]) == {"svarah"}
    assert svarah_table["utt_id"].nunique() == 200
    assert len(svarah_table) == sum(len(r) for r in svarah_expected.values()) == 2400
    assert not svarah_table.duplicated(["dataset", "utt_id", "system"]).any()
    # the two on-device models the comparison lacks come from the baseline run
    baseline = {r["backend_id"] for r in csv_records(svarah_file(*BASELINE))}
    ten = {r["backend_id"] for r in csv_records(svarah_file(*TEN))}
    assert baseline - ten == {"voicerefine_parakeet_q4", "voicerefine_whisper_tiny_int8"}


def test_svarah_rows_match_the_chosen_files(svarah_table, svarah_expected):
    """hypothesis = raw_hypothesis (empty when status != success), reference = raw_reference,
    duration = audio_seconds, processing_seconds = inference_seconds."""
    table = svarah_table.set_index(["system", "utt_id"])
    for backend, records in svarah_expected.items():
        for record in records:
            row = table.loc[(backend, record["eval_id"])]
            failed = record["status"] != "success"
            assert row["hypothesis"] == ("" if failed else record["raw_hypothesis"].strip())
            assert row["reference"] == record["raw_reference"]
            assert row["duration"] == pytest.approx(float(record["audio_seconds"]))
            assert row["processing_seconds"] == pytest.approx(float(record["inference_seconds"]))


def test_svarah_backend_in_several_files_comes_from_the_comparison(svarah_table):
    """elevenlabs_scribe_v2 is in the comparisons, runs/baseline-3-models and archive/;
    smallest_pulse_pro in four files, one of them (runs/smallest-pulse-pro) with failures."""
    holders = [
        path
        for path in sorted(shared_path("svarah", "results").glob("*/*/per_utterance.csv"))
        if any(r["backend_id"] == "elevenlabs_scribe_v2" for r in csv_records(path))
    ]
    assert len(holders) > 2
    rows = svarah_table[svarah_table["system"] == "elevenlabs_scribe_v2"]
    assert len(rows) == 200
    assert set(rows["source_run"]) == {"/".join(TEN)}
    pro = svarah_table[svarah_table["system"] == "smallest_pulse_pro"]
    comparison = {
        r["eval_id"]: r["raw_hypothesis"]
        for r in csv_records(svarah_file(*TEN))
        if r["backend_id"] == "smallest_pulse_pro"
    }
    assert dict(zip(pro["utt_id"], pro["hypothesis"], strict=True)) == {
        k: v.strip() for k, v in comparison.items()
    }
    assert set(svarah_table["source_run"]) == {"/".join(TEN), "/".join(BASELINE)}


def test_svarah_empty_hypotheses_counted_from_the_files(svarah_table, svarah_expected):
    """Failures and blank successes are empty hypotheses, never missing rows."""
    records = [r for rs in svarah_expected.values() for r in rs]
    failed = sum(r["status"] != "success" for r in records)
    blank = sum(r["status"] == "success" and not r["raw_hypothesis"].strip() for r in records)
    assert (svarah_table["hypothesis"] == "").sum() == failed + blank
    assert svarah_table["hypothesis"].notna().all()


def test_svarah_failed_run_gives_empty_hypotheses(tmp_path):
    """runs/smallest-pulse-pro has rate-limit and network failures: imported alone, each is an
    empty hypothesis; joined after the comparison, their blank audio_seconds are filled."""
    path = svarah_file("runs", "smallest-pulse-pro")
    records = csv_records(path)
    failed = {r["eval_id"] for r in records if r["status"] != "success"}
    blank = {r["eval_id"] for r in records if r["status"] == "success" and not r["raw_hypothesis"]}
    assert len(failed) > 0
    table = import_table("svarah", [path])
    assert len(table) == len(records)
    empty = set(table.loc[table["hypothesis"] == "", "utt_id"])
    assert empty == failed | blank
    failures = table[table["utt_id"].isin(failed)]
    assert failures["processing_seconds"].isna().all()
    assert failures["error_category"].notna().all()
    assert failures["duration"].isna().all()  # no other row of those utterances here
    # the run first, then the comparison: the run's smallest_pulse_pro wins, the comparison
    # gives the other nine backends and the failed rows' audio length
    both = import_table("svarah", [path, svarah_file(*TEN)])
    assert both["system"].nunique() == 10
    pro = both[both["system"] == "smallest_pulse_pro"]
    assert set(pro.loc[pro["hypothesis"] == "", "utt_id"]) == failed | blank
    assert pro["duration"].notna().all()


def test_svarah_reads_raw_text_not_the_harness_normaliser(svarah_table):
    records = csv_records(svarah_file(*TEN))
    normalised_differs = [r for r in records if r["normalized_hypothesis"] != r["raw_hypothesis"]]
    assert normalised_differs
    table = svarah_table.set_index(["system", "utt_id"])
    for record in normalised_differs[:50]:
        row = table.loc[(record["backend_id"], record["eval_id"])]
        assert row["hypothesis"] == record["raw_hypothesis"].strip()
        assert row["reference"] == record["raw_reference"]


def test_svarah_no_label_columns_and_no_smoke_tests(svarah_table):
    assert not LABELS & set(svarah_table.columns)
    gate_backends = {
        r["backend_id"]
        for path in shared_path("svarah", "results", "gates").glob("*/per_utterance.csv")
        for r in csv_records(path)
    }
    # a gate-only backend (5 utterances) would be a 13th system
    gate_only = gate_backends - set(svarah_table["system"])
    assert gate_only
    assert not gate_only & set(svarah_table["system"])
    assert set(svarah_table["language"]) == {"en"}


# --------------------------------------------------------------------------- svarah: synthetic

HEADER = [
    "backend_id",
    "eval_id",
    "status",
    "wer",
    "hits",
    "inference_seconds",
    "audio_seconds",
    "error_category",
    "raw_reference",
    "raw_hypothesis",
    "normalized_reference",
    "normalized_hypothesis",
]


def write_run(folder: Path, rows: list[dict[str, str]], header=HEADER) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "per_utterance.csv"
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=header, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow(row)
    return path


def run_row(backend, utt, hypothesis="hello world", status="success", seconds="0.5", audio="2.0"):
    return {
        "backend_id": backend,
        "eval_id": utt,
        "status": status,
        "wer": "0.0",
        "hits": "2",
        "inference_seconds": seconds if status == "success" else "",
        "audio_seconds": audio if status == "success" else "",
        "error_category": "" if status == "success" else "http_429",
        "raw_reference": f"Hello world {utt}.",
        "raw_hypothesis": hypothesis if status == "success" else "",
        "normalized_reference": "hello world",
        "normalized_hypothesis": "hello world",
    }


def tiny_svarah(root: Path) -> Path:
    """comparisons/a-two (backends p, q), comparisons/b-three (p, q, r: the larger one, so it
    wins over a-two although it sorts later), runs/r1 (r again, and s with a failure),
    archive/ and gates/ with a backend t that must not appear."""
    results = root / "results"
    utts = ("u1", "u2")
    write_run(results / "comparisons/a-two", [run_row(b, u, "A") for b in "pq" for u in utts])
    write_run(results / "comparisons/b-three", [run_row(b, u, "B") for b in "pqr" for u in utts])
    write_run(
        results / "runs/r1",
        [run_row("r", u, "R") for u in utts]
        + [run_row("s", "u1", "S"), run_row("s", "u2", status="failure")],
    )
    write_run(results / "archive/old", [run_row("t", u) for u in utts])
    write_run(results / "gates/g-5", [run_row("t", "u1")])
    return root


def test_svarah_tiny_layout_precedence(tmp_path):
    table = import_table("svarah", [tiny_svarah(tmp_path / "svarah")])
    rows = {(r["system"], r["utt_id"]): r for r in table.to_dict(orient="records")}
    assert sorted({s for s, _ in rows}) == ["p", "q", "r", "s"]
    assert {rows[s, "u1"]["hypothesis"] for s in "pqr"} == {"B"}  # largest comparison first
    assert rows["s", "u1"]["hypothesis"] == "S"
    failed = rows["s", "u2"]
    assert failed["hypothesis"] == ""  # a failure is an empty hypothesis, not a missing row
    assert pd.isna(failed["processing_seconds"])
    assert failed["duration"] == 2.0  # filled from the utterance's other rows
    assert failed["error_category"] == "http_429"
    assert rows["p", "u1"]["reference"] == "Hello world u1."
    assert rows["p", "u1"]["processing_seconds"] == 0.5
    assert not LABELS & set(table.columns)


def test_svarah_named_run_folder_is_read(tmp_path):
    root = tiny_svarah(tmp_path / "svarah")
    table = import_table("svarah", [root / "results/gates/g-5"])
    assert list(table["system"]) == ["t"]
    write_run(root / "results/gates/never-ran", [])  # header only: skipped in a folder
    table = import_table("svarah", [root / "results/gates"])
    assert list(table["system"]) == ["t"]


def test_svarah_missing_backend_id_names_file_and_column(tmp_path):
    header = [c for c in HEADER if c != "backend_id"]
    path = write_run(tmp_path / "run", [run_row("p", "u1")], header=header)
    with pytest.raises(InputError, match=r"per_utterance\.csv, column 'backend_id': missing") as e:
        import_table("svarah", [path])
    assert str(path) in str(e.value)


def test_svarah_bad_seconds_name_row_and_column(tmp_path):
    rows = [run_row("p", "u1"), run_row("p", "u2", seconds="fast")]
    path = write_run(tmp_path / "run", rows)
    with pytest.raises(InputError, match=r"row 2, column 'inference_seconds': expected seconds"):
        import_table("svarah", [path])


def test_svarah_repeated_utterance_names_the_row(tmp_path):
    path = write_run(tmp_path / "run", [run_row("p", "u1"), run_row("q", "u1"), run_row("p", "u1")])
    with pytest.raises(InputError, match=r"row 3, column 'eval_id': backend 'p' has utterance"):
        import_table("svarah", [path])


def test_svarah_empty_file_and_folder(tmp_path):
    path = write_run(tmp_path / "run", [])
    with pytest.raises(InputError, match="header but no rows"):
        import_table("svarah", [path])
    (tmp_path / "nothing").mkdir()
    with pytest.raises(InputError, match=r"nothing: no <run>/per_utterance\.csv files found"):
        import_table("svarah", [tmp_path / "nothing"])


# --------------------------------------------------------------------------- verli: real data


def verli_transcripts() -> Path:
    return shared_path("verli", "results", "transcripts")


def engine_files(streaming: bool) -> dict[str, Path]:
    """engine -> file, from the file names: ``librispeech-<engine>.json.gz``."""
    out = {}
    for name in sorted(os.listdir(verli_transcripts())):
        if name.startswith("librispeech-") and name.endswith(".json.gz"):
            engine = name[len("librispeech-") : -len(".json.gz")]
            if streaming or not engine.endswith("-stream"):
                out[engine] = verli_transcripts() / name
    return out


def read_gz(path: Path) -> dict[str, str]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return json.load(handle)


def dighr_references() -> dict[str, str]:
    """LibriSpeech test-clean references of dighr/en/190423/actual.csv: id = base name."""
    records = csv_records(shared_path("dighr", "en", "190423", "actual.csv"))
    return {r["path"].rsplit("/", 1)[-1].split(".")[0]: r["sentence"] for r in records}


@pytest.fixture(scope="module")
def verli_table():
    return import_table(
        "verli", [shared_path("verli")], reference=str(shared_path("dighr", "en", "190423"))
    )


def test_verli_batch_engines_prefixed(verli_table):
    engines = engine_files(streaming=False)
    assert len(engines) == 27
    assert set(verli_table["system"]) == {f"verli/{e}" for e in engines}
    assert set(verli_table["dataset"]) == {"librispeech-test-clean"}
    assert not verli_table["system"].str.endswith("-stream").any()
    # two runs of one model, both imported as two systems
    assert {"verli/whisper-large-v3", "verli/whisper-large-v3-v20240930"} <= set(
        verli_table["system"]
    )


def test_verli_rows_per_engine_are_the_file_ids(verli_table):
    """An id absent from an engine's file is no row (resemble 1,289, rev 2,582,
    inworld-stt-1 2,618), and every hypothesis is the file's text as written."""
    counts = Counter(verli_table["system"])
    for engine, path in engine_files(streaming=False).items():
        transcripts = read_gz(path)
        assert counts[f"verli/{engine}"] == len(transcripts), engine
    assert counts["verli/resemble"] == 1289
    assert counts["verli/rev"] == 2582
    assert counts["verli/inworld-stt-1"] == 2618
    assert len(verli_table) == sum(len(read_gz(p)) for p in engine_files(False).values())
    gpt = verli_table[verli_table["system"] == "verli/openai-gpt-4o-transcribe"]
    expected = {
        k: v.strip() for k, v in read_gz(engine_files(False)["openai-gpt-4o-transcribe"]).items()
    }
    assert dict(zip(gpt["utt_id"], gpt["hypothesis"], strict=True)) == expected
    # formatted text is kept (case, punctuation): no normalising in the importer
    assert gpt["hypothesis"].str.contains(r"[A-Z]").any()
    assert gpt["hypothesis"].str.contains(r"[,.?!]").any()


def test_verli_empty_strings_are_empty_hypotheses(verli_table):
    gemini = read_gz(engine_files(False)["gemini-2.5-flash"])
    blank = {k for k, v in gemini.items() if not v.strip()}
    assert blank
    rows = verli_table[verli_table["system"] == "verli/gemini-2.5-flash"]
    assert set(rows.loc[rows["hypothesis"] == "", "utt_id"]) == blank


def test_verli_references_from_dighr(verli_table):
    references = dighr_references()
    assert len(references) == 2620
    assert verli_table["reference"].notna().all()
    assert (verli_table["reference"] == verli_table["utt_id"].map(references)).all()
    assert (verli_table["speaker"] == verli_table["utt_id"].str.split("-").str[0]).all()


def test_verli_latency_summaries_per_system(verli_table):
    latency = json.loads(shared_path("verli", "results", "latency.json").read_text("utf-8"))
    by_system = verli_table.groupby("system")["request_latency_median_s"].agg(["min", "max"])
    for engine in engine_files(streaming=False):
        row = by_system.loc[f"verli/{engine}"]
        if engine in latency:
            assert row["min"] == row["max"] == latency[engine]["median_s"]
        else:
            assert pd.isna(row["min"])


def test_verli_without_reference_and_with_streaming():
    table = import_table("verli", [shared_path("verli")], streaming=True)
    engines = engine_files(streaming=True)
    stream = {e for e in engines if e.endswith("-stream")}
    assert len(stream) == 10
    assert set(table["system"]) == {f"verli/{e}" for e in engines}
    assert table["reference"].isna().all()  # label-free use
    counts = Counter(table["system"])
    for engine in stream:
        assert counts[f"verli/{engine}"] == len(read_gz(engines[engine]))
    assert (
        table.loc[table["system"].isin([f"verli/{e}" for e in stream]), "request_latency_median_s"]
        .isna()
        .all()
    )


def test_verli_reference_from_an_afrispeech_librispeech_file():
    """An AfriSpeech LibriSpeech result CSV (audio_paths, reference) serves as well."""
    afri = next(shared_path("afrispeech", "results").glob("intron-open-test-libri-speech-*.csv"))
    path = engine_files(False)["whisper-tiny"]
    table = import_table("verli", [path], reference=str(afri))
    references = dighr_references()
    assert (table["reference"] == table["utt_id"].map(references)).all()


# --------------------------------------------------------------------------- verli: synthetic


def write_gz(path: Path, data: object | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data if isinstance(data, bytes) else json.dumps(data).encode("utf-8")
    path.write_bytes(gzip.compress(raw))
    return path


def tiny_verli(root: Path) -> Path:
    """Engine ``a`` on three utterances (one empty), ``b`` on one, ``a-stream`` on one;
    latency.json for ``a`` only; a dighr-style reference CSV lacking ``1-2-0003``."""
    transcripts = root / "results" / "transcripts"
    write_gz(
        transcripts / "librispeech-a.json.gz",
        {"1-2-0000": "Hello, World.", "1-2-0001": "", "1-2-0003": "Twenty 20"},
    )
    write_gz(transcripts / "librispeech-b.json.gz", {"1-2-0001": "good bye"})
    write_gz(transcripts / "librispeech-a-stream.json.gz", {"1-2-0000": "hello world"})
    latency = {"a": {"median_s": 0.5, "mean_s": 0.6, "p90_s": 0.9, "n": 40, "mode": "sync"}}
    (root / "results" / "latency.json").write_text(json.dumps(latency), "utf-8")
    (root / "refs").mkdir()
    (root / "refs" / "actual.csv").write_text(
        ",path,sentence\n"
        "0,LibriSpeech/test-clean/1/2/1-2-0000.flac,HELLO WORLD\n"
        "1,LibriSpeech/test-clean/1/2/1-2-0001.flac,GOOD BYE\n",
        "utf-8",
    )
    return root


def test_verli_tiny_layout(tmp_path, caplog):
    root = tiny_verli(tmp_path / "verli")
    with caplog.at_level("WARNING", logger="werest.ingest.importers.verli"):
        table = import_table("verli", [root], reference=str(root / "refs"))
    rows = {(r["system"], r["utt_id"]): r for r in table.to_dict(orient="records")}
    assert sorted(rows) == [
        ("verli/a", "1-2-0000"),
        ("verli/a", "1-2-0001"),
        ("verli/a", "1-2-0003"),
        ("verli/b", "1-2-0001"),
    ]
    assert rows["verli/a", "1-2-0000"]["hypothesis"] == "Hello, World."  # as written
    assert rows["verli/a", "1-2-0001"]["hypothesis"] == ""  # empty output, kept
    assert rows["verli/a", "1-2-0000"]["reference"] == "HELLO WORLD"
    assert pd.isna(rows["verli/a", "1-2-0003"]["reference"])  # not in the reference file
    assert "1 utterance(s) have no reference" in caplog.text
    assert rows["verli/a", "1-2-0000"]["request_latency_p90_s"] == 0.9
    assert pd.isna(rows["verli/b", "1-2-0001"]["request_latency_median_s"])
    assert rows["verli/a", "1-2-0000"]["speaker"] == "1"
    with_stream = import_table("verli", [root], streaming="true")
    assert set(with_stream["system"]) == {"verli/a", "verli/b", "verli/a-stream"}
    assert with_stream["reference"].isna().all()
    # a file named explicitly is read, streaming or not
    named = import_table("verli", [root / "results/transcripts/librispeech-a-stream.json.gz"])
    assert list(named["system"]) == ["verli/a-stream"]


def test_verli_malformed_json_names_the_file(tmp_path):
    path = write_gz(tmp_path / "librispeech-x.json.gz", b'{"1-2-0000": "hi",')
    with pytest.raises(InputError, match=r"librispeech-x\.json\.gz: not valid JSON") as error:
        import_table("verli", [path])
    assert str(path) in str(error.value)


def test_verli_not_gzip_names_the_file(tmp_path):
    path = tmp_path / "librispeech-x.json.gz"
    path.write_text('{"1-2-0000": "hi"}', "utf-8")
    with pytest.raises(InputError, match=r"librispeech-x\.json\.gz: not a readable gzip file"):
        import_table("verli", [path])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (["hi"], "expected an object of id -> text, got list"),
        ({}, "no utterances in the file"),
        ({"1-2-0000": None}, "utterance '1-2-0000': expected text, got NoneType"),
        ({"1-2-0000": 3}, "utterance '1-2-0000': expected text, got int"),
        ({" ": "hi"}, "empty utterance id"),
    ],
)
def test_verli_bad_content_names_file_and_utterance(tmp_path, data, message):
    path = write_gz(tmp_path / "librispeech-x.json.gz", data)
    with pytest.raises(InputError, match=rf"librispeech-x\.json\.gz: {message}"):
        import_table("verli", [path])


def test_verli_repeated_id_names_it(tmp_path):
    raw = b'{"1-2-0000": "hi", "1-2-0000": "ho"}'
    path = write_gz(tmp_path / "librispeech-x.json.gz", raw)
    with pytest.raises(InputError, match=r"utterance id '1-2-0000' appears twice"):
        import_table("verli", [path])


def test_verli_bad_file_names_and_references(tmp_path):
    other = write_gz(tmp_path / "earnings22-x.json.gz", {"a": "b"})
    with pytest.raises(InputError, match="not a verli transcript file"):
        import_table("verli", [other])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"empty: no librispeech-<engine>\.json\.gz files"):
        import_table("verli", [tmp_path / "empty"])
    path = write_gz(tmp_path / "t" / "librispeech-x.json.gz", {"1-2-0000": "hi"})
    refs = tmp_path / "refs.csv"
    refs.write_text("utt,words\n1-2-0000,HI\n", "utf-8")
    with pytest.raises(InputError, match=r"refs\.csv: none of the columns path, "):
        import_table("verli", [path], reference=str(refs))
    refs.write_text("path,sentence\na/1-2-0000.flac,HI\nb/1-2-0000.flac,HO\n", "utf-8")
    with pytest.raises(InputError, match=r"refs\.csv: utterance '1-2-0000' has two different"):
        import_table("verli", [path], reference=str(refs))
    with pytest.raises(InputError, match="no such file"):
        import_table("verli", [path], reference=str(tmp_path / "absent"))


def test_verli_same_engine_twice_is_refused(tmp_path):
    first = write_gz(tmp_path / "one" / "librispeech-x.json.gz", {"1-2-0000": "hi"})
    second = write_gz(tmp_path / "two" / "librispeech-x.json.gz", {"1-2-0000": "ho"})
    with pytest.raises(InputError, match="both give engine 'x'"):
        import_table("verli", [first, second])


def test_verli_bad_latency_file_names_it(tmp_path):
    root = tiny_verli(tmp_path / "verli")
    (root / "results" / "latency.json").write_text('{"a": {"median_s": "fast"}}', "utf-8")
    with pytest.raises(InputError, match=r"latency\.json: 'a'\.median_s: expected a number"):
        import_table("verli", [root])


# --------------------------------------------------------------------------- the joined set


def shared_sources(formats: set[str]) -> dict:
    """conf/data/all_shared.yaml's data block with only ``formats``' sources, its
    ``../shared/data`` paths resolved beside this repository (as conftest.shared_path)."""
    from werest.cli.config import compose

    def resolve(value: str) -> str:
        prefix = "../shared/data/"
        return (
            str(shared_path(*value[len(prefix) :].split("/")))
            if value.startswith(prefix)
            else value
        )

    data = compose("train", ["data=all_shared"]).data
    sources = []
    for source in data.sources:
        if source.get("format") in formats:
            entry = {k: source[k] for k in source}
            entry["paths"] = [resolve(p) for p in source.paths]
            if entry.get("reference"):
                entry["reference"] = resolve(entry["reference"])
            sources.append(entry)
    return {"sources": sources, "rename": dict(data.rename)}


def test_all_shared_lists_svarah_and_verli_with_a_domain():
    from werest.cli.config import compose
    from werest.model.training import domain_of

    data = compose("train", ["data=all_shared"]).data
    formats = {s.get("format"): s for s in data.sources}
    assert {"svarah", "verli"} <= set(formats)
    assert str(formats["verli"].reference).endswith("dighr/en/190423")
    assert {"svarah", "verli"} <= set(data.licences)
    assert "CC BY 4.0" in data.licences.svarah and "MIT" in data.licences.verli
    domains = domain_of(pd.Series(["svarah", "librispeech-test-clean"]), data.domains)
    assert list(domains) == ["indian-en", "librispeech"]


def test_librispeech_joined_from_dighr_afrispeech_and_verli():
    """The three LibriSpeech test-clean sources of all_shared, loaded as `werest train` does:
    one dataset, every utterance and every system once, every row with the reference."""
    from werest.model.training import load_sources

    table = load_sources(shared_sources({"dighr", "afrispeech", "verli"}))
    libri = table[table["dataset"] == "librispeech-test-clean"]
    references = dighr_references()
    dighr_systems = [
        p.stem for p in shared_path("dighr", "en", "190423").glob("*.csv") if p.stem != "actual"
    ]
    afrispeech_files = [
        p
        for p in shared_path("afrispeech", "results").glob("*.csv")
        if "libri" in p.name and "-wer-" in p.name
    ]
    expected_systems = len(dighr_systems) + len(afrispeech_files) + len(engine_files(False))
    assert expected_systems == 54
    assert libri["utt_id"].nunique() == len(references) == 2620
    assert libri["system"].nunique() == expected_systems
    assert not libri.duplicated(["utt_id", "system"]).any()
    assert libri["reference"].notna().all()
    assert (libri["reference"] == libri["utt_id"].map(references)).all()
    verli = libri[libri["system"].str.startswith("verli/")]
    assert len(verli) == sum(len(read_gz(p)) for p in engine_files(False).values())
    assert "dighr-190423" not in set(table["dataset"])


def test_label_free_verli_takes_the_joined_sources_reference():
    """Without reference=, verli's rows take the reference dighr gives the same utterance."""
    from werest.model.training import load_sources

    data = {
        "sources": [
            {"format": "dighr", "paths": [str(shared_path("dighr", "en", "190423"))]},
            {"format": "verli", "paths": [str(engine_files(False)["whisper-tiny"])]},
        ],
        "rename": {"dighr-190423": "librispeech-test-clean"},
    }
    table = load_sources(data)
    verli = table[table["system"] == "verli/whisper-tiny"]
    assert len(verli) == 2620
    assert (verli["reference"] == verli["utt_id"].map(dighr_references())).all()


def test_join_references_fills_and_settles_disagreements(caplog):
    from werest.model.training import join_references

    table = pd.DataFrame(
        {
            "dataset": ["d", "d", "d", "d", "e", "e"],
            "utt_id": ["u1", "u1", "u2", "u2", "u1", "u1"],
            "system": ["a", "b", "a", "b", "a", "b"],
            "reference": ["ONE", None, "TWO", "TOO", "X", "Y"],
            "source": [0, 1, 0, 1, 0, 0],
        }
    )
    with caplog.at_level("WARNING", logger="werest.model.training"):
        joined = join_references(table, "source")
    # d has two sources: u1 filled, u2 takes the first source's; e has one: left as it is
    assert list(joined["reference"]) == ["ONE", "ONE", "TWO", "TWO", "X", "Y"]
    assert "1 row(s) whose reference differs" in caplog.text


def test_unknown_source_key_is_a_config_error():
    from werest.errors import ConfigError
    from werest.model.training import load_sources

    data = {"sources": [{"format": "verli", "paths": ["x"], "refrence": "y"}]}
    with pytest.raises(ConfigError, match=r"data.sources\[0\]: unknown key\(s\) refrence"):
        load_sources(data)
