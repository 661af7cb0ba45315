"""Importers: the real layouts in ../shared/data, and hand-written Kaldi/sclite/malformed files.

Every expected value is derived here from the raw files (csv module, plain string handling) or
written by hand; nothing is copied from werest's own output. The integration tests skip with a
reason when ../shared/data is absent (see conftest.py).
"""

from __future__ import annotations

import csv
import os
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import shared_path
from tests.helpers import write_file
from werest.errors import ConfigError, InputError, WerestError
from werest.ingest.importers import import_table

pytestmark = [pytest.mark.shared]

# --------------------------------------------------------------------------- raw-file helpers


def csv_records(path: Path, delimiter: str = ",") -> list[dict[str, str]]:
    """Rows of a CSV file as dicts of strings (blank cells as '')."""
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter=delimiter))


def base_id(cell: str) -> str:
    """The utterance id a dighr path cell stands for: base name, no extension, lower case."""
    name = cell.strip().replace("\\", "/").split("/")[-1]
    return os.path.splitext(name)[0].lower()


def file_id_cell(record: dict[str, str]) -> str:
    for column in ("files", "paths", "filename"):
        if column in record:
            return record[column]
    raise AssertionError(f"no file column in {sorted(record)}")


def rows_by_utterance(table: pd.DataFrame) -> dict[str, tuple[str, str | None]]:
    """{utt_id: (hypothesis, reference or None)} of a one-system slice of a table."""
    references = table["reference"].astype(object).where(table["reference"].notna(), None)
    return dict(
        zip(table["utt_id"], zip(table["hypothesis"], references, strict=True), strict=True)
    )


def assert_same_rows(actual: dict, expected: dict, label: str) -> None:
    missing = sorted(set(expected) - set(actual))
    extra = sorted(set(actual) - set(expected))
    differ = sorted(k for k in set(actual) & set(expected) if actual[k] != expected[k])
    details = [
        f"{len(missing)} missing e.g. {missing[:3]}" if missing else "",
        f"{len(extra)} unexpected e.g. {extra[:3]}" if extra else "",
        f"{len(differ)} differ e.g. {[(k, actual[k], expected[k]) for k in differ[:2]]}"
        if differ
        else "",
    ]
    assert not (missing or extra or differ), f"{label}: " + "; ".join(d for d in details if d)


# --------------------------------------------------------------------------- dighr: real data

# (file, transcript column, score column, system) per dated folder, read off the CSV headers
# and the data README: 190301 has no watson file (combined.csv's watson columns are empty),
# 190331/deepspeech.csv has no reference (skipped), 181215 holds four Google locale models.
_FOUR = ("azure", "deepspeech", "google", "watson")
DIGHR_SOURCES: dict[str, list[tuple[str, str, str, str]]] = {
    "181215": [
        ("google.csv", "google_transcriptionUS", "word_error_rate", "google"),
        ("google.csv", "google_transcriptionUK", "word_error_rate_uk", "google-en-GB"),
        (
            "google.csv",
            "google_transcriptionAustralia",
            "word_error_rate_australia",
            "google-en-AU",
        ),
        ("google.csv", "google_transcriptionIndia", "word_error_rate_india", "google-en-IN"),
    ],
    "190301": [
        ("azur.csv", "transcription_en-US", "azure_word_error_rate", "azure"),
        ("deepspeech.csv", "deepspeech_transcription", "word_error_rate", "deepspeech"),
        ("google.csv", "google_transcriptionUS", "word_error_rate", "google"),
    ],
    "190331": [
        (f"{s}.csv", "transcription_en-US", "word_error_rate", s)
        for s in ("azure", "deepspeech2", "google", "watson")
    ],
    "190423": [(f"{s}.csv", "transcription_en-US", "word_error_rate", s) for s in _FOUR],
    "190515": [(f"{s}.csv", "transcription_en-US", "word_error_rate", s) for s in _FOUR],
}

# Rows per (dataset, system), counted by hand from the raw files (wc -l minus the header and the
# summary rows, minus the repeated id in 190331, minus the locale rows whose transcript and
# score are both blank in 181215: UK 4076-3749, AU 4076-3974, IN 4076-3987).
DIGHR_ROW_COUNTS = {
    ("dighr-181215", "google"): 4076,
    ("dighr-181215", "google-en-GB"): 327,
    ("dighr-181215", "google-en-AU"): 102,
    ("dighr-181215", "google-en-IN"): 89,
    ("dighr-190301", "azure"): 4076,
    ("dighr-190301", "deepspeech"): 4076,
    ("dighr-190301", "google"): 4076,
    ("dighr-190331", "azure"): 645,
    ("dighr-190331", "deepspeech2"): 645,
    ("dighr-190331", "google"): 645,
    ("dighr-190331", "watson"): 645,
    **{("dighr-190423", s): 2620 for s in _FOUR},
    **{("dighr-190515", s): 7016 for s in _FOUR},
}


def agreed_ids(folder: Path) -> dict[str, str]:
    """{row number: id} for the rows on which all the folder's system files but one agree.

    The per-system CSVs of a folder list the same clips in the same order, numbered by their
    first, unnamed column. A lone dissenting name on a row is a corrupted name: 190515/google.csv
    row 5171 gives a 256-character clip name where the other three give the 128-character id.
    """
    files = sorted({file_name for file_name, *_ in DIGHR_SOURCES[folder.name]})
    if len(files) < 3:
        return {}
    ids_by_row: dict[str, Counter] = {}
    for file_name in files:
        for record in csv_records(folder / file_name):
            if file_id_cell(record).strip():
                ids_by_row.setdefault(record[""], Counter())[base_id(file_id_cell(record))] += 1
    agreed = {}
    for row, counter in ids_by_row.items():
        ((top, n),) = counter.most_common(1)
        if n >= 2 and n == sum(counter.values()) - 1:
            agreed[row] = top
    return agreed


def expected_dighr_folder(folder: Path) -> dict[str, dict[str, tuple[str, str | None]]]:
    """{system: {utt_id: (hypothesis, reference)}} derived from one dated folder's raw CSVs."""
    agreed = agreed_ids(folder)
    actual = None
    if (folder / "actual.csv").exists():
        actual = {
            base_id(r["path"]): r["sentence"].strip() for r in csv_records(folder / "actual.csv")
        }
    expected: dict[str, dict[str, tuple[str, str | None]]] = {}
    for file_name, column, score, system in DIGHR_SOURCES[folder.name]:
        rows: dict[str, tuple[str, str | None]] = {}
        for record in csv_records(folder / file_name):
            cell = file_id_cell(record)
            if not cell.strip():
                continue  # a summary row
            hypothesis = record[column].strip()
            if not hypothesis and not record[score].strip():
                continue  # the system was not run on this utterance
            utt = agreed.get(record[""], base_id(cell))
            if actual is not None:
                reference = actual[utt]
            else:
                reference = (record.get("actual") or record.get("text") or "").strip()
            entry = (hypothesis, reference or None)
            if utt in rows:
                assert rows[utt] == entry, f"raw {folder.name}/{file_name}: {utt} differs"
                continue  # a repeated id (190331) counts once
            rows[utt] = entry
        expected[system] = rows
    return expected


@pytest.fixture(scope="module")
def dighr_expected() -> dict[str, dict[str, dict[str, tuple[str, str | None]]]]:
    root = shared_path("dighr", "en")
    return {f"dighr-{name}": expected_dighr_folder(root / name) for name in DIGHR_SOURCES}


def test_dighr_imports_every_folder_with_its_systems(dighr_table, dighr_expected):
    root = shared_path("dighr", "en")
    folders = sorted(p.name for p in root.iterdir() if p.is_dir())
    assert folders == sorted(DIGHR_SOURCES), "a dighr folder the test does not know about"
    imported = {
        dataset: sorted(group["system"].unique())
        for dataset, group in dighr_table.groupby("dataset")
    }
    assert imported == {dataset: sorted(systems) for dataset, systems in dighr_expected.items()}


@pytest.mark.parametrize(("dataset", "system"), sorted(DIGHR_ROW_COUNTS))
def test_dighr_row_counts(dighr_table, dighr_expected, dataset, system):
    rows = dighr_table[(dighr_table["dataset"] == dataset) & (dighr_table["system"] == system)]
    assert len(rows) == DIGHR_ROW_COUNTS[dataset, system]
    assert len(rows) == len(dighr_expected[dataset][system])
    assert rows["utt_id"].is_unique


@pytest.mark.parametrize("folder", sorted(DIGHR_SOURCES))
def test_dighr_rows_match_the_raw_files(dighr_table, dighr_expected, folder):
    """Every (system, utterance) with its hypothesis and reference, as derived from the raw
    CSVs; 190515 fails with the corrupted google.csv name (see agreed_ids and the join test)."""
    dataset = f"dighr-{folder}"
    for system, expected in dighr_expected[dataset].items():
        rows = dighr_table[(dighr_table["dataset"] == dataset) & (dighr_table["system"] == system)]
        assert_same_rows(rows_by_utterance(rows), expected, f"{dataset}/{system}")


@pytest.mark.parametrize("folder", ["190301", "190331", "190423", "190515"])
def test_dighr_systems_of_a_folder_join_on_the_same_utterances(dighr_table, folder):
    """Every system of a folder transcribed the same clips: their ids must join.

    BUG (190515): google.csv row 5171 (line 5173) names its clip 'a228f0afad3f86c81f87145b199
    2abb6630...00590c919a1f...94.mp3', a 256-character name that splices other characters into
    the 128-character id the three other files give on that row (same reference, 'What are you
    looking for?'); imported as is, google has an orphan utterance and no row for the real one.
    """
    rows = dighr_table[dighr_table["dataset"] == f"dighr-{folder}"]
    per_system = {s: set(g) for s, g in rows.groupby("system")["utt_id"]}
    every = set.union(*per_system.values())
    unjoined = {s: sorted(every - ids) for s, ids in per_system.items() if every - ids}
    assert not unjoined, {s: [u[:40] for u in ids[:3]] for s, ids in unjoined.items()}


def test_dighr_190515_blank_reference_is_null(dighr_table):
    folder = shared_path("dighr", "en", "190515")
    blank = {
        system: {
            base_id(file_id_cell(r))
            for r in csv_records(folder / f"{system}.csv")
            if file_id_cell(r).strip() and not r["actual"].strip()
        }
        for system in _FOUR
    }
    assert all(len(ids) == 1 for ids in blank.values()), blank
    assert len(set.union(*blank.values())) == 1, "the same utterance in every file"
    (utt,) = blank["azure"]
    rows = dighr_table[dighr_table["dataset"] == "dighr-190515"]
    assert sorted(rows.loc[rows["reference"].isna(), "utt_id"]) == [utt] * 4
    assert sorted(rows.loc[rows["utt_id"] == utt, "system"]) == sorted(_FOUR)
    assert (rows["reference"].dropna().str.strip() != "").all()


def test_dighr_190301_has_no_watson_because_it_was_not_run(dighr_table):
    combined = csv_records(shared_path("dighr", "en", "190301", "combined.csv"))
    watson = ("watson_transcription", "watson_word_error_rate", "watson_scores")
    assert not any(r[c].strip() for r in combined for c in watson), "raw: watson not all blank"
    systems = set(dighr_table.loc[dighr_table["dataset"] == "dighr-190301", "system"])
    assert systems == {"azure", "deepspeech", "google"}


def test_dighr_181215_locale_models_are_distinct_systems(dighr_table):
    raw = csv_records(shared_path("dighr", "en", "181215", "google.csv"))
    rows = dighr_table[dighr_table["dataset"] == "dighr-181215"]
    columns = {
        "google-en-GB": ("google_transcriptionUK", "word_error_rate_uk"),
        "google-en-AU": ("google_transcriptionAustralia", "word_error_rate_australia"),
        "google-en-IN": ("google_transcriptionIndia", "word_error_rate_india"),
    }
    for system, (transcript, score) in columns.items():
        ran = {base_id(r["filename"]) for r in raw if r[transcript].strip() or r[score].strip()}
        assert set(rows.loc[rows["system"] == system, "utt_id"]) == ran, system
        assert len(ran) < len(raw), f"{system} should not cover every utterance"
    # the US model ran everywhere; the locales are not folded into it
    assert set(rows.loc[rows["system"] == "google", "utt_id"]) == {
        base_id(r["filename"]) for r in raw
    }


def test_dighr_190331_repeated_id_kept_once_and_deepspeech_csv_skipped(dighr_table):
    folder = shared_path("dighr", "en", "190331")
    raw_ids = [base_id(file_id_cell(r)) for r in csv_records(folder / "azure.csv")]
    repeated = [utt for utt, n in Counter(i for i in raw_ids if i).items() if n > 1]
    assert len(repeated) == 1, repeated
    rows = dighr_table[dighr_table["dataset"] == "dighr-190331"]
    assert (rows["utt_id"] == repeated[0]).sum() == 4  # once per system
    assert "deepspeech" not in set(rows["system"])
    unlabelled = {base_id(r["files"]) for r in csv_records(folder / "deepspeech.csv")}
    assert not unlabelled & set(rows["utt_id"])


def test_dighr_190423_references_come_from_actual_csv(dighr_table):
    actual = {
        base_id(r["path"]): r["sentence"]
        for r in csv_records(shared_path("dighr", "en", "190423", "actual.csv"))
    }
    rows = dighr_table[dighr_table["dataset"] == "dighr-190423"]
    assert set(rows["utt_id"]) == set(actual)
    assert (rows["reference"] == rows["utt_id"].map(actual)).all()
    assert rows["reference"].str.isupper().all()  # LibriSpeech references are upper case


def test_dighr_summary_rows_are_skipped(dighr_table):
    # 190301/azur.csv ends with a summary row: blank id, mean scores in the last columns
    raw = csv_records(shared_path("dighr", "en", "190301", "azur.csv"))
    summaries = [r for r in raw if not r["files"].strip()]
    assert len(summaries) == 1 and summaries[0]["azure_word_error_rate"].strip()
    assert (dighr_table["utt_id"].str.strip() != "").all()
    azure = dighr_table[
        (dighr_table["dataset"] == "dighr-190301") & (dighr_table["system"] == "azure")
    ]
    assert len(azure) == len(raw) - 1


def test_dighr_utterance_ids_are_lower_case_base_names(dighr_table):
    raw = csv_records(shared_path("dighr", "en", "190301", "deepspeech.csv"))
    assert raw[0]["files"] == "Sample-000000."  # the raw file's odd one out
    rows = dighr_table[dighr_table["dataset"] == "dighr-190301"]
    assert sorted(rows.loc[rows["utt_id"] == "sample-000000", "system"]) == [
        "azure",
        "deepspeech",
        "google",
    ]
    ids = dighr_table["utt_id"]
    assert (ids == ids.str.lower()).all()
    assert not ids.str.contains(r"[/\\.()' ]").any()  # no folders, extensions or tuple debris


@pytest.mark.parametrize(
    ("dataset", "system", "file_name", "transcript", "score"),
    [
        ("dighr-190515", "google", "190515/google.csv", "transcription_en-US", "word_error_rate"),
        (
            "dighr-190301",
            "azure",
            "190301/azur.csv",
            "transcription_en-US",
            "azure_word_error_rate",
        ),
        (
            "dighr-181215",
            "google-en-GB",
            "181215/google.csv",
            "google_transcriptionUK",
            "word_error_rate_uk",
        ),
    ],
)
def test_dighr_empty_hypotheses_are_kept_as_empty_strings(
    dighr_table, dataset, system, file_name, transcript, score
):
    raw = csv_records(shared_path("dighr", "en", file_name))
    empty = {
        base_id(file_id_cell(r))
        for r in raw
        if file_id_cell(r).strip() and not r[transcript].strip() and r[score].strip()
    }
    assert empty, "the raw file should hold empty transcripts with a score"
    rows = dighr_table[(dighr_table["dataset"] == dataset) & (dighr_table["system"] == system)]
    assert rows["hypothesis"].notna().all()
    assert set(rows.loc[rows["hypothesis"] == "", "utt_id"]) == empty


def test_dighr_190301_demographics_from_combined_csv(dighr_table):
    raw = [
        r
        for r in csv_records(shared_path("dighr", "en", "190301", "combined.csv"))
        if r["filename"].strip()
    ]
    expected = {
        base_id(r["filename"]): tuple(r[c].strip() or None for c in ("age", "gender", "accent"))
        for r in raw
    }
    assert sum(1 for v in expected.values() if v[2]) == 1350  # rows with an accent, by hand
    rows = dighr_table[dighr_table["dataset"] == "dighr-190301"]
    for column in ("age", "gender", "accent"):
        assert column in rows.columns
    for _, group in rows.groupby("system"):
        actual = {
            utt: tuple(None if pd.isna(v) else v for v in values)
            for utt, *values in group[["utt_id", "age", "gender", "accent"]].itertuples(index=False)
        }
        assert actual == expected
    with_accent = rows.loc[rows["accent"].notna(), "utt_id"].nunique()
    assert with_accent == sum(1 for v in expected.values() if v[2])


def test_dighr_rows_are_english(dighr_table):
    assert set(dighr_table["language"]) == {"en"}


# --------------------------------------------------------------------------- dighr: small folders


def test_dighr_small_folder_rules(tmp_path):
    folder = tmp_path / "en" / "190423"
    write_file(
        folder / "actual.csv",
        ",path,sentence\n"
        "0,LibriSpeech/A-1.flac,NEW REFERENCE ONE\n"
        "1,LibriSpeech/b-2.flac,REFERENCE TWO\n"
        "2,LibriSpeech/c-3.flac,REFERENCE THREE\n",
    )
    write_file(
        folder / "google.csv",
        ",files,actual,transcription_en-US,word_error_rate,scores\n"
        "0,/mnt/c/data/A-1.flac,OLD REFERENCE ONE,new reference one,1,1\n"
        "1,./data/b-2.,REFERENCE TWO,,0,0\n"  # empty: the service returned nothing
        "2,./data/c-3.flac,REFERENCE THREE,,,\n"  # not run: no row
        ",,,,0.5,0.5\n",  # summary row
    )
    table = import_table("dighr", [tmp_path / "en"])
    assert table[["dataset", "utt_id", "system", "hypothesis", "reference"]].to_dict("records") == [
        {
            "dataset": "dighr-190423",
            "utt_id": "a-1",
            "system": "google",
            "hypothesis": "new reference one",
            "reference": "NEW REFERENCE ONE",
        },
        {
            "dataset": "dighr-190423",
            "utt_id": "b-2",
            "system": "google",
            "hypothesis": "",
            "reference": "REFERENCE TWO",
        },
    ]


def test_dighr_repeated_id_with_different_content_is_an_error(tmp_path):
    folder = tmp_path / "190331"
    csv_path = write_file(
        folder / "azure.csv",
        ",files,actual,transcription_en-US,word_error_rate,scores\n"
        "0,x/u1.,hello there,hello there,1,1\n"
        "1,x/u1.,hello there,hello hair,0.5,0.5\n",
    )
    with pytest.raises(InputError) as error:
        import_table("dighr", [folder])
    assert str(csv_path) in str(error.value) and "u1" in str(error.value)


def test_dighr_missing_folder(tmp_path):
    with pytest.raises(InputError, match="no such file or folder") as error:
        import_table("dighr", [tmp_path / "nowhere"])
    assert str(tmp_path / "nowhere") in str(error.value)


def test_dighr_folder_without_csvs(tmp_path):
    (tmp_path / "190515").mkdir()
    with pytest.raises(InputError, match="no system CSVs"):
        import_table("dighr", [tmp_path / "190515"])


def test_dighr_non_utf8_csv_names_the_line(tmp_path):
    csv_path = write_file(
        tmp_path / "190515" / "azure.csv",
        b",files,actual,transcription_en-US,word_error_rate,scores\n"
        b"0,/x/a.mp3,hello,hello,1,1\n"
        b"1,/x/b.mp3,caf\xe9,cafe,1,1\n",
    )
    with pytest.raises(InputError) as error:
        import_table("dighr", [tmp_path / "190515"])
    assert str(csv_path) in str(error.value)
    assert "line 3" in str(error.value) and "UTF-8" in str(error.value)


# --------------------------------------------------------------------------- thennal10


THENNAL10_LANGUAGES = ("ar", "en", "ml")
THENNAL10_SYSTEMS = ("mms", "seamless", "wav2vec2", "whisper")


def pipe_lines(path: Path) -> dict[str, str]:
    """{N: text} of an ``N.mp3|text`` file."""
    rows = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            name, text = line.split("|", 1)
            rows[name.strip().removesuffix(".mp3")] = text
    return rows


def test_thennal10_shape(thennal10_table):
    table = thennal10_table
    assert len(table) == 3 * 4 * 50
    assert sorted(table["dataset"].unique()) == [f"thennal10-{lang}" for lang in ("ar", "en", "ml")]
    counts = table.groupby(["dataset", "system"]).size()
    assert (counts == 50).all() and len(counts) == 12
    assert sorted(table["system"].unique()) == list(THENNAL10_SYSTEMS)
    assert table["reference"].notna().all()


@pytest.mark.parametrize("language", THENNAL10_LANGUAGES)
def test_thennal10_rows_match_the_raw_files(thennal10_table, language):
    folder = shared_path("thennal10", "transcriptions", language)
    ground = pipe_lines(folder / "ground.txt")
    rows = thennal10_table[thennal10_table["dataset"] == f"thennal10-{language}"]
    assert set(rows["language"]) == {language}
    for system in THENNAL10_SYSTEMS:
        raw = pipe_lines(folder / f"{system}.txt")
        expected = {
            n: (" ".join(text.split()), " ".join(ground[n].split())) for n, text in raw.items()
        }
        assert_same_rows(
            rows_by_utterance(rows[rows["system"] == system]), expected, f"{language}/{system}"
        )


def test_thennal10_audio_paths_exist(thennal10_table):
    samples = shared_path("thennal10", "samples")
    for row in thennal10_table.itertuples():
        audio = Path(row.audio)
        assert audio.is_absolute() and audio.is_file(), row.audio
        assert audio.resolve() == (samples / row.language / f"{row.utt_id}.mp3").resolve()


def test_thennal10_whisper_leading_space_is_stripped(thennal10_table):
    raw = pipe_lines(shared_path("thennal10", "transcriptions", "en", "whisper.txt"))
    assert raw["0"].startswith(" ")  # the raw file's quirk
    rows = thennal10_table
    assert not rows["hypothesis"].str.match(r"\s").any()
    whisper = rows[(rows["dataset"] == "thennal10-en") & (rows["system"] == "whisper")]
    assert whisper.set_index("utt_id").loc["0", "hypothesis"] == (
        "She is known for her work on chloroplast gene regulation and protein synthesis."
    )


def make_thennal10(root: Path, ground: str | bytes, system: str | bytes) -> Path:
    write_file(root / "transcriptions" / "en" / "ground.txt", ground)
    write_file(root / "transcriptions" / "en" / "sys.txt", system)
    return root


def test_thennal10_small_folder(tmp_path):
    root = make_thennal10(
        tmp_path / "t", "0.mp3|Hello there\n1.mp3|Good day\n", "0.mp3| hello\n1.mp3|\n"
    )
    write_file(root / "samples" / "en" / "0.mp3", b"")
    write_file(root / "samples" / "en" / "1.mp3", b"")
    table = import_table("thennal10", [root / "transcriptions" / "en"])
    assert table[["dataset", "utt_id", "system", "hypothesis", "reference", "language"]].to_dict(
        "records"
    ) == [
        {
            "dataset": "thennal10-en",
            "utt_id": "0",
            "system": "sys",
            "hypothesis": "hello",
            "reference": "Hello there",
            "language": "en",
        },
        {
            "dataset": "thennal10-en",
            "utt_id": "1",
            "system": "sys",
            "hypothesis": "",  # an empty transcript is an empty hypothesis
            "reference": "Good day",
            "language": "en",
        },
    ]
    assert [Path(a) for a in table["audio"]] == [
        (root / "samples" / "en" / f"{n}.mp3").resolve() for n in (0, 1)
    ]


def test_thennal10_line_without_pipe(tmp_path):
    root = make_thennal10(tmp_path, "0.mp3|hello\n", "0.mp3|hello\n1.mp3 hello there\n")
    with pytest.raises(InputError) as error:
        import_table("thennal10", [root])
    message = str(error.value)
    assert str(root / "transcriptions" / "en" / "sys.txt") in message and "row 2" in message


def test_thennal10_non_utf8_names_the_line(tmp_path):
    root = make_thennal10(tmp_path, b"0.mp3|hello\n1.mp3|caf\xe9\n", "0.mp3|hello\n")
    with pytest.raises(InputError) as error:
        import_table("thennal10", [root])
    message = str(error.value)
    assert str(root / "transcriptions" / "en" / "ground.txt") in message and "line 2" in message


def test_thennal10_missing_folder_and_no_languages(tmp_path):
    with pytest.raises(InputError, match="no such file or folder"):
        import_table("thennal10", [tmp_path / "nowhere"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"ground\.txt"):
        import_table("thennal10", [tmp_path / "empty"])


# --------------------------------------------------------------------------- sphinx (AN4)


def raw_sphinx(etc: Path, split: str) -> dict[str, tuple[str, str]]:
    """{utt_id: (reference without <s> </s>, fileid)} from an4_<split>.transcription/.fileids."""
    fileids = [
        line.strip()
        for line in (etc / f"an4_{split}.fileids").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    by_name = {f.split("/")[-1]: f for f in fileids}
    rows = {}
    for line in (etc / f"an4_{split}.transcription").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        text, _, rest = line.strip().rpartition("(")
        utt = rest.rstrip(")").strip()
        words = [w for w in text.split() if w not in ("<s>", "</s>")]
        rows[utt] = (" ".join(words), by_name[utt])
    return rows


@pytest.fixture(scope="module")
def an4_table() -> pd.DataFrame:
    return import_table("sphinx", [shared_path("an4")])


def test_sphinx_an4_utterance_tables(an4_table):
    an4 = shared_path("an4")
    assert "system" not in an4_table.columns and "hypothesis" not in an4_table.columns
    assert sorted(an4_table["dataset"].unique()) == ["an4-test", "an4-train"]
    for split, lines_by_hand in (("test", 117), ("train", 948)):
        raw = raw_sphinx(an4 / "etc", split)
        assert len(raw) == lines_by_hand  # non-blank lines of an4_<split>.transcription
        rows = an4_table[an4_table["dataset"] == f"an4-{split}"]
        assert len(rows) == len(raw) and rows["utt_id"].is_unique
        for row in rows.itertuples():
            reference, fileid = raw[row.utt_id]
            assert row.reference == reference
            assert row.speaker == fileid.split("/")[-2]
            assert Path(row.audio).resolve() == (an4 / "wav" / f"{fileid}.sph").resolve()
            assert Path(row.audio).is_file()


def test_sphinx_references_have_no_sentence_marks(an4_table):
    raw = (shared_path("an4", "etc") / "an4_train.transcription").read_text(encoding="utf-8")
    assert "<s>" in raw and "</s>" in raw
    assert not an4_table["reference"].str.contains("<s>|</s>|<sil>", regex=True).any()
    assert (an4_table["reference"].str.strip() != "").all()
    train = an4_table[an4_table["dataset"] == "an4-train"].set_index("utt_id")
    assert train.loc["an251-fash-b", "reference"] == "YES"  # '<s> YES </s> (an251-fash-b)'


def test_sphinx_single_transcription_file(an4_table):
    file = shared_path("an4", "etc", "an4_test.transcription")
    table = import_table("sphinx", [file])
    expected = an4_table[an4_table["dataset"] == "an4-test"].reset_index(drop=True)
    pd.testing.assert_frame_equal(table, expected)


def test_sphinx_small_corpus(tmp_path):
    write_file(tmp_path / "etc" / "toy_dev.transcription", "<s> HELLO WORLD </s> (u1)\nYES (u2)\n")
    write_file(tmp_path / "etc" / "toy_dev.fileids", "spk/u1\nspk/u2\n")
    table = import_table("sphinx", [tmp_path])
    assert table[["dataset", "utt_id", "reference", "speaker"]].to_dict("records") == [
        {"dataset": "toy-dev", "utt_id": "u1", "reference": "HELLO WORLD", "speaker": "spk"},
        {"dataset": "toy-dev", "utt_id": "u2", "reference": "YES", "speaker": "spk"},
    ]
    assert list(table["audio"]) == [
        str((tmp_path / "wav" / "spk" / f"{u}.sph").resolve()) for u in ("u1", "u2")
    ]


def test_sphinx_malformed(tmp_path):
    with pytest.raises(InputError, match="no such file or folder"):
        import_table("sphinx", [tmp_path / "nowhere"])
    (tmp_path / "corpus").mkdir()
    with pytest.raises(InputError, match="transcription"):
        import_table("sphinx", [tmp_path / "corpus"])
    bad = write_file(tmp_path / "etc" / "toy_dev.transcription", "YES (u1)\nNO ID HERE\n")
    with pytest.raises(InputError) as error:
        import_table("sphinx", [bad])
    assert str(bad) in str(error.value) and "row 2" in str(error.value)


# --------------------------------------------------------------------------- kaldi


def kaldi_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Two systems' Kaldi text files (exp/<system>/text) and a reference data/test/text."""
    sys_a = write_file(tmp_path / "exp" / "sysA" / "text", "u1 hello world\nu2\nu3 good  day \n")
    sys_b = write_file(tmp_path / "exp" / "sysB" / "text", "u1 hello word\nu2 good morning\n")
    reference = write_file(
        tmp_path / "data" / "test" / "text", "u1 hello world\nu2 good morning\nu3 good day\n"
    )
    return sys_a, sys_b, reference


def records(table: pd.DataFrame) -> list[tuple]:
    columns = [c for c in ("dataset", "utt_id", "system", "hypothesis", "reference") if c in table]
    frame = table[columns].astype(object)
    return [
        tuple(None if pd.isna(v) else v for v in row)
        for row in frame.sort_values(columns[:3]).itertuples(index=False)
    ]


def test_kaldi_two_systems_with_reference(tmp_path):
    sys_a, sys_b, reference = kaldi_files(tmp_path)
    table = import_table("kaldi", [sys_a, sys_b], reference=str(reference))
    assert records(table) == [
        ("test", "u1", "sysA", "hello world", "hello world"),
        ("test", "u1", "sysB", "hello word", "hello world"),
        ("test", "u2", "sysA", "", "good morning"),  # an id-only line: empty hypothesis
        ("test", "u2", "sysB", "good morning", "good morning"),
        ("test", "u3", "sysA", "good day", "good day"),  # sysB did not run on u3: no row
    ]


def test_kaldi_naming_rules(tmp_path):
    sys_a, _, _ = kaldi_files(tmp_path)
    plain = write_file(tmp_path / "hyps" / "sysC.txt", "u1 hi\n")
    table = import_table("kaldi", [sys_a, plain])
    assert set(zip(table["dataset"], table["system"], strict=True)) == {
        ("kaldi", "sysA"),  # folder name for a generic 'text' file
        ("kaldi", "sysC"),  # the stem otherwise
    }
    assert "reference" not in table.columns
    named = import_table("kaldi", [plain], system="whisper-large", dataset="calls")
    assert records(named) == [("calls", "u1", "whisper-large", "hi")]
    with pytest.raises(ConfigError):
        import_table("kaldi", [sys_a, plain], system="one-name")
    other = write_file(tmp_path / "other" / "sysA" / "text", "u1 hey\n")
    with pytest.raises(ConfigError, match="same system name"):
        import_table("kaldi", [sys_a, other])


def test_kaldi_duplicate_id_names_file_and_row(tmp_path):
    hyp = write_file(tmp_path / "sysA.txt", "u1 hello\nu2 there\nu1 again\n")
    with pytest.raises(InputError) as error:
        import_table("kaldi", [hyp])
    message = str(error.value)
    assert str(hyp) in message and "row 3" in message and "'u1'" in message


def test_kaldi_duplicate_id_in_reference(tmp_path):
    hyp = write_file(tmp_path / "sysA.txt", "u1 hello\n")
    ref = write_file(tmp_path / "ref" / "text", "u1 hello\n\nu1 hello\n")
    with pytest.raises(InputError) as error:
        import_table("kaldi", [hyp], reference=str(ref))
    assert str(ref) in str(error.value) and "row 3" in str(error.value)


def test_kaldi_tab_after_the_id(tmp_path):
    """Kaldi separates the id from the words by white space; tabs occur in real files.

    BUG: read_leading_id_file splits on the first ' ' only, so 'u1<TAB>hello world' gives the
    id 'u1\\thello' and the hypothesis 'world'.
    """
    hyp = write_file(tmp_path / "sysA.txt", "u1\thello world\nu2\t\n")
    table = import_table("kaldi", [hyp])
    assert records(table) == [("kaldi", "u1", "sysA", "hello world"), ("kaldi", "u2", "sysA", "")]


def test_kaldi_missing_and_non_utf8_files(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        import_table("kaldi", [tmp_path / "missing.txt"])
    hyp = write_file(tmp_path / "sysA.txt", "u1 hello\n")
    with pytest.raises(InputError, match="no such file"):
        import_table("kaldi", [hyp], reference=str(tmp_path / "nope" / "text"))
    with pytest.raises(InputError, match="folder"):
        import_table("kaldi", [tmp_path])
    latin = write_file(tmp_path / "sysB.txt", b"u1 hello\nu2 caf\xe9\n")
    with pytest.raises(InputError) as error:
        import_table("kaldi", [latin])
    assert str(latin) in str(error.value) and "line 2" in str(error.value)


# --------------------------------------------------------------------------- sclite


def test_sclite_two_systems_with_reference(tmp_path):
    sys_a = write_file(tmp_path / "sysA.trn", "hello world (spk1-u1)\n(spk1-u2)\n")
    sys_b = write_file(
        tmp_path / "exp" / "sysB" / "hyp.trn",
        "hello (word) (spk1-u1)\ngood   morning (spk1-u2)  \n",
    )
    reference = write_file(
        tmp_path / "dev" / "ref.trn", "hello world (spk1-u1)\ngood morning (spk1-u2)\n"
    )
    table = import_table("sclite", [sys_a, sys_b], reference=str(reference))
    assert records(table) == [
        ("dev", "spk1-u1", "sysA", "hello world", "hello world"),
        ("dev", "spk1-u1", "sysB", "hello (word)", "hello world"),
        ("dev", "spk1-u2", "sysA", "", "good morning"),  # '(id)' alone: empty hypothesis
        ("dev", "spk1-u2", "sysB", "good morning", "good morning"),
    ]


def test_sclite_naming_rules(tmp_path):
    hyp = write_file(tmp_path / "sysA.trn", "hi (u1)\n")
    assert records(import_table("sclite", [hyp])) == [("sclite", "u1", "sysA", "hi")]
    assert records(import_table("sclite", [hyp], system="s", dataset="d")) == [
        ("d", "u1", "s", "hi")
    ]


def test_sclite_malformed_line_names_the_row(tmp_path):
    hyp = write_file(tmp_path / "sysA.trn", "hello (u1)\n\nhello there\n")
    with pytest.raises(InputError) as error:
        import_table("sclite", [hyp])
    message = str(error.value)
    assert str(hyp) in message and "row 3" in message and "hello there" in message


def test_sclite_duplicate_id_names_file_and_row(tmp_path):
    hyp = write_file(tmp_path / "sysA.trn", "a (u1)\nb (u2)\nc (u1)\n")
    with pytest.raises(InputError) as error:
        import_table("sclite", [hyp])
    assert str(hyp) in str(error.value) and "row 3" in str(error.value)


def test_sclite_missing_and_non_utf8(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        import_table("sclite", [tmp_path / "missing.trn"])
    latin = write_file(tmp_path / "sysA.trn", b"hello (u1)\ncaf\xe9 (u2)\n")
    with pytest.raises(InputError) as error:
        import_table("sclite", [latin])
    assert str(latin) in str(error.value) and "line 2" in str(error.value)


# --------------------------------------------------------------------------- import_table


def test_unknown_format_and_no_paths(tmp_path):
    with pytest.raises(ConfigError, match="unknown import format 'nemo'"):
        import_table("nemo", [tmp_path])
    with pytest.raises(WerestError):
        import_table("kaldi", [])
