"""The afrispeech importer: hand-written result files in tmp_path, then the shared copy.

Expected values are written by hand (unit tests) or derived from the raw CSVs with the csv
module (integration tests); nothing is copied from werest's own output.
"""

from __future__ import annotations

import csv
import logging
import os
import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import shared_path
from werest.errors import InputError
from werest.ingest.importers import import_table
from werest.ingest.importers.afrispeech import SYSTEMS

NORMALIZED_HEADER = [
    "idx",
    "domain",
    "gender",
    "duration",
    "age_group",
    "accent",
    "user_ids",
    "audio_paths",
    "origin",
    "country",
    "reference",
    "prediction",
    "wer",
    "name",
    "split",
]


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def normalized_row(idx, domain, reference, prediction, name, wer="0.5", speaker="spk1"):
    return [
        idx,
        domain,
        "Female",
        "4.5",
        "26-40",
        "yoruba",
        speaker,
        f"/AfriSpeech-100/test/{idx}.wav",
        "african",
        "NG",
        reference,
        prediction,
        wer,
        name,
        "test",
    ]


def tiny_tree(root: Path, *, score: str = "0.5", wer: str = "0.5") -> Path:
    """Two AfriSpeech test systems (3 utterances: 2 clinical, 1 general) and two LibriSpeech
    systems (2 utterances)."""
    results = root / "results"
    normalized = results / "normalized"
    write_csv(
        normalized / f"intron-open-test-openai_whisper_large-wer-{score}-3.csv",
        NORMALIZED_HEADER,
        [
            normalized_row(
                "101", "clinical", "take two tablets, daily.", "take 2 tablets", "x", wer
            ),
            normalized_row("102", "clinical", "the patient is stable.", "", "x", wer),
            normalized_row("201", "general", "hello there.", "NA", "x", wer, speaker="spk2"),
        ],
    )
    write_csv(
        normalized / f"intron-open-test-openai_whisper_medium_all-wer-{score}-3.csv",
        NORMALIZED_HEADER,
        [
            normalized_row("201", "general", "hello there.", "hello there", "y", wer, "spk2"),
            normalized_row("101", "clinical", "take two tablets, daily.", "take two", "y", wer),
            normalized_row("102", "clinical", "the patient is stable.", "patient", "y", wer),
        ],
    )
    libri_header = ["hypothesis", "reference", "audio_paths", "accent", "hypothesis_clean"]
    write_csv(
        results / f"intron-open-test-libri-speech-whisper_large-wer-{score}-2.csv",
        libri_header,
        [
            ["Concord returned.", "CONCORD RETURNED", "/x/6930-75918-0000.flac", "US", "no"],
            ["", "THE ENGLISH", "/x/LibriSpeech/6930-75918-0001.flac", "US", "no"],
        ],
    )
    write_csv(
        results / f"intron-open-libri-test-clean-gcp-transcribe-wer-{score}-2.csv",
        ["file", "transcript", "id", "audio_paths", "predictions_raw", "predictions", "wer"],
        [
            [
                "/y/6930-75918-0000.flac",
                "CONCORD RETURNED",
                "6930-75918-0000",
                "/y/a",
                "Con",
                "c",
                wer,
            ],
            ["/y/6930-75918-0001.flac", "THE ENGLISH", "6930-75918-0001", "/y/b", "the", "t", wer],
        ],
    )
    return root


def by_key(table: pd.DataFrame) -> dict[tuple[str, str, str], dict]:
    return {(r["dataset"], r["utt_id"], r["system"]): r for r in table.to_dict(orient="records")}


def test_tiny_tree_rows_names_and_columns(tmp_path):
    table = import_table("afrispeech", [tiny_tree(tmp_path)])
    rows = by_key(table)
    # 2 systems x (2 clinical + 1 general) + 2 systems x 2 LibriSpeech utterances = 10 rows
    assert len(table) == 10
    assert sorted(table["dataset"].unique()) == [
        "afrispeech-test-clinical",
        "afrispeech-test-general",
        "librispeech-test-clean",
    ]
    large = "openai/whisper-large"
    tuned = "intronhealth/afrispeech-whisper-medium-all"
    assert set(table["system"]) == {large, tuned, "gcp-speech"}
    # whisper_large (LibriSpeech stem) and openai_whisper_large (normalized stem): one name
    assert set(table.loc[table["system"] == large, "dataset"]) == set(table["dataset"])
    # an empty prediction is an empty hypothesis; "NA" is text, not a missing value
    assert rows["afrispeech-test-clinical", "102", large]["hypothesis"] == ""
    assert rows["afrispeech-test-general", "201", large]["hypothesis"] == "NA"
    assert rows["librispeech-test-clean", "6930-75918-0001", large]["hypothesis"] == ""
    # text kept as written
    row = rows["afrispeech-test-clinical", "101", large]
    assert row["reference"] == "take two tablets, daily."
    assert row["hypothesis"] == "take 2 tablets"
    assert (row["speaker"], row["age"], row["gender"], row["accent"]) == (
        "spk1",
        "26-40",
        "Female",
        "yoruba",
    )
    assert (row["country"], row["origin"], row["domain"], row["split"]) == (
        "NG",
        "african",
        "clinical",
        "test",
    )
    assert row["duration"] == 4.5
    assert row["source_audio"] == "/AfriSpeech-100/test/101.wav"
    assert "audio" not in table.columns  # paths on another machine
    # GCP LibriSpeech: transcript is the reference, predictions_raw the hypothesis
    gcp = rows["librispeech-test-clean", "6930-75918-0000", "gcp-speech"]
    assert (gcp["reference"], gcp["hypothesis"], gcp["speaker"]) == (
        "CONCORD RETURNED",
        "Con",
        "6930",
    )
    # fine-tuned on AfriSpeech: only the *_all system
    tuned_on = table.groupby("system")["fine_tuned_on"].unique().map(list).to_dict()
    assert tuned_on[tuned] == ["afrispeech-all"]
    assert pd.isna(tuned_on[large][0]) and len(tuned_on[large]) == 1


def test_labels_in_files_and_names_are_never_read(tmp_path):
    first = import_table("afrispeech", [tiny_tree(tmp_path / "a")])
    second = import_table("afrispeech", [tiny_tree(tmp_path / "b", score="0.9999", wer="7")])
    pd.testing.assert_frame_equal(first, second)


def test_results_folder_and_single_files_give_the_same_rows(tmp_path):
    root = tiny_tree(tmp_path)
    whole = import_table("afrispeech", [root / "results"])
    files = sorted((root / "results").rglob("*.csv"))
    single = import_table("afrispeech", files)
    key = ["dataset", "utt_id", "system"]
    pd.testing.assert_frame_equal(
        whole.sort_values(key).reset_index(drop=True)[sorted(whole.columns)],
        single.sort_values(key).reset_index(drop=True)[sorted(single.columns)],
    )


def test_disagreeing_references_use_the_first_systems_with_a_warning(tmp_path, caplog):
    root = tiny_tree(tmp_path)
    path = next((root / "results" / "normalized").glob("*medium_all*"))
    path.write_text(path.read_text().replace("hello there.,hello there", "hullo.,hello there"))
    with caplog.at_level(logging.WARNING, logger="werest.ingest.importers"):
        table = import_table("afrispeech", [root])
    general = table[table["dataset"] == "afrispeech-test-general"]
    # openai_whisper_large sorts before openai_whisper_medium_all: its reference wins
    assert general["reference"].tolist() == ["hello there.", "hello there."]
    assert "differs from the first system's" in caplog.text


def test_unknown_stems_are_named_safely(tmp_path, caplog):
    normalized = tmp_path / "results" / "normalized"
    rows = [normalized_row("1", "general", "a b", "a b", "acme/asr-v2")]
    write_csv(normalized / "intron-open-dev-acme_asr_v2-wer-0.1-1.csv", NORMALIZED_HEADER, rows)
    rows = [normalized_row("1", "general", "a b", "a", "Some Model (beta)")]
    write_csv(
        normalized / "intron-open-dev-foo_bar_clinical-wer-0.1-1.csv", NORMALIZED_HEADER, rows
    )
    with caplog.at_level(logging.WARNING, logger="werest.ingest.importers"):
        table = import_table("afrispeech", [tmp_path])
    names = dict(zip(table["system"], table["fine_tuned_on"], strict=True))
    # an org/model name column is used; otherwise the stem with '-' for '_'
    assert set(names) == {"acme/asr-v2", "foo-bar-clinical"}
    assert names["foo-bar-clinical"] == "afrispeech-clinical"
    assert pd.isna(names["acme/asr-v2"])
    assert "unknown system stem" in caplog.text


def test_missing_column_lists_the_columns_found(tmp_path):
    path = write_csv(
        tmp_path / "intron-open-dev-openai_whisper_large-wer-0.1-1.csv",
        ["idx", "domain", "reference"],
        [["1", "general", "a"]],
    )
    with pytest.raises(InputError, match=r"column 'prediction'.*found: idx, domain, reference"):
        import_table("afrispeech", [path])


def test_duplicate_id_names_both_rows(tmp_path):
    path = write_csv(
        tmp_path / "intron-open-dev-openai_whisper_large-wer-0.1-2.csv",
        NORMALIZED_HEADER,
        [
            normalized_row("7", "general", "a", "a", "x"),
            normalized_row("7", "general", "a", "b", "x"),
        ],
    )
    with pytest.raises(
        InputError, match=r"row 2, column 'idx'.*'7' appears twice \(first at row 1"
    ):
        import_table("afrispeech", [path])


def test_folder_without_result_files_and_misnamed_file(tmp_path):
    (tmp_path / "notes.csv").write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match="no AfriSpeech result files"):
        import_table("afrispeech", [tmp_path])
    with pytest.raises(InputError, match="not an AfriSpeech result file name"):
        import_table("afrispeech", [tmp_path / "notes.csv"])


# --------------------------------------------------------------------------- shared data

_RESULT = re.compile(r"^intron-open-(.+)-wer-[^-]*-\d+\.csv$")


def raw_records(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def afrispeech_table() -> pd.DataFrame:
    return import_table("afrispeech", [shared_path("afrispeech")])


@pytest.fixture(scope="module")
def raw_expected() -> dict[tuple[str, str], dict[str, tuple[str, str]]]:
    """{(dataset, file stem): {utt_id: (hypothesis, reference)}} from the raw CSVs."""
    results = shared_path("afrispeech", "results")
    expected: dict[tuple[str, str], dict[str, tuple[str, str]]] = {}
    for path in sorted((results / "normalized").glob("*.csv")):
        split, stem = _RESULT.match(path.name)[1].split("-", 1)
        for record in raw_records(path):
            dataset = f"afrispeech-{split}-{record['domain']}"
            entry = (record["prediction"], record["reference"])
            expected.setdefault((dataset, stem), {})[record["idx"]] = entry
    for path in sorted(results.glob("*.csv")):
        middle = _RESULT.match(path.name)[1]
        for record in raw_records(path):
            if middle.startswith("test-libri-speech-"):
                stem = middle.removeprefix("test-libri-speech-")
                name = record["audio_paths"].rsplit("/", 1)[-1]
                utt, entry = name.rsplit(".", 1)[0], (record["hypothesis"], record["reference"])
            else:
                stem = middle.removeprefix("libri-test-clean-")
                utt, entry = record["id"], (record["predictions_raw"], record["transcript"])
            expected.setdefault(("librispeech-test-clean", stem), {})[utt] = entry
    return expected


@pytest.mark.shared
def test_shared_row_counts_and_systems(afrispeech_table, raw_expected):
    # Systems per dataset = result files per split (ls | wc -l): dev 28, test 25; LibriSpeech
    # 22 intron-open-test-libri-speech-* files + 1 GCP file = 23.
    systems = afrispeech_table.groupby("dataset")["system"].nunique().to_dict()
    assert systems == {
        "afrispeech-dev-clinical": 28,
        "afrispeech-dev-general": 28,
        "afrispeech-test-clinical": 25,
        "afrispeech-test-general": 25,
        "librispeech-test-clean": 23,
    }
    counts = afrispeech_table.groupby(["dataset", "system"]).size().to_dict()
    expected = {(d, SYSTEMS[stem]): len(rows) for (d, stem), rows in raw_expected.items()}
    assert counts == expected
    # file names say 5471 test, 2872 dev and 2620 LibriSpeech rows per system
    per_dataset = afrispeech_table.groupby("dataset").size() / pd.Series(systems)
    assert per_dataset["afrispeech-test-clinical"] + per_dataset["afrispeech-test-general"] == 5471
    assert per_dataset["afrispeech-dev-clinical"] + per_dataset["afrispeech-dev-general"] == 2872
    assert per_dataset["librispeech-test-clean"] == 2620


@pytest.mark.shared
def test_shared_rows_match_the_raw_files(afrispeech_table, raw_expected):
    imported = {
        (d, s, u): (h, r)
        for d, s, u, h, r in afrispeech_table[
            ["dataset", "system", "utt_id", "hypothesis", "reference"]
        ].itertuples(index=False)
    }
    expected = {
        (d, SYSTEMS[stem], u): entry
        for (d, stem), rows in raw_expected.items()
        for u, entry in rows.items()
    }
    assert imported == expected


@pytest.mark.shared
def test_shared_empty_predictions_are_empty_hypotheses(afrispeech_table, raw_expected):
    # README: AWS medical 279 empty on test, GCP 170/171, Azure 89: counted from the raw files
    empty_raw = Counter()
    for (dataset, stem), rows in raw_expected.items():
        empty_raw[dataset, SYSTEMS[stem]] += sum(h == "" for h, _ in rows.values())
    test = [k for k in empty_raw if k[0].startswith("afrispeech-test")]
    aws_medical = sum(empty_raw[k] for k in test if k[1] == "aws-transcribe-medical")
    assert aws_medical == 279
    empty = afrispeech_table[afrispeech_table["hypothesis"] == ""]
    assert empty.groupby(["dataset", "system"]).size().to_dict() == {
        k: v for k, v in empty_raw.items() if v
    }
    assert afrispeech_table["hypothesis"].notna().all()
    assert afrispeech_table["reference"].notna().all()


@pytest.mark.shared
def test_shared_same_model_same_name_across_sets(afrispeech_table):
    sets = afrispeech_table.groupby("system")["dataset"].unique().map(set).to_dict()
    everywhere = {s for s, d in sets.items() if len(d) == 5}
    assert {
        "openai/whisper-large",
        "openai/whisper-medium",
        "openai/whisper-small.en",
        "facebook/hubert-large-ls960-ft",
        "gcp-speech",
        "intronhealth/afrispeech-whisper-medium-all",
    } <= everywhere
    # 30 distinct systems: 28 on dev, + whisper-base and robust-ft-libri-960h only on LibriSpeech
    assert len(sets) == 30


@pytest.mark.shared
def test_shared_fine_tuned_systems(afrispeech_table):
    tuned = afrispeech_table.dropna(subset=["fine_tuned_on"])
    assert sorted(tuned["system"].unique()) == sorted(
        f"intronhealth/afrispeech-{base}-{part}"
        for base in ("whisper-medium", "wav2vec2-large-xlsr-53")
        for part in ("all", "clinical", "general")
    )
    suffix = tuned["system"].str.rsplit("-", n=1).str[1]
    assert (tuned["fine_tuned_on"] == "afrispeech-" + suffix).all()


@pytest.mark.shared
def test_shared_librispeech_ids_join_dighr_190423(afrispeech_table):
    dighr = import_table("dighr", [shared_path("dighr", "en", "190423")])
    libri = afrispeech_table[afrispeech_table["dataset"] == "librispeech-test-clean"]
    assert set(libri["utt_id"]) == set(dighr["utt_id"])
    assert len(set(libri["utt_id"])) == 2620


@pytest.mark.shared
def test_shared_metadata(afrispeech_table):
    test = afrispeech_table[afrispeech_table["dataset"].str.startswith("afrispeech-")]
    assert "audio" not in afrispeech_table.columns
    assert test["source_audio"].str.startswith("/AfriSpeech-100/").all()
    assert test["speaker"].notna().all() and test["duration"].gt(0).all()
    assert set(test["domain"]) == {"clinical", "general"}
    # per utterance, metadata is the same for every system
    per_utt = test.groupby(["dataset", "utt_id"])[["speaker", "accent", "duration"]].nunique()
    assert (per_utt.max() == 1).all()
    assert os.path.basename(test["source_audio"].iloc[0]).endswith(".wav")
