"""The svarah and verli importers: the real layouts in ../shared/data, then small hand-written
layouts in tmp_path for the rules and the error paths.

Every expected value on real data is derived here from the raw files (csv, gzip, json, os);
nothing is copied from werest's own output. The integration tests skip with a reason when
../shared/data is absent (see conftest.py).
"""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import shared_path
from werest.errors import InputError
from werest.importers import import_table

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
