"""The `werest` console command, run for real in subprocesses.

Success paths check what the commands write (tables readable by werest.ingest.table.read_table, the
run's config beside them, scores and rankings worked out by hand). Error paths check the CLI
contract from docs/architecture.md: exit status 2, exactly one line on stderr that starts with
'werest <command>: error:', no traceback, and no output file left behind.
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import REPO, shared_path
from tests.helpers import WEREST
from werest.ingest.table import read_table

pytestmark = [pytest.mark.shared]


def werest(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*WEREST, *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def files_under(folder: Path) -> set[Path]:
    return {p.relative_to(folder) for p in folder.rglob("*")}


def assert_user_error(
    result: subprocess.CompletedProcess[str], command: str | None, *fragments: str
) -> str:
    """Exit 2, one stderr line 'werest <command>: error: ...' holding ``fragments``."""
    prefix = f"werest {command}: error:" if command else "werest: error:"
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got {len(lines)}:\n{result.stderr}"
    assert lines[0].startswith(prefix), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], f"{fragment!r} not in {lines[0]!r}"
    return lines[0]


# A small table whose scores are worked out by hand (whisper_english leaves these words as
# they are): alpha is perfect; beta substitutes one word of u1 and returns nothing for u2.
SMALL_TABLE = (
    "dataset,utt_id,system,hypothesis,reference\n"
    "calls,u1,alpha,hello world,hello world\n"
    "calls,u1,beta,hello word,hello world\n"
    "calls,u2,alpha,good morning,good morning\n"
    "calls,u2,beta,,good morning\n"
)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "small.csv").write_text(SMALL_TABLE, encoding="utf-8")
    return tmp_path


# --------------------------------------------------------------------------- import


def test_import_dighr_writes_a_readable_parquet_table(tmp_path, dighr_table):
    source = shared_path("dighr", "en")
    out = tmp_path / "tmp" / "t.parquet"
    result = werest("import", "dighr", source, "--out", out, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    table = read_table(out)
    for column in ("dataset", "utt_id", "system", "hypothesis", "reference"):
        assert column in table.columns
    pd.testing.assert_frame_equal(table, dighr_table)
    # '' (returned nothing) and null (no reference) survive the round trip, distinct
    assert (table["hypothesis"] == "").any() and table["hypothesis"].notna().all()
    assert table["reference"].isna().sum() == 4  # the 190515 clip with a blank reference
    config = out.with_name("t.parquet.config.yaml")
    assert config.is_file()
    text = config.read_text(encoding="utf-8")
    assert "format: dighr" in text and str(source) in text
    assert "dighr-190515" in result.stdout  # the summary printed for the user
    assert files_under(out.parent) == {Path("t.parquet"), Path("t.parquet.config.yaml")}


def test_import_thennal10_to_jsonl(tmp_path, thennal10_table):
    out = tmp_path / "thennal10.jsonl"
    result = werest("import", "thennal10", shared_path("thennal10"), "--out", out, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    table = read_table(out)
    assert len(table) == 600
    assert sorted(table["language"].unique()) == ["ar", "en", "ml"]
    assert all(Path(p).is_file() for p in table["audio"])
    key = ["dataset", "utt_id", "system"]
    merged = table.merge(thennal10_table, on=key, suffixes=("", "_direct"))
    assert len(merged) == 600
    assert (merged["hypothesis"] == merged["hypothesis_direct"]).all()
    assert (merged["reference"] == merged["reference_direct"]).all()


def test_import_sphinx_to_csv(tmp_path):
    an4 = shared_path("an4")
    out = tmp_path / "an4.csv"
    result = werest("import", "sphinx", an4, "--out", out, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    table = read_table(out, required=("dataset", "utt_id"))
    counts = table.groupby("dataset").size().to_dict()
    # non-blank lines of etc/an4_{test,train}.transcription
    assert counts == {"an4-test": 117, "an4-train": 948}
    assert all(Path(p).is_file() for p in table["audio"])
    assert not table["reference"].str.contains("<s>").any()
    assert out.with_name("an4.csv.config.yaml").is_file()


def test_import_kaldi_with_reference_key_value(tmp_path):
    (tmp_path / "sysA.txt").write_text("u1 hello world\nu2\n", encoding="utf-8")
    (tmp_path / "sysB.txt").write_text("u1 hello word\nu2 good morning\n", encoding="utf-8")
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "ref.txt").write_text(
        "u1 hello world\nu2 good morning\n", encoding="utf-8"
    )
    result = werest(
        "import",
        "kaldi",
        "sysA.txt",
        "sysB.txt",
        "reference=test/ref.txt",
        "--out",
        "x.csv",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    table = read_table(tmp_path / "x.csv").sort_values(["utt_id", "system"])
    assert table[["dataset", "utt_id", "system", "hypothesis", "reference"]].to_dict("records") == [
        {
            "dataset": "test",
            "utt_id": "u1",
            "system": "sysA",
            "hypothesis": "hello world",
            "reference": "hello world",
        },
        {
            "dataset": "test",
            "utt_id": "u1",
            "system": "sysB",
            "hypothesis": "hello word",
            "reference": "hello world",
        },
        {
            "dataset": "test",
            "utt_id": "u2",
            "system": "sysA",
            "hypothesis": "",
            "reference": "good morning",
        },
        {
            "dataset": "test",
            "utt_id": "u2",
            "system": "sysB",
            "hypothesis": "good morning",
            "reference": "good morning",
        },
    ]
    assert (tmp_path / "x.csv.config.yaml").is_file()


def test_import_keeps_odd_characters_in_paths(tmp_path):
    folder = tmp_path / "my data, v2 [it's]"
    folder.mkdir()
    (folder / "sysA.txt").write_text("u1 hi\n", encoding="utf-8")
    result = werest("import", "kaldi", folder / "sysA.txt", "--out", folder / "o.csv", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert read_table(folder / "o.csv")["hypothesis"].tolist() == ["hi"]


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("back\\slash.txt", id="backslash"),
        pytest.param("${oops}.txt", id="dollar-brace"),
    ],
)
def test_import_paths_are_not_rewritten_by_the_override_grammar(tmp_path, name):
    """BUG: cli._quote doubles every backslash (Hydra unescapes only those before a quote or
    the end), so 'back\\slash.txt' becomes 'back\\\\slash.txt': 'no such file'; and it leaves
    '${' alone, so OmegaConf resolves '${oops}' as an interpolation: a traceback."""
    (tmp_path / name).write_text("u1 hi\n", encoding="utf-8")
    result = werest("import", "kaldi", tmp_path / name, "--out", tmp_path / "o.csv", cwd=tmp_path)
    assert "Traceback" not in result.stderr
    assert result.returncode == 0, result.stderr
    assert read_table(tmp_path / "o.csv")["hypothesis"].tolist() == ["hi"]


# --------------------------------------------------------------------------- score / features


def test_score_writes_scores_and_ranking(workdir):
    out = workdir / "out"
    result = werest("score", "input=small.csv", f"output_dir={out}", cwd=workdir)
    assert result.returncode == 0, result.stderr
    scores = pd.read_csv(out / "scores.csv").set_index("system")
    assert scores.loc["alpha", "wer"] == 0.0
    assert scores.loc["beta", "wer"] == pytest.approx(3 / 4)  # 1 substitution + 2 deletions
    # characters: 'hello word' drops one 'l' of 11; '' drops all 12 of 'good morning'
    assert scores.loc["beta", "cer"] == pytest.approx(13 / 23)
    assert scores["n_utterances"].tolist() == [2, 2]
    assert scores["ref_words"].tolist() == [4, 4]
    assert scores.loc["beta", "empty_hypotheses"] == 1
    resources = json.loads((out / "resources.json").read_text(encoding="utf-8"))
    assert resources["rss_mb_peak"] >= resources["rss_mb_mean"] > 0
    assert resources["cpu_seconds"] > 0 and resources["wall_seconds"] > 0
    ranking = json.loads((out / "ranking.json").read_text(encoding="utf-8"))
    assert ranking["systems"] == ["alpha", "beta"]
    assert ranking["macro_wer"] == pytest.approx({"alpha": 0.0, "beta": 0.75})
    assert (out / "config.yaml").is_file()
    assert "75.00" in result.stdout


def test_features_writes_agreement_features(workdir):
    result = werest("features", "input=small.csv", "out=features.csv", cwd=workdir)
    assert result.returncode == 0, result.stderr
    features = pd.read_csv(workdir / "features.csv", keep_default_na=False)
    assert "reference" not in features.columns
    got = {
        (row.utt_id, row.system): (row.proxy, row.pwer) for row in features.itertuples(index=False)
    }
    assert got == {
        ("u1", "alpha"): ("beta", pytest.approx(1 / 2)),  # word vs world, 2 proxy words
        ("u2", "alpha"): ("beta", pytest.approx(2.0)),  # empty proxy: denominator 1
        ("u1", "beta"): ("alpha", pytest.approx(1 / 2)),
        ("u2", "beta"): ("alpha", pytest.approx(1.0)),  # two deletions of two words
    }
    assert set(features["status"]) == {"ok"}
    assert (workdir / "features.csv.config.yaml").is_file()


def test_features_with_a_saved_ranking_and_explicit_proxy(workdir):
    assert werest("score", "input=small.csv", "output_dir=s", cwd=workdir).returncode == 0
    result = werest(
        "features", "input=small.csv", "out=f.parquet", "ranking=s/ranking.json", cwd=workdir
    )
    assert result.returncode == 0, result.stderr
    features = pd.read_parquet(workdir / "f.parquet")
    assert dict(zip(features["system"], features["proxy"], strict=True)) == {
        "alpha": "beta",
        "beta": "alpha",
    }
    result = werest(
        "features", "input=small.csv", "out=g.csv", "proxy=beta", "targets=[alpha]", cwd=workdir
    )
    assert result.returncode == 0, result.stderr
    features = pd.read_csv(workdir / "g.csv")
    assert set(zip(features["system"], features["proxy"], strict=True)) == {("alpha", "beta")}


def test_demo_prints_a_table(tmp_path):
    result = werest("demo", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    demo = pd.read_csv(REPO / "src" / "werest" / "data" / "demo_transcripts.csv")
    assert "est. WER %" in result.stdout and "true WER %" in result.stdout
    for system in demo["system"].unique():
        assert system in result.stdout
    assert {p.name for p in (tmp_path / "outputs" / "demo").iterdir()} == {
        "utterances.csv",
        "summary.json",
        "pairs.csv",
        "resources.json",
        "config.yaml",
        "winner.json",
    }


# --------------------------------------------------------------------------- error paths


def bad_inputs(folder: Path) -> dict[str, tuple[Path, list[str]]]:
    """{case: (file, fragments the error line must hold)}, written into ``folder``."""
    noise = b"\xff" + random.Random(0).randbytes(511)  # 0xff never occurs in UTF-8
    cases: dict[str, tuple[str, bytes, list[str]]] = {
        "empty file": ("empty.csv", b"", ["empty"]),
        "random bytes": ("noise.csv", noise, []),
        "semicolons": (
            "semi.csv",
            b"dataset;utt_id;system;hypothesis\nd;u1;s;hello\n",
            ["';'"],
        ),
        "missing column": (
            "nohyp.csv",
            b"dataset,utt_id,system,reference\nd,u1,s,hello\n",
            ["'hypothesis'"],
        ),
        "duplicate key": (
            "dup.csv",
            b"dataset,utt_id,system,hypothesis\nd,u1,s,a\nd,u2,s,b\nd,u1,s,c\n",
            ["row 3", "duplicate"],
        ),
        "non-UTF-8": (
            "latin1.csv",
            b"dataset,utt_id,system,hypothesis\nd,u1,s,hello\nd,u2,s,caf\xe9\n",
            ["line 3", "UTF-8"],
        ),
    }
    written = {}
    for case, (name, data, fragments) in cases.items():
        path = folder / name
        path.write_bytes(data)
        written[case] = (path, [name, *fragments])
    return written


BAD_INPUT_CASES = [
    "empty file",
    "random bytes",
    "semicolons",
    "missing column",
    "duplicate key",
    "non-UTF-8",
]


@pytest.mark.parametrize("case", BAD_INPUT_CASES)
@pytest.mark.parametrize("command", ["score", "features"])
def test_bad_input_table(tmp_path, command, case):
    inputs = tmp_path / "in"
    inputs.mkdir()
    path, fragments = bad_inputs(inputs)[case]
    out = tmp_path / "out"
    target = f"output_dir={out}" if command == "score" else f"out={out / 'f.csv'}"
    result = werest(command, f"input={path}", target, cwd=tmp_path)
    assert_user_error(result, command, *fragments)
    assert not out.exists()


def test_missing_input_file(tmp_path):
    result = werest("score", "input=nowhere.csv", "output_dir=out", cwd=tmp_path)
    assert_user_error(result, "score", "nowhere.csv", "no such file")
    assert files_under(tmp_path) == set()


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(
            "dataset,utt_id,system,hypothesis,reference\n"
            "d,u1,s,hello there,hello there,EXTRA\n"
            "d,u2,s,good morning,good morning,EXTRA\n",
            id="too-many-fields",
        ),
        pytest.param(
            "dataset,utt_id,system,reference,hypothesis\n"
            "d,u1,s,hello there,hello there\n"
            "d,u2,s,good morning\n",
            id="too-few-fields",
        ),
    ],
)
def test_ragged_csv_rows_are_refused(tmp_path, text):
    """BUG: pandas reads data rows with one field more than the header as having an index
    column and shifts every column (dataset='u1', utt_id='s', system='hello there', ...): the
    score runs and exits 0. A row with fields missing gets '' for them, so the truncated u2
    line becomes an *empty* hypothesis (100 % deletions) instead of an error. parse_csv should
    pass index_col=False and refuse rows whose field count differs from the header's."""
    path = tmp_path / "ragged.csv"
    path.write_text(text, encoding="utf-8")
    result = werest("score", f"input={path}", "output_dir=out", cwd=tmp_path)
    assert_user_error(result, "score", "ragged.csv")
    assert not (tmp_path / "out").exists()


def test_import_unknown_format(tmp_path):
    (tmp_path / "sysA.txt").write_text("u1 hi\n", encoding="utf-8")
    result = werest("import", "nemo", "sysA.txt", "--out", "x.csv", cwd=tmp_path)
    assert_user_error(result, "import", "unknown import format 'nemo'", "kaldi")
    assert files_under(tmp_path) == {Path("sysA.txt")}


def test_import_bad_source_names_file_and_row(tmp_path):
    (tmp_path / "sysA.txt").write_text("u1 hi\nu2 yo\nu1 again\n", encoding="utf-8")
    result = werest("import", "kaldi", "sysA.txt", "--out", "x.parquet", cwd=tmp_path)
    assert_user_error(result, "import", "sysA.txt", "row 3")
    assert files_under(tmp_path) == {Path("sysA.txt")}


def test_import_missing_source(tmp_path):
    result = werest("import", "dighr", tmp_path / "nowhere", "--out", "x.parquet", cwd=tmp_path)
    assert_user_error(result, "import", str(tmp_path / "nowhere"))
    assert files_under(tmp_path) == set()


def test_import_non_utf8_source_names_the_line(tmp_path):
    (tmp_path / "sysA.trn").write_bytes(b"hello (u1)\ncaf\xe9 (u2)\n")
    result = werest("import", "sclite", "sysA.trn", "--out", "x.csv", cwd=tmp_path)
    assert_user_error(result, "import", "sysA.trn", "line 2")
    assert files_under(tmp_path) == {Path("sysA.trn")}


def test_unknown_command(tmp_path):
    """The error is one line naming the command (usage may go to stdout, not stderr)."""
    result = werest("frobnicate", cwd=tmp_path)
    assert_user_error(result, None, "unknown command 'frobnicate'")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        pytest.param(["n_jobs=abc"], "n_jobs", id="n_jobs-not-a-number"),
        pytest.param(["bootstrap.n_resamples=many"], "n_resamples", id="n_resamples-not-a-number"),
        pytest.param(["no_such_key=1"], "no_such_key", id="unknown-key"),
        pytest.param(["normaliser=klingon"], "klingon", id="unknown-normaliser"),
    ],
)
def test_score_bad_override(workdir, args, fragment):
    """BUG (n_jobs, n_resamples): scoring.run calls int(cfg.n_jobs) on whatever string Hydra
    parsed, so a non-number escapes as a ValueError traceback with exit status 1."""
    result = werest("score", "input=small.csv", "output_dir=out", *args, cwd=workdir)
    assert_user_error(result, "score", fragment)
    assert not (workdir / "out").exists()


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        pytest.param(["import", "kaldi", "--out", "x.csv"], "paths", id="import-without-paths"),
        pytest.param(["features", "input=small.csv"], "out", id="features-without-out"),
    ],
)
def test_missing_mandatory_setting(workdir, args, fragment):
    """BUG: a '???' setting left unset escapes as omegaconf.MissingMandatoryValue (traceback,
    exit 1) instead of a one-line error naming the setting."""
    result = werest(*args, cwd=workdir)
    assert_user_error(result, args[0], fragment)
    assert files_under(workdir) == {Path("small.csv")}


def test_output_path_that_is_a_folder(workdir):
    """BUG: write_table/atomic_path let os.replace's IsADirectoryError escape (traceback)."""
    (workdir / "taken.csv").mkdir()
    (workdir / "sysA.txt").write_text("u1 hi\n", encoding="utf-8")
    result = werest("import", "kaldi", "sysA.txt", "--out", "taken.csv", cwd=workdir)
    assert_user_error(result, "import", "taken.csv")
    assert files_under(workdir) == {Path("small.csv"), Path("sysA.txt"), Path("taken.csv")}
