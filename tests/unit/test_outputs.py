"""Outputs a user can check (issue 13, item 7): texts and true S/D/I in utterances.csv,
per-utterance scores, every proxy and the estimated count on the console, and systems
compared on different utterance sets."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import werest
from werest.cli.main import main
from werest.demo import demo_table_path
from werest.estimation.guards import count_missing_as_deletions

CALLS = ["c01", "c02", "c03", "c04", "c05", "c06"]


@pytest.fixture(scope="module")
def demo():
    return werest.read_table(demo_table_path())


def test_utterances_csv_has_the_texts_and_the_true_counts(tmp_path, demo):
    assert main(["estimate", f"input={demo_table_path()}", f"output_dir={tmp_path}"]) == 0
    rows = pd.read_csv(tmp_path / "utterances.csv", keep_default_na=False)
    row = rows[(rows["utt_id"] == "m01") & (rows["system"] == "tiny")].iloc[0]
    source = demo.set_index(["dataset", "utt_id", "system"])
    assert row["hypothesis"] == source.loc[("demo-meetings", "m01", "tiny"), "hypothesis"]
    assert (
        row["proxy_hypothesis"] == source.loc[("demo-meetings", "m01", row["proxy"]), "hypothesis"]
    )
    assert row["reference"] == source.loc[("demo-meetings", "m01", "tiny"), "reference"]
    errors = row["substitutions"] + row["deletions"] + row["insertions"]
    assert row["wer"] == pytest.approx(errors / row["ref_words"])
    # the corpus WER in summary.json is Σ errors / Σ words over these rows
    summary = {
        (r["dataset"], r["system"]): r for r in json.loads((tmp_path / "summary.json").read_text())
    }
    calls = rows[(rows["dataset"] == "demo-calls") & (rows["system"] == "tiny")]
    total = calls[["substitutions", "deletions", "insertions"]].to_numpy().sum()
    assert summary[("demo-calls", "tiny")]["wer"] == pytest.approx(total / calls["ref_words"].sum())


def test_score_writes_per_utterance_results(tmp_path, demo):
    assert main(["score", f"input={demo_table_path()}", f"output_dir={tmp_path}"]) == 0
    rows = pd.read_csv(tmp_path / "utterances.csv", keep_default_na=False)
    assert len(rows) == len(demo)
    scores = pd.read_csv(tmp_path / "scores.csv").set_index(["dataset", "system"])
    for (dataset, system), group in rows.groupby(["dataset", "system"]):
        errors = group[["substitutions", "deletions", "insertions"]].to_numpy().sum()
        assert scores.loc[(dataset, system), "wer"] == pytest.approx(
            errors / group["ref_words"].sum()
        )
    assert {"reference", "hypothesis", "cer"} <= set(rows.columns)


def test_console_shows_every_proxy_and_the_estimated_count(tmp_path, demo, capsys):
    # large-v3 (everyone's first proxy) did not transcribe two calls: tiny's proxy there is
    # base, the next in the label-free order
    gone = (demo["system"] == "large-v3") & demo["utt_id"].isin(CALLS[:2])
    werest.write_table(demo[~gone], tmp_path / "t.csv")
    assert main(["estimate", f"input={tmp_path / 't.csv'}", f"output_dir={tmp_path / 'o'}"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    line = next(x for x in lines if x.split()[:2] == ["demo-calls", "tiny"])
    assert "large-v3 4, base 2" in line and "6/6" in line
    assert "large-v3 2 missing" in out and "missing_hypotheses=deletions" in out
    records = json.loads((tmp_path / "o" / "summary.json").read_text())
    tiny = next(r for r in records if r["dataset"] == "demo-calls" and r["system"] == "tiny")
    assert tiny["proxies"] == {"large-v3": 4, "base": 2}
    large = next(r for r in records if r["dataset"] == "demo-calls" and r["system"] == "large-v3")
    assert large["n_utterances"] == 4 and any(
        "different utterance sets" in w for w in large["warnings"]
    )


def test_missing_hypotheses_as_deletions(tmp_path, demo):
    table = demo[~((demo["system"] == "tiny") & (demo["utt_id"] == "m01"))]
    filled = count_missing_as_deletions(table)
    added = filled[(filled["system"] == "tiny") & (filled["utt_id"] == "m01")].iloc[0]
    assert (
        added["hypothesis"] == ""
        and added["reference"] == demo[demo["utt_id"] == "m01"]["reference"].iloc[0]
    )
    assert len(filled) == len(demo)
    excluded = werest.estimate(table, targets=["tiny"])
    counted = werest.estimate(table, targets=["tiny"], missing_hypotheses="deletions")
    meetings = lambda e: e.summary.set_index("dataset").loc["demo-meetings"]  # noqa: E731
    assert meetings(excluded)["n_utterances"] == 7 and meetings(counted)["n_utterances"] == 8
    assert meetings(counted)["wer"] > meetings(excluded)["wer"]  # 9 more deleted words
    assert any("different utterance sets" in w["message"] for w in excluded.warnings)
    assert not any("different utterance sets" in w["message"] for w in counted.warnings)


def test_a_transcript_file_passed_as_a_table_suggests_its_importer(tmp_path, capsys):
    (tmp_path / "text").write_text("utt1 hello world\n", encoding="utf-8")
    (tmp_path / "sysA.trn").write_text("hello world (utt1)\n", encoding="utf-8")
    for name, importer in (("text", "werest import kaldi"), ("sysA.trn", "werest import sclite")):
        assert main(["estimate", f"input={tmp_path / name}", f"output_dir={tmp_path}"]) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and importer in err, err


def test_write_csv_writes_what_pandas_writes_byte_for_byte(tmp_path):
    """werest.io.write_csv formats each distinct float once; the file must be pandas' own
    ``to_csv(float_format="%.6g")``: negative zero, nulls, infinities, float32, nullable
    floats, integers and strings that need quoting included."""
    from werest.csv_writer import _csv_cells, write_csv

    rng = np.random.default_rng(0)
    n = 500
    frame = pd.DataFrame(
        {
            "text": rng.choice(["a, b", 'say "hi"', "plain", "two\nlines"], n),
            "count": rng.integers(0, 40, n),
            "rate": rng.choice([0.0, -0.0, 1 / 3, 2 / 25, 123456789.0, 1e-7, np.nan, np.inf], n),
            "small": rng.random(n).astype(np.float32),
            "nullable": pd.array(rng.choice([0.5, None, 1 / 7], n), dtype="Float64"),
            "flag": rng.random(n) > 0.5,
            "maybe": rng.choice(["", "x", None], n),
            "arrow": pd.array(rng.choice(["é, ü", "b"], n), dtype="string[pyarrow]"),
            "a,b": rng.integers(-3, 3, n),
        }
    )
    assert all(_csv_cells(values, "%.6g") is not None for _, values in frame.items())
    frames = {
        "fast": frame,  # every column handled by write_csv itself
        "one column": frame[["maybe"]],  # an empty cell alone on its row is quoted
        "mixed": frame.assign(mixed=rng.choice(np.array(["s", 1.5, None], dtype=object), n)),
        "categories": frame.assign(cat=pd.Categorical(rng.choice(["p", "q"], n))),
        "int with nulls": frame.assign(ints=pd.array(rng.choice([1, None], n), dtype="Int64")),
    }
    for name, table in frames.items():
        write_csv(table, tmp_path / "werest.csv")
        table.to_csv(tmp_path / "pandas.csv", index=False, float_format="%.6g")
        written = (tmp_path / "werest.csv").read_bytes()
        assert written == (tmp_path / "pandas.csv").read_bytes(), name
    write_csv(frame, tmp_path / "werest.csv")
    written = (tmp_path / "werest.csv").read_bytes()
    assert b"-0," in written and b'"a,b"' in written and b'"two\nlines"' in written
