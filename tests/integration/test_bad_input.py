"""Bad input for every command, the way users break things (issue 6).

Each case runs the real CLI entry point (``werest.cli.main.main``, in-process for speed; the
subprocess tests at the end kill real runs) and checks the contract: exit status 2, exactly
one line on stderr, ``werest <command>: error: ...`` naming the file (and row/column where
there is one), no traceback, and no output file left behind. Per-row problems (bad audio, a
missing feature value) are statuses and the run goes on, unless every row fails.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import soundfile as sf

from tests.conftest import REPO, shared_path
from tests.helpers import SMALL, WEREST, assert_one_line_error, run_cli
from werest.cli.main import _quote
from werest.demo import demo_table_path
from werest.features.proxy import rank_on
from werest.ingest.table import read_table, write_table
from werest.io import shipped
from werest.model.files import save_model
from werest.model.regressor import StackedWerRegressor
from werest.model.training import fit_model, training_frame
from werest.text import Normaliser

pytestmark = [pytest.mark.shared, pytest.mark.sonar]

COMMANDS = ["import", "train", "evaluate", "estimate", "transcribe", "embed"]


def files_under(folder: Path) -> set[Path]:
    return {p.relative_to(folder) for p in folder.rglob("*")}


# --------------------------------------------------------------------------- test doubles


class HashEmbedder:
    """A deterministic, torch-free :class:`werest.features.embedder.Embedder`: vectors
    seeded by content hashes; ``delay`` seconds per speech call (to kill a run mid-way).
    Built by ``embedder._target_=tests.integration.test_bad_input.HashEmbedder`` (SONAR keys
    ignored)."""

    def __init__(self, dim: int = 8, delay: float = 0.0, batch_size: int = 8, **_: object):
        self.dim, self.delay, self.batch_size = dim, float(delay), batch_size

    def _vector(self, data: bytes) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(data).digest()[:8], "little")
        return np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)

    def cache_name(self, modality: str, lang: str) -> str:
        return f"hash{self.dim}:{modality}:{lang}"

    def embed_speech(self, audio, lang):
        time.sleep(self.delay)
        return np.stack([self._vector(np.asarray(a, np.float32).tobytes()) for a in audio])

    def embed_text(self, texts, lang):
        return np.stack([self._vector(t.encode()) for t in texts])


class SlowPocketSphinx:
    """Real PocketSphinx (bundled en-us model) that sleeps ``delay`` s per clip."""

    batch_size = 1

    def __init__(self, delay: float = 0.0, **settings) -> None:
        from werest.ingest.asr.pocketsphinx_asr import PocketSphinxTranscriber

        self.inner = PocketSphinxTranscriber(**settings)
        self.name = self.inner.name
        self.delay = float(delay)

    def transcribe(self, audio):
        time.sleep(self.delay * len(audio))
        return self.inner.transcribe(audio)


EMBEDDER = ["embedder._target_=tests.integration.test_bad_input.HashEmbedder"]


# --------------------------------------------------------------------------- inputs


def tone(path: Path, seconds: float = 1.0, rate: int = 16000, amplitude: float = 0.5) -> Path:
    """A chirp (varied enough for a recogniser to say something or nothing, deterministically)."""
    t = np.arange(int(seconds * rate)) / rate
    samples = amplitude * np.sin(2 * np.pi * (300 + 400 * t) * t)
    sf.write(path, samples.astype(np.float32), rate)
    return path


def audio_cases(folder: Path) -> dict[str, Path]:
    """{status: audio file} for every kind of bad audio (plus a good 16 kHz and 8 kHz clip)."""
    folder.mkdir(parents=True, exist_ok=True)
    good = tone(folder / "good.wav")
    tone(folder / "tel8k.wav", rate=8000)
    truncated = folder / "truncated.wav"
    truncated.write_bytes(good.read_bytes()[: len(good.read_bytes()) // 2])
    sf.write(folder / "silent.wav", np.zeros(16000, np.float32), 16000)
    (folder / "noise.wav").write_bytes(random.Random(1).randbytes(3000))
    return {
        "ok": good,
        "ok-8k": folder / "tel8k.wav",
        "truncated": truncated,
        "silent": folder / "silent.wav",
        "unreadable": folder / "noise.wav",
        "missing": folder / "gone.wav",
    }


def audio_tables(folder: Path, cases: dict[str, Path]) -> tuple[Path, Path]:
    """An utterance table (one utterance per case) and its transcripts table (2 systems)."""
    utterances = pd.DataFrame(
        {"dataset": "clips", "utt_id": list(cases), "audio": [str(p) for p in cases.values()]}
    )
    utterance_path = folder / "utterances.csv"
    write_table(utterances.assign(language="en"), utterance_path)
    rows = [
        utterances.assign(system=system, hypothesis=text, language="en")
        for system, text in (("a", "hello there"), ("b", "hello where"))
    ]
    transcripts = folder / "transcripts.csv"
    write_table(pd.concat(rows, ignore_index=True), transcripts)
    return utterance_path, transcripts


FEATURES = "dataset,utt_id,system,proxy,pwer\ncalls,u1,alpha,beta,0.5\ncalls,u2,alpha,beta,0\n"


def bad_tables(folder: Path, kind: str) -> dict[str, tuple[Path, list[str]]]:
    """{case: (file, fragments of the error)}; ``kind`` is the schema the command reads:
    ``transcripts``, ``utterances`` (transcribe: dataset, utt_id, audio) or ``features``."""
    header = {
        "transcripts": "dataset,utt_id,system,hypothesis,reference",
        "utterances": "dataset,utt_id,audio",
        "features": "dataset,utt_id,system,proxy,pwer",
    }[kind]
    row = {
        "transcripts": ["d,u1,s,hello,hello", "d,u1,t,hallo,hello"],
        "utterances": ["d,u1,a.wav", "d,u2,b.wav"],
        "features": ["d,u1,s,t,0.5", "d,u2,s,t,0.1"],
    }[kind]
    dropped = {"transcripts": "hypothesis", "utterances": "utt_id", "features": "system"}[kind]
    columns = header.split(",")
    keep = [i for i, c in enumerate(columns) if c != dropped]

    def without(line: str) -> str:
        return ",".join(line.split(",")[i] for i in keep)

    noise = b"\xff" + random.Random(0).randbytes(511)
    texts: dict[str, tuple[str, bytes, list[str]]] = {
        "empty file": ("empty.csv", b"", ["empty"]),
        "random bytes": ("noise.csv", noise, ["UTF-8"]),
        "semicolons": (
            "semi.csv",
            "\n".join([header, *row]).replace(",", ";").encode() + b"\n",
            ["';'-separated"],
        ),
        "missing column": (
            "nocol.csv",
            "\n".join([without(header), *map(without, row)]).encode() + b"\n",
            [f"column {dropped!r}"],
        ),
        "duplicate key": (
            "dup.csv",
            "\n".join([header, row[0], row[1], row[0]]).encode() + b"\n",
            ["row 3", "duplicate"],
        ),
        "non-UTF-8": (
            "latin1.csv",
            "\n".join([header, *row]).encode() + b"\nd,caf\xe9,s,x,x\n",
            ["line 4", "UTF-8"],
        ),
        "UTF-16": (  # a spreadsheet's "Unicode text" export: a byte-order mark, then UTF-16
            "utf16.csv",
            ("\n".join([header, *row]) + "\n").encode("utf-16"),
            ["UTF-16 file", "iconv -f utf-16 -t utf-8"],
        ),
    }
    written = {"missing file": (folder / "nowhere.csv", ["no such file"])}
    for case, (name, data, fragments) in texts.items():
        path = folder / name
        path.write_bytes(data)
        written[case] = (path, [name, *fragments])
    return written


TABLE_CASES = [
    "missing file",
    "empty file",
    "random bytes",
    "semicolons",
    "missing column",
    "duplicate key",
    "non-UTF-8",
    "UTF-16",
]


def command_args(command: str, path: Path, tmp_path: Path) -> tuple[list[str], Path]:
    """The arguments that feed ``path`` to ``command`` as its input, and its output path."""
    out = tmp_path / "out"
    quoted = _quote(str(path))
    transcripts = tmp_path / "good.csv"
    transcripts.write_text(SMALL, encoding="utf-8")
    args = {
        "train": ["data=table", f"data.sources.0.table={quoted}", "model=ridge"],
        "evaluate": [f"data.sources=[{{table:{quoted}}}]", "model=ridge", "ablation=null"],
        "estimate": [f"input={quoted}"],
        "transcribe": [f"input={quoted}", f"out={_quote(str(out / 't.csv'))}"],
        "embed": [f"input={quoted}", f"transcripts={transcripts}", f"out={out / 'f.csv'}"],
    }[command]
    if command in ("train", "evaluate", "estimate"):
        args.append(f"output_dir={out}")
    return args, out


# --------------------------------------------------------------------------- 1. tables


@pytest.mark.parametrize("case", TABLE_CASES)
@pytest.mark.parametrize("command", ["train", "evaluate", "estimate", "transcribe", "embed"])
def test_bad_table(tmp_path, monkeypatch, capsys, command, case):
    monkeypatch.chdir(tmp_path)
    kind = {"transcribe": "utterances", "embed": "features"}.get(command, "transcripts")
    (tmp_path / "in").mkdir()
    path, fragments = bad_tables(tmp_path / "in", kind)[case]
    args, out = command_args(command, path, tmp_path)
    status, _, err = run_cli(capsys, command, *args)
    assert_one_line_error(status, err, command, *fragments)
    assert not out.exists()


def test_bad_transcripts_for_embed(tmp_path, monkeypatch, capsys):
    """embed reads two tables: a bad second one is named too."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "f.csv").write_text(FEATURES, encoding="utf-8")
    path, fragments = bad_tables(tmp_path, "transcripts")["duplicate key"]
    status, _, err = run_cli(
        capsys, "embed", "input=f.csv", f"transcripts={path}", "out=o.csv", *EMBEDDER
    )
    assert_one_line_error(status, err, "embed", *fragments)
    assert not (tmp_path / "o.csv").exists()


IMPORT_CASES = {
    # case: (layout files {relative path: bytes}, import args, fragments)
    "missing folder": ({}, ["dighr", "nowhere"], ["nowhere", "no such file or folder"]),
    "empty file": ({"sysA.txt": b""}, ["kaldi", "sysA.txt"], ["sysA.txt", "empty"]),
    "random bytes": (
        {"190101/google.csv": b"\xff" + random.Random(2).randbytes(300)},
        ["dighr", "."],
        ["google.csv", "UTF-8"],
    ),
    "UTF-16 text": (
        {"sysA.trn": "hello (u1)\n".encode("utf-16-le")},
        ["sclite", "sysA.trn"],
        ["sysA.trn", "NUL byte", "UTF-16"],
    ),
    "semicolons": (
        {"190101/google.csv": b"files;actual;transcription_en-US\n/a/u1.wav;hi;hi\n"},
        ["dighr", "."],
        ["google.csv", "';'-separated"],
    ),
    "missing column": (
        {"190101/google.csv": b"actual,transcription_en-US\nhi,hi\n"},
        ["dighr", "."],
        ["google.csv", "files"],
    ),
    "duplicate utterance": (
        {"sysA.txt": b"u1 hi\nu2 yo\nu1 again\n"},
        ["kaldi", "sysA.txt"],
        ["sysA.txt", "row 3", "'u1'"],
    ),
    "non-UTF-8": (
        {"ground.txt": b"0.mp3|hello\n1.mp3|caf\xe9\n", "whisper.txt": b"0.mp3|hello\n"},
        ["thennal10", "."],
        ["ground.txt", "line 2", "UTF-8"],
    ),
}


@pytest.mark.parametrize("case", list(IMPORT_CASES))
def test_bad_import_source(tmp_path, monkeypatch, capsys, case):
    monkeypatch.chdir(tmp_path)
    files, args, fragments = IMPORT_CASES[case]
    for name, data in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    before = files_under(tmp_path)
    status, _, err = run_cli(capsys, "import", *args, "--out", "t.parquet")
    assert_one_line_error(status, err, "import", *fragments)
    assert files_under(tmp_path) == before


# --------------------------------------------------------------------------- 1. systems


@pytest.mark.parametrize(
    ("overrides", "fragments"),
    [
        (["target=gamma"], ["target system 'gamma'", "alpha, beta"]),
        (["target=[]"], ["target=[]"]),
        (["proxy=gamma"], ["proxy system 'gamma'"]),
        (["target=alpha", "proxy=alpha"], ["proxy 'alpha' is also the target"]),
    ],
)
def test_estimate_unknown_or_equal_systems(tmp_path, monkeypatch, capsys, overrides, fragments):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.csv").write_text(SMALL, encoding="utf-8")
    status, _, err = run_cli(capsys, "estimate", "input=t.csv", "output_dir=out", *overrides)
    assert_one_line_error(status, err, "estimate", *fragments)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("command", "partitioned"),
    [
        ("estimate", []),
        ("estimate", ["partition.rows=2", "partition.per_process=0"]),
        ("leaderboard", []),
    ],
)
def test_a_normaliser_other_than_the_models_is_refused(
    tmp_path, monkeypatch, capsys, command, partitioned
):
    """The name is built into a Normaliser at the command and checked against the model's
    (``auto``): ``none`` would give features the model never saw."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.csv").write_text(SMALL, encoding="utf-8")
    args = ["input=t.csv", "output_dir=out", "normaliser=none", *partitioned]
    status, _, err = run_cli(capsys, command, *args)
    assert_one_line_error(status, err, command, "normaliser=none differs from the model's (auto)")
    assert not (tmp_path / "out" / "summary.json").exists()


def test_estimate_without_any_proxy_hypothesis(tmp_path, monkeypatch, capsys):
    """Two systems that never transcribed the same utterance: nothing can be estimated."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.csv").write_text(
        "dataset,utt_id,system,hypothesis\nd,u1,a,hello\nd,u2,b,good morning\n", encoding="utf-8"
    )
    status, _, err = run_cli(capsys, "estimate", "input=t.csv", "output_dir=out", "proxy=b")
    assert_one_line_error(status, err, "estimate", "t.csv", "no target utterance has a proxy")
    assert not (tmp_path / "out").exists()


def test_estimate_with_one_system(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.csv").write_text(
        "dataset,utt_id,system,hypothesis\nd,u1,a,hello\n", encoding="utf-8"
    )
    status, _, err = run_cli(capsys, "estimate", "input=t.csv", "output_dir=out")
    assert_one_line_error(status, err, "estimate", "one system")


@pytest.mark.parametrize(
    ("overrides", "fragments"),
    [
        (["cases.source_system=nobody"], ["unknown system 'nobody'"]),
        (["cases.target_systems=[gamma]"], ["unknown system 'gamma'"]),
        (["cases.target_systems=[alpha]"], ["'alpha' is also in target_systems"]),
    ],
)
def test_evaluate_unknown_or_equal_systems(tmp_path, monkeypatch, capsys, overrides, fragments):
    monkeypatch.chdir(tmp_path)
    two_datasets = SMALL + "".join(SMALL.splitlines(keepends=True)[1:]).replace("calls", "b2")
    (tmp_path / "t.csv").write_text(two_datasets.replace("calls", "b1"), encoding="utf-8")
    args = [
        "data.sources=[{table:t.csv}]",
        "cases.benchmark_datasets=[b1,b2]",
        "cases.wild_datasets=[]",
        "cases.source_system=alpha",
        "cases.target_systems=[beta]",
        "output_dir=out",
    ]
    status, _, err = run_cli(capsys, "evaluate", *args, *overrides)
    assert_one_line_error(status, err, "evaluate", *fragments)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("command", "overrides", "fragment"),
    [
        (
            "evaluate",
            ["experiment=lodo", "lodo.level=1.5"],
            "lodo.level must be a number in (0, 1)",
        ),
        # the bound is the library's (ConformalInterval.offset), checked before any work
        ("evaluate", ["experiment=lodo", "lodo.offset=0"], "lodo.offset must be a number > 0"),
        ("evaluate", ["experiment=lodo", "lodo._target_=no.Such"], "lodo: cannot build no.Such"),
        ("evaluate", ["cases.benchmark_datasets=[b1]"], "two or more datasets"),
        ("evaluate", ["cases.target_systems=[google]"], "also in target_systems"),
        ("evaluate", ["experiment=lodo", "protocol=four_cases"], "no 'cases' settings"),
        (
            "train",
            ["calibration=c.csv", "interval.level=2"],
            "interval.level must be a number in (0, 1)",
        ),
    ],
)
def test_blocks_built_from_config_fail_before_the_data(
    tmp_path, monkeypatch, capsys, command, overrides, fragment
):
    """The ``cases``, ``lodo`` and ``interval`` blocks are built (and checked) before any data
    are read: one line naming the block, nothing written."""
    monkeypatch.chdir(tmp_path)
    status, _, err = run_cli(capsys, command, "output_dir=o", *overrides)
    assert_one_line_error(status, err, command, fragment)
    assert files_under(tmp_path) == set()


def test_train_on_a_table_without_a_proxy_hypothesis(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.csv").write_text(
        "dataset,utt_id,system,hypothesis,reference\nd,u1,a,hi,hi\nd,u2,b,yo,yo\n",
        encoding="utf-8",
    )
    status, _, err = run_cli(
        capsys, "train", "data=table", "data.sources.0.table=t.csv", "output_dir=m", "model=ridge"
    )
    assert_one_line_error(status, err, "train", "no training rows")
    assert not (tmp_path / "m").exists()


# --------------------------------------------------------------------------- 1. features


@pytest.fixture(scope="module")
def similarity_model(tmp_path_factory) -> Path:
    """A tiny model that needs the input's ``similarity`` column (as features=paper does)."""
    demo = read_table(demo_table_path())
    ranking = rank_on(demo, Normaliser("whisper_english"))
    frame = training_frame(demo, ranking, normaliser=Normaliser("whisper_english"))
    frame["similarity"] = np.linspace(0.2, 0.9, len(frame))
    estimator = StackedWerRegressor(
        models=["hgb"], param_grids={"hgb": {"max_iter": [20]}}, n_splits=2
    )
    model = fit_model(frame, ["pwer", "pcer", "similarity"], estimator, ranking=ranking)
    return save_model(model, tmp_path_factory.mktemp("model") / "sim.skops")


def with_similarity(folder: Path, values: list[str]) -> Path:
    demo = read_table(demo_table_path())
    demo["similarity"] = [values[i % len(values)] for i in range(len(demo))]
    path = folder / "with_similarity.csv"
    write_table(demo, path)
    return path


def test_non_finite_feature_values_are_per_row_statuses(
    tmp_path, monkeypatch, capsys, similarity_model
):
    """inf and -inf in a feature: those rows get status 'missing feature value' and no
    prediction; blank and nan are missing values the model imputes (as it does for features
    that need a third system), so those rows are estimated like the rest."""
    monkeypatch.chdir(tmp_path)
    path = with_similarity(tmp_path, ["0.5", "inf", "", "nan", "-inf", "0.7", "0.61"])
    status, _, err = run_cli(
        capsys, "estimate", f"input={path}", f"model_path={similarity_model}", "output_dir=out"
    )
    assert status == 0, err
    rows = pd.read_csv(tmp_path / "out" / "utterances.csv")
    similarity = rows["similarity"].astype(float)
    bad = np.isinf(similarity)
    assert bad.any() and similarity.isna().any() and np.isfinite(similarity).any()
    assert set(rows.loc[bad, "status"]) == {"missing feature value"}
    assert rows.loc[bad, "predicted_wer"].isna().all()
    assert set(rows.loc[~bad, "status"]) == {"ok"}
    assert rows.loc[~bad, "predicted_wer"].notna().all()


def test_text_in_a_feature_column_names_row_and_column(
    tmp_path, monkeypatch, capsys, similarity_model
):
    monkeypatch.chdir(tmp_path)
    path = with_similarity(tmp_path, ["0.5", "0.4", "high"])
    status, _, err = run_cli(
        capsys, "estimate", f"input={path}", f"model_path={similarity_model}", "output_dir=out"
    )
    assert_one_line_error(status, err, "estimate", path.name, "row 3", "'similarity'", "'high'")
    assert not (tmp_path / "out").exists()


def test_every_feature_value_missing_is_an_error(tmp_path, monkeypatch, capsys, similarity_model):
    monkeypatch.chdir(tmp_path)
    path = with_similarity(tmp_path, ["inf", "-inf"])
    status, _, err = run_cli(
        capsys, "estimate", f"input={path}", f"model_path={similarity_model}", "output_dir=out"
    )
    assert_one_line_error(status, err, "estimate", "could be estimated", "missing feature value")
    assert not (tmp_path / "out").exists()


def test_embed_passes_non_finite_features_through_and_refuses_text(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _, transcripts = audio_tables(tmp_path, audio_cases(tmp_path / "clips"))
    table = read_table(transcripts)
    features = table[["dataset", "utt_id", "system"]].assign(proxy="b", pwer="inf")
    features.loc[1, "pwer"] = "nan"
    write_table(features, tmp_path / "f.csv")
    args = ["input=f.csv", f"transcripts={transcripts}", "cache_dir=null", *EMBEDDER]
    status, _, err = run_cli(capsys, "embed", *args, "out=o.parquet")
    assert status == 0, err
    written = pd.read_parquet(tmp_path / "o.parquet")
    assert written["pwer"].dtype == float and np.isinf(written.loc[0, "pwer"])  # as given
    features.loc[2, "pwer"] = "n/a?"
    write_table(features, tmp_path / "f.csv")
    status, _, err = run_cli(capsys, "embed", *args, "out=o2.parquet")
    assert_one_line_error(status, err, "embed", "f.csv", "row 3", "'pwer'")
    assert not (tmp_path / "o2.parquet").exists()


# --------------------------------------------------------------------------- 1. audio


def test_transcribe_bad_audio_gets_statuses_and_the_batch_goes_on(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    cases = audio_cases(tmp_path / "clips")
    utterances, _ = audio_tables(tmp_path, cases)
    status, out, err = run_cli(capsys, "transcribe", f"input={utterances}", "out=t.csv")
    assert status == 0, err
    table = read_table(tmp_path / "t.csv")
    assert set(table["utt_id"]) == {"ok", "ok-8k"}  # 8 kHz is resampled, not refused
    failed = pd.read_csv(tmp_path / "t.csv.failed.csv").set_index("utt_id")["asr_status"]
    assert failed.to_dict() == {
        "truncated": "truncated",
        "silent": "silent",
        "unreadable": "unreadable",
        "missing": "missing",
    }
    assert "4 failed" in out


def test_transcribe_when_every_clip_fails(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    cases = audio_cases(tmp_path / "clips")
    for good in ("ok", "ok-8k"):
        cases.pop(good)
    utterances, _ = audio_tables(tmp_path, cases)
    status, _, err = run_cli(capsys, "transcribe", f"input={utterances}", "out=t.csv")
    line = assert_one_line_error(status, err, "transcribe", "utterances.csv", "all 4 failed")
    assert "truncated: 1" in line and "missing: 1" in line
    assert not list(tmp_path.glob("t.csv*"))


def test_embed_bad_audio_gets_statuses_and_every_row_failing_is_an_error(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    cases = audio_cases(tmp_path / "clips")
    _, transcripts = audio_tables(tmp_path, cases)
    features = read_table(transcripts)[["dataset", "utt_id", "system"]]
    write_table(features, tmp_path / "f.csv")
    args = ["input=f.csv", f"transcripts={transcripts}", "cache_dir=cache", *EMBEDDER]
    status, _, err = run_cli(capsys, "embed", *args, "out=o.csv")
    assert status == 0, err
    statuses = read_table(tmp_path / "o.csv", required=("dataset",)).set_index("utt_id")
    statuses = statuses.groupby(level=0)["similarity_status"].first().to_dict()
    assert statuses == {
        "ok": "ok",
        "ok-8k": "ok",
        "truncated": "truncated",
        "silent": "silent",
        "unreadable": "unreadable",
        "missing": "missing",
    }
    bad = features[~features["utt_id"].isin(["ok", "ok-8k"])]
    write_table(bad, tmp_path / "bad.csv")
    status, _, err = run_cli(capsys, "embed", *args[1:], "input=bad.csv", "out=o2.csv")
    assert_one_line_error(status, err, "embed", "bad.csv", "no row got a similarity")
    assert not (tmp_path / "o2.csv").exists()


# --------------------------------------------------------------------------- 1. overrides


WRONG_TYPES = ["n_jobs=abc", "chunk_utterances=1.5", "bootstrap.n_resamples=x", "seed=[1]"]


def minimal_args(command: str) -> list[str]:
    """Just enough settings for each command to compose (nothing runs: the type check is
    first)."""
    return {
        "import": ["kaldi", "sysA.txt", "--out", "x.csv"],
        "train": ["output_dir=m"],
        "evaluate": ["output_dir=e"],
        "estimate": ["input=t.csv", "output_dir=o"],
        "transcribe": ["input=t.csv", "out=o.csv"],
        "embed": ["input=t.csv", "transcripts=t.csv"],
    }[command]


@pytest.mark.parametrize("override", WRONG_TYPES)
@pytest.mark.parametrize("command", COMMANDS)
def test_override_of_the_wrong_type(tmp_path, monkeypatch, capsys, command, override):
    """Each key is named: a wrong type, or (for a command without it) 'no such setting'."""
    monkeypatch.chdir(tmp_path)
    status, _, err = run_cli(capsys, command, *minimal_args(command), override)
    key = override.split("=")[0]
    assert_one_line_error(status, err, command, key)
    assert files_under(tmp_path) == set()


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        ("trust_model='false'", "trust_model must be true or false"),  # not truthy text
        ("n_jobs=0", "other than 0"),
        ("chunk_utterances=0", ">= 1"),
        ("log_level=loud", "log_level must be one of"),
        ("target={a:1}", "target must be a list of names"),
    ],
)
def test_estimate_setting_values(tmp_path, monkeypatch, capsys, override, fragment):
    monkeypatch.chdir(tmp_path)
    status, _, err = run_cli(capsys, "estimate", "input=t.csv", "output_dir=o", override)
    assert_one_line_error(status, err, "estimate", fragment)


def test_numbers_as_text_are_coerced(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.csv").write_text(SMALL, encoding="utf-8")
    status, _, err = run_cli(
        capsys, "score", "input=t.csv", "output_dir=o", "n_jobs='1'", "bootstrap.n_resamples=10.0"
    )
    assert status == 0, err
    assert "n_jobs: 1\n" in (tmp_path / "o" / "config.yaml").read_text()


# --------------------------------------------------------------------------- 3. model files


@pytest.fixture
def model_copy(tmp_path) -> Path:
    for suffix in (".skops", ".json"):
        shutil.copy(shipped("models") / f"default{suffix}", tmp_path / f"m{suffix}")
    (tmp_path / "t.csv").write_text(SMALL, encoding="utf-8")
    return tmp_path / "m.skops"


def test_truncated_model_is_refused_by_its_hash(model_copy, monkeypatch, capsys):
    monkeypatch.chdir(model_copy.parent)
    model_copy.write_bytes(model_copy.read_bytes()[:5000])
    args = ["estimate", "input=t.csv", f"model_path={model_copy}", "output_dir=o"]
    status, _, err = run_cli(capsys, *args)
    assert_one_line_error(status, err, "estimate", "m.skops", "sha256", "refusing to load")
    # trusted anyway: the damaged archive cannot be read, still one line
    status, _, err = run_cli(capsys, *args, "trust_model=true")
    assert_one_line_error(status, err, "estimate", "m.skops", "cannot load the model")
    assert not (model_copy.parent / "o").exists()


@pytest.mark.parametrize(
    ("card", "fragment"),
    [
        (None, "no model card"),
        ("{not json", "unreadable model card"),
        ("[1, 2]", "not a JSON object"),
        ('{"sha256": "x", "features": [], "target": "wer", "versions": null}', "'versions'"),
    ],
)
def test_bad_model_cards(model_copy, monkeypatch, capsys, card, fragment):
    monkeypatch.chdir(model_copy.parent)
    card_path = model_copy.with_suffix(".json")
    if card is None:
        card_path.unlink()
    else:
        card_path.write_text(card, encoding="utf-8")
    status, _, err = run_cli(
        capsys, "estimate", "input=t.csv", f"model_path={model_copy}", "output_dir=o"
    )
    assert_one_line_error(status, err, "estimate", fragment)


# --------------------------------------------------------------------------- 2. kill and resume


def subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    return env


def werest_process(*args: object, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [*WEREST, *map(str, args)],
        cwd=cwd,
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def kill_when(process: subprocess.Popen, ready, timeout: float = 120) -> None:
    """SIGKILL ``process`` as soon as ``ready()`` holds (fails if it ends first)."""
    deadline = time.monotonic() + timeout
    while not ready():
        assert process.poll() is None, f"ended before it could be killed: {process.stderr.read()}"
        assert time.monotonic() < deadline, "timed out waiting for the first chunk"
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)


def finish(*args: object, cwd: Path) -> None:
    process = werest_process(*args, cwd=cwd)
    _, err = process.communicate(timeout=300)
    assert process.returncode == 0, err


def test_killed_transcribe_resumes_to_the_uninterrupted_result(tmp_path):
    clips = tmp_path / "clips"
    clips.mkdir()
    for i in range(6):
        tone(clips / f"c{i}.wav", seconds=0.6 + 0.1 * i)
    slow = ["asr._target_=tests.integration.test_bad_input.SlowPocketSphinx", "+asr.delay=0.6"]
    common = [f"input={clips}", "dataset=clips", "chunk_size=2"]
    finish("transcribe", *common, "out=whole.csv", cwd=tmp_path)
    process = werest_process("transcribe", *common, "out=part.csv", *slow, cwd=tmp_path)
    kill_when(process, lambda: (tmp_path / "part.csv").exists())
    kept = read_table(tmp_path / "part.csv")  # a finished chunk, never a half-written file
    assert 0 < len(kept) < 6
    finish("transcribe", *common, "out=part.csv", cwd=tmp_path)
    whole = read_table(tmp_path / "whole.csv").set_index("utt_id")
    resumed = read_table(tmp_path / "part.csv").set_index("utt_id")
    assert sorted(resumed.index) == sorted(whole.index)
    assert resumed["hypothesis"].fillna("").to_dict() == whole["hypothesis"].fillna("").to_dict()
    stale = [p for p in tmp_path.glob(".part.csv.*") if p.stat().st_size]
    assert all(p.name.endswith(".tmp") for p in stale)  # only ever a temp file, never read


def test_killed_embed_resumes_from_its_cache(tmp_path):
    clips = tmp_path / "clips"
    clips.mkdir()
    rows = []
    for i in range(70):  # more than one 64-clip cache shard
        path = tone(clips / f"c{i}.wav", seconds=0.2, amplitude=0.1 + i / 100)
        for system in ("a", "b"):
            rows.append(("d", f"u{i}", system, f"word {i} {system}", str(path), "en"))
    columns = ["dataset", "utt_id", "system", "hypothesis", "audio", "language"]
    write_table(pd.DataFrame(rows, columns=columns), tmp_path / "t.csv")
    write_table(pd.DataFrame(rows, columns=columns)[columns[:3]], tmp_path / "f.csv")
    common = ["input=f.csv", "transcripts=t.csv", *EMBEDDER]
    finish("embed", *common, "cache_dir=fresh", "out=whole.csv", cwd=tmp_path)
    process = werest_process(
        "embed", *common, "cache_dir=cache", "out=part.csv", "+embedder.delay=3", cwd=tmp_path
    )
    kill_when(process, lambda: any((tmp_path / "cache").rglob("shard-*.npz")))
    assert not (tmp_path / "part.csv").exists()
    finish("embed", *common, "cache_dir=cache", "out=part.csv", cwd=tmp_path)
    keys = []
    for shard in (tmp_path / "cache").rglob("shard-*.npz"):
        with np.load(shard) as data:
            keys += data["keys"].tolist()
    assert len(keys) == len(set(keys))  # the resumed run embedded only what was missing
    whole = read_table(tmp_path / "whole.csv", required=("dataset",), numeric=("similarity",))
    resumed = read_table(tmp_path / "part.csv", required=("dataset",), numeric=("similarity",))
    assert whole["similarity"].notna().all()
    np.testing.assert_allclose(resumed["similarity"], whole["similarity"], rtol=1e-6)


# --------------------------------------------------------------------------- 5. shared data


def corruptions(text: bytes) -> dict[str, bytes]:
    """Ways a copy of a real file gets damaged."""
    lines = text.splitlines(keepends=True)
    middle = len(lines) // 2
    noise = random.Random(3).randbytes(80)
    return {
        "truncated": text[: len(text) // 2],
        "random line": b"".join([*lines[:middle], noise + b"\n", *lines[middle:]]),
        "duplicated line": b"".join([*lines[:middle], lines[middle], *lines[middle:]]),
        "emptied": b"",
        "first column removed": b"".join(
            line.split(b",", 1)[-1] if b"," in line else line.split(b"|", 1)[-1] for line in lines
        ),
    }


SHARED_COPIES = {
    # name: (folder to copy below ../shared/data, file to corrupt inside it, import format)
    "dighr-190331": (("dighr", "en", "190331"), "google.csv", "dighr"),
    "thennal10-en": (("thennal10", "transcriptions", "en"), "whisper.txt", "thennal10"),
    "an4-test": (("an4", "etc"), "an4_test.transcription", "sphinx"),
}


@pytest.mark.parametrize("corruption", list(corruptions(b"a\nb\n")))
@pytest.mark.parametrize("dataset", list(SHARED_COPIES))
def test_estimate_on_corrupted_copies_of_the_shared_data(
    tmp_path, monkeypatch, capsys, dataset, corruption
):
    """Import then estimate a damaged copy: success with per-row statuses, or exit 2 with
    one error line (the last on stderr, after any data warnings), never a traceback."""
    parts, name, fmt = SHARED_COPIES[dataset]
    source = shared_path(*parts)
    monkeypatch.chdir(tmp_path)
    copy = tmp_path / "data" / parts[-1]
    if fmt == "sphinx":
        copy.mkdir(parents=True)
        for file in source.glob("an4_test.*"):
            shutil.copy(file, copy / file.name)
    else:
        shutil.copytree(source, copy)
    damaged = copy / name
    damaged.write_bytes(corruptions(damaged.read_bytes())[corruption])
    status, _, err = run_cli(capsys, "import", fmt, copy, "--out", "t.parquet")
    if status == 0:
        status, _, err = run_cli(capsys, "estimate", "input=t.parquet", "output_dir=est")
        command = "estimate"
    else:
        command = "import"
    assert "Traceback" not in err, err
    if status == 0:
        rows = pd.read_csv(tmp_path / "est" / "utterances.csv")
        assert set(rows["status"]) <= {"ok", "no proxy hypothesis", "missing feature value"}
        assert (rows["predicted_wer"].dropna() >= 0).all()
        return
    assert status == 2, err
    lines = err.splitlines()
    errors = [line for line in lines if line.startswith(f"werest {command}: error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], err
    assert all(line.startswith("WARNING ") for line in lines[:-1]), err
    if command == "import":
        assert not (tmp_path / "t.parquet").exists()
    assert not (tmp_path / "est").exists()


def test_a_utf16_table_in_a_partitioned_run(tmp_path, monkeypatch, capsys):
    """The partitioned reader gives the same UTF-16 hint as the in-memory one."""
    monkeypatch.chdir(tmp_path)
    path, fragments = bad_tables(tmp_path, "transcripts")["UTF-16"]
    status, _, err = run_cli(
        capsys, "estimate", f"input={path}", "partition.rows=2", "output_dir=out"
    )
    assert_one_line_error(status, err, "estimate", *fragments)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "how", [[], ["chunk_utterances=1"], ["partition.rows=4", "partition.per_process=0"]]
)
def test_a_proxy_that_did_not_transcribe_a_dataset(tmp_path, monkeypatch, capsys, how):
    """proxy=a where dataset B has no system a: A is estimated, B's row says nothing was
    estimated, with a warning that names the reason and no empty "[, ]" interval; in memory,
    chunk by chunk (a chunk holding only B once raised) and partitioned alike."""
    monkeypatch.chdir(tmp_path)
    rows = ["dataset,utt_id,system,hypothesis"]
    for u in range(3):
        rows += [f"A,u{u},{s},hello world {s}" for s in "abc"]
        rows += [f"B,v{u},{s},good day {s}" for s in "bc"]
    (tmp_path / "p.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    status, out, err = run_cli(
        capsys, "estimate", "input=p.csv", "proxy=a", "target=b", "output_dir=out", *how
    )
    assert status == 0, err
    records = {r["dataset"]: r for r in json.loads((tmp_path / "out" / "summary.json").read_text())}
    assert records["A"]["n_estimated"] == 3 and records["B"]["n_estimated"] == 0
    assert any("nothing estimated" in w for w in records["B"]["warnings"])
    assert "warning: B: b: nothing estimated" in out
    assert "[, ]" not in out


@pytest.mark.parametrize(
    ("command", "extra"),
    [
        ("estimate", []),
        ("estimate", ["partition.rows=2", "partition.per_process=0"]),
        ("leaderboard", []),
    ],
)
def test_text_in_a_similarity_column(tmp_path, monkeypatch, capsys, command, extra):
    """similarity=high is a user's mistake whichever model runs (the default one does not
    use similarity): one line naming the row and the column, exit 2, nothing written."""
    monkeypatch.chdir(tmp_path)
    rows = ["dataset,utt_id,system,hypothesis,similarity"]
    rows += [f"A,u{u},{s},hello world {s},0.8" for u in range(3) for s in "abc"]
    rows[5] = rows[5].replace(",0.8", ",high")
    (tmp_path / "sim.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    status, _, err = run_cli(capsys, command, "input=sim.csv", "output_dir=out", *extra)
    assert_one_line_error(status, err, command, "sim.csv", "row 5", "'similarity'", "'high'")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("how", [[], ["partition.rows=4", "partition.per_process=0"]])
def test_the_true_wer_beside_an_estimate_is_on_the_estimated_utterances(
    tmp_path, monkeypatch, capsys, how
):
    """Utterance u9 was transcribed by b alone (no proxy: not estimated), and b got it all
    wrong. The true WER printed beside b's estimate counts only u0–u2, which b got right:
    0 %, not the 4 errors in 10 words of all its rows."""
    monkeypatch.chdir(tmp_path)
    rows = ["dataset,utt_id,system,hypothesis,reference"]
    for u in range(3):
        rows += [f"A,u{u},{s},hello world,hello world" for s in "abc"]
    rows.append("A,u9,b,x y z w,one two three four")
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    status, _, err = run_cli(capsys, "estimate", "input=t.csv", "target=b", "output_dir=out", *how)
    assert status == 0, err
    (record,) = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert record["n_estimated"] == 3 and record["n_utterances"] == 4
    assert record["wer"] == 0.0 and record["n_labelled"] == 3
