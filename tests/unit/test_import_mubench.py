"""The mubench importer: a hand-written mu-bench checkout in tmp_path, then the shared copy.

Expected values are written by hand (unit tests) or derived from the raw files with json and
os (integration tests); nothing is copied from werest's own output.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import shared_path
from werest.errors import InputError
from werest.ingest.importers import import_table
from werest.ingest.table import KEY


def utterance(uid, locale, conv, turn, transcript, duration=1.5):
    return {
        "id": uid,
        "locale": locale,
        "conversation_id": conv,
        "turn_index": turn,
        "transcript": transcript,
        "audio_path": f"audio/{locale}/{uid}.wav",
        "duration_sec": duration,
    }


def tiny_root(root: Path) -> Path:
    """en-US: 3 turns of conv-0 (the last unlabelled); zh-CN: conv-0-turn-0 again.
    System ``a`` covers everything; ``b`` only en-US, with turn-1 missing and turn-2 empty."""
    manifest = {
        "locales": ["en-US", "zh-CN"],
        "utterances": [
            utterance("conv-0-turn-0", "en-US", "conv-0", 0, "Hi. I want C N 7.", 3.25),
            utterance("conv-0-turn-1", "en-US", "conv-0", 1, "Ashley Brown."),
            utterance("conv-0-turn-2", "en-US", "conv-0", 2, "  "),
            utterance("conv-0-turn-0", "zh-CN", "conv-0", 0, "你好。"),
        ],
    }
    root.mkdir(parents=True, exist_ok=True)
    (root / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False), "utf-8")
    files = {
        ("a", "en-US", "conv-0-turn-0"): "Hi, I want CN7.\n",
        ("a", "en-US", "conv-0-turn-1"): "Ashley  Brown",
        ("a", "en-US", "conv-0-turn-2"): "uh",
        ("a", "zh-CN", "conv-0-turn-0"): "你好",
        ("b", "en-US", "conv-0-turn-0"): "hi i want c n 7",
        ("b", "en-US", "conv-0-turn-2"): "",
    }
    for (system, locale, uid), text in files.items():
        path = root / "submissions" / "raw" / system / locale / f"{uid}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    latency = {"measurements": {"en-US/conv-0-turn-0": {"roundTripMs": 791.4}}}
    (root / "submissions/raw/a/latency.json").write_text(json.dumps(latency))
    (root / "submissions/raw/a/metadata.yaml").write_text("model: Alpha-1\nversion: '2026-04-14'\n")
    audio = root / "audio" / "en-US" / "conv-0-turn-1.wav"
    audio.parent.mkdir(parents=True)
    audio.write_bytes(b"RIFF")
    return root


def test_tiny_checkout(tmp_path):
    root = tiny_root(tmp_path / "mubench")
    table = import_table("mubench", [root])
    rows = {(r["dataset"], r["utt_id"], r["system"]): r for r in table.to_dict(orient="records")}
    # a: 4 files, b: 2 files (turn-1 missing: not run, so no row)
    assert sorted(rows) == [
        ("mubench-en-US", "conv-0-turn-0", "a"),
        ("mubench-en-US", "conv-0-turn-0", "b"),
        ("mubench-en-US", "conv-0-turn-1", "a"),
        ("mubench-en-US", "conv-0-turn-2", "a"),
        ("mubench-en-US", "conv-0-turn-2", "b"),
        ("mubench-zh-CN", "conv-0-turn-0", "a"),
    ]
    first = rows["mubench-en-US", "conv-0-turn-0", "a"]
    assert first["hypothesis"] == "Hi, I want CN7."  # white space collapsed, text as written
    assert first["reference"] == "Hi. I want C N 7."
    assert (first["locale"], first["language"], first["speaker"], first["turn_index"]) == (
        "en-US",
        "en",
        "conv-0",
        0,
    )
    assert first["duration"] == 3.25
    assert first["latency_ms"] == 791.4
    assert first["system_version"] == "Alpha-1 2026-04-14"
    assert rows["mubench-en-US", "conv-0-turn-1", "a"]["hypothesis"] == "Ashley Brown"
    # an empty file is an empty hypothesis; a blank transcript an unlabelled utterance
    assert rows["mubench-en-US", "conv-0-turn-2", "b"]["hypothesis"] == ""
    assert pd.isna(rows["mubench-en-US", "conv-0-turn-2", "b"]["reference"])
    # no latency.json / metadata.yaml for b, no measurement for a's other turns
    assert pd.isna(rows["mubench-en-US", "conv-0-turn-0", "b"]["latency_ms"])
    assert pd.isna(rows["mubench-en-US", "conv-0-turn-0", "b"]["system_version"])
    assert pd.isna(rows["mubench-en-US", "conv-0-turn-1", "a"]["latency_ms"])
    # audio only where the file exists
    assert rows["mubench-en-US", "conv-0-turn-1", "a"]["audio"] == str(
        (root / "audio/en-US/conv-0-turn-1.wav").resolve()
    )
    assert pd.isna(first["audio"])
    zh = rows["mubench-zh-CN", "conv-0-turn-0", "a"]
    assert (zh["language"], zh["reference"], zh["hypothesis"]) == ("zh", "你好。", "你好")


def test_submission_for_an_unknown_utterance_names_the_file(tmp_path):
    root = tiny_root(tmp_path / "mubench")
    stray = root / "submissions/raw/a/en-US/conv-9-turn-0.txt"
    stray.write_text("x")
    with pytest.raises(InputError, match=r"conv-9-turn-0\.txt: no utterance en-US/conv-9-turn-0"):
        import_table("mubench", [root])


def test_bad_manifest_values_name_row_and_column(tmp_path):
    root = tiny_root(tmp_path / "mubench")
    manifest = json.loads((root / "manifest.json").read_text("utf-8"))
    manifest["utterances"][1]["duration_sec"] = "long"
    (root / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(InputError, match=r"manifest.json, row 2, column 'duration_sec'"):
        import_table("mubench", [root])
    manifest["utterances"][1]["duration_sec"] = 1.0
    manifest["utterances"][2]["transcript"] = None
    (root / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(InputError, match=r"row 3, column 'transcript'"):
        import_table("mubench", [root])
    (root / "manifest.json").write_text("{not json")
    with pytest.raises(InputError, match="not valid JSON"):
        import_table("mubench", [root])


def test_missing_manifest(tmp_path):
    with pytest.raises(InputError, match=r"manifest\.json: no such file"):
        import_table("mubench", [tmp_path])


# --------------------------------------------------------------------------- shared data


@pytest.fixture(scope="module")
def mubench_table() -> pd.DataFrame:
    return import_table("mubench", [shared_path("mubench")])


@pytest.fixture(scope="module")
def raw() -> dict:
    root = shared_path("mubench")
    manifest = json.loads((root / "manifest.json").read_text("utf-8"))
    submissions = {}
    for path in sorted((root / "submissions" / "raw").glob("*/*/*.txt")):
        system, locale = path.parent.parent.name, path.parent.name
        submissions[f"mubench-{locale}", path.stem, system] = path.read_text("utf-8")
    latency = {}
    for path in (root / "submissions" / "raw").glob("*/latency.json"):
        for key, value in json.loads(path.read_text("utf-8"))["measurements"].items():
            locale, uid = key.split("/", 1)
            latency[f"mubench-{locale}", uid, path.parent.name] = value["roundTripMs"]
    return {"manifest": manifest, "submissions": submissions, "latency": latency}


@pytest.mark.shared
def test_shared_rows_are_the_submission_files(mubench_table, raw):
    keys = list(
        zip(mubench_table["dataset"], mubench_table["utt_id"], mubench_table["system"], strict=True)
    )
    assert sorted(keys) == sorted(raw["submissions"])
    # 6 systems on all 4270 turns + modulate-vfast (817 en-US) + modulate-vfast-zh-cn (840
    # zh-CN) + smallest-pulse-batch (817 en-US) = 25620 + 2474 = 28094
    assert len(mubench_table) == 28094
    per = mubench_table.groupby("system")["dataset"].unique().map(sorted).to_dict()
    assert per["modulate-vfast"] == ["mubench-en-US"]
    assert per["smallest-pulse-batch"] == ["mubench-en-US"]
    assert per["modulate-vfast-zh-cn"] == ["mubench-zh-CN"]
    assert sorted(mubench_table["dataset"].unique()) == [
        f"mubench-{loc}" for loc in ("en-US", "es-MX", "tr-TR", "vi-VN", "zh-CN")
    ]


def keyed(table: pd.DataFrame, column: str) -> dict[tuple[str, str, str], object]:
    """{(dataset, utt_id, system): value of ``column``}."""
    return {(d, u, s): v for d, u, s, v in table[[*KEY, column]].itertuples(index=False, name=None)}


@pytest.mark.shared
def test_shared_hypotheses_references_and_empties(mubench_table, raw):
    hyp = keyed(mubench_table, "hypothesis")
    assert hyp == {k: " ".join(v.split()) for k, v in raw["submissions"].items()}
    empty_raw = Counter(k[2] for k, v in raw["submissions"].items() if not v.strip())
    empty = Counter(mubench_table.loc[mubench_table["hypothesis"] == "", "system"])
    assert empty == empty_raw and empty["deepgram-nova3"] == 353  # find -empty | wc -l
    refs = {
        (f"mubench-{u['locale']}", u["id"]): u["transcript"].strip() or None
        for u in raw["manifest"]["utterances"]
    }
    table_refs = mubench_table.drop_duplicates(["dataset", "utt_id"])
    got = {
        (d, u): (None if pd.isna(r) else r)
        for d, u, r in table_refs[["dataset", "utt_id", "reference"]].itertuples(index=False)
    }
    assert got == refs
    # blank references in the manifest (the data README says 31; this copy has none)
    blank = sum(1 for v in refs.values() if v is None)
    assert mubench_table.drop_duplicates(["dataset", "utt_id"])["reference"].isna().sum() == blank


@pytest.mark.shared
def test_shared_metadata_and_latency(mubench_table, raw):
    lat = keyed(mubench_table, "latency_ms")
    assert lat == raw["latency"]
    languages = dict(zip(mubench_table["dataset"], mubench_table["language"], strict=False))
    assert languages == {
        "mubench-en-US": "en",
        "mubench-es-MX": "es",
        "mubench-tr-TR": "tr",
        "mubench-vi-VN": "vi",
        "mubench-zh-CN": "zh",
    }
    first = raw["manifest"]["utterances"][0]
    row = mubench_table[
        (mubench_table["dataset"] == f"mubench-{first['locale']}")
        & (mubench_table["utt_id"] == first["id"])
    ].iloc[0]
    assert (row["speaker"], row["turn_index"], row["duration"]) == (
        first["conversation_id"],
        first["turn_index"],
        first["duration_sec"],
    )
    assert mubench_table["audio"].isna().all()  # audio gated upstream: none in the checkout
    assert mubench_table["system_version"].notna().all()
