"""The Python API (issue 13, item 5): the README's example runs as it stands, and the
functions agree with the commands."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import werest
from tests.conftest import REPO
from werest.cli.main import main
from werest.demo import demo_table_path
from werest.io import shipped
from werest.model.files import ModelError, model_file, shipped_models


def readme_example() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- python-api-example -->\n```python\n(.*?)```", text, flags=re.S)
    assert match, "README lost its Python API example"
    return match.group(1)


def test_the_readme_example_runs(tmp_path):
    script = tmp_path / "example.py"
    script.write_text(readme_example(), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "estimated_wer" in result.stdout and "0.1666" in result.stdout


def test_estimate_matches_the_command(tmp_path):
    assert main(["estimate", f"input={demo_table_path()}", f"output_dir={tmp_path}"]) == 0
    written = pd.DataFrame(json.loads((tmp_path / "summary.json").read_text()))
    result = werest.estimate(werest.read_table(demo_table_path()))
    assert isinstance(result, werest.Estimates)
    np.testing.assert_allclose(result.summary["estimated_wer"], written["estimated_wer"])
    assert len(result.utterances) == len(pd.read_csv(tmp_path / "utterances.csv"))


def test_estimate_takes_a_normaliser_that_restates_the_models():
    """``normaliser`` is converted once at the API: a name or a Normaliser equivalent to the
    model's (``auto``) on English rows runs as the model's own; another, or an unknown name,
    is a ConfigError."""
    table = werest.read_table(demo_table_path())
    own = werest.estimate(table).summary["estimated_wer"]
    for same in ("whisper_english", werest.text.Normaliser("auto")):
        result = werest.estimate(table, normaliser=same)
        np.testing.assert_allclose(result.summary["estimated_wer"], own)
    with pytest.raises(werest.ConfigError, match="normaliser=none differs from the model's"):
        werest.estimate(table, normaliser="none")
    with pytest.raises(werest.ConfigError, match="bogus"):
        werest.estimate(table, normaliser="bogus")


def test_score_and_text_wer_agree_with_jiwer():
    import jiwer

    refs, hyps = ["the cat sat", "a dog ran off"], ["the cat sat down", "a dog ran"]
    assert werest.text.wer(refs, hyps) == pytest.approx(jiwer.wer(refs, hyps))
    assert werest.text.cer(refs, hyps) == pytest.approx(jiwer.cer(refs, hyps))
    assert werest.text.wer("Hello, World!", "hello world", normaliser="whisper_english") == 0
    with pytest.raises(ValueError, match="empty"):
        werest.text.wer("", "words")
    scores = werest.score(werest.read_table(demo_table_path()))
    calls = scores.set_index(["dataset", "system"]).loc[("demo-calls", "tiny")]
    assert calls["wer"] == pytest.approx(6 / 50)  # worked out by hand (test_estimate.py)


def test_a_bad_table_is_the_commands_one_line_error():
    bad = pd.DataFrame({"dataset": ["d"], "utt_id": ["u"], "hypothesis": ["x"]})
    with pytest.raises(werest.InputError, match="system"):
        werest.estimate(bad)


def test_estimate_with_labels_as_a_dataframe():
    """werest.estimate(table, labels=DataFrame): every utterance of the demo table labelled
    (a census, min_labels lowered to 5) makes each estimate the true corpus WER, with
    method ppi and the pairs table; a label for an unknown utterance raises InputError."""
    from werest.errors import InputError
    from werest.estimation.labels import LabelSettings

    table = werest.read_table(demo_table_path())
    labels = table.drop_duplicates(["dataset", "utt_id"])[["dataset", "utt_id", "reference"]]
    result = werest.estimate(table, labels=labels, few_labels=LabelSettings(min_labels=5))
    assert set(result.summary["method"]) == {"ppi"}
    assert np.allclose(result.summary["estimated_wer"], result.summary["wer"])
    assert result.pairs is not None and len(result.pairs) == 12  # 2 datasets × C(4, 2)
    bad = labels.assign(utt_id=["nope", *labels["utt_id"].iloc[1:]])
    with pytest.raises(InputError, match="not in the input table"):
        werest.estimate(table, labels=bad)


def test_a_shipped_model_is_loaded_by_its_name(tmp_path, monkeypatch):
    """model_path=audio / model_path=default: the models inside the package, which a user of
    an installed werest cannot name by a path."""
    monkeypatch.chdir(tmp_path)
    folder = shipped("models")
    assert shipped_models() == sorted(p.stem for p in folder.glob("*.skops"))
    assert {"audio", "default"} <= set(shipped_models())
    audio = werest.load_model("audio")
    assert any(name.startswith("wl_") for name in audio.feature_names)  # the audio features
    assert werest.load_model("default").feature_names == werest.load_model().feature_names
    assert model_file("audio") == folder / "audio.skops"
    # a file of that name here is the user's and wins; a path or a suffix is never a name
    (tmp_path / "audio").write_text("mine", encoding="utf-8")
    assert model_file("audio") == Path("audio")
    assert model_file("sub/default") == Path("sub/default")
    assert model_file("default.skops") == Path("default.skops")
    with pytest.raises(ModelError, match=r"no such model file \(or shipped model: audio, default"):
        werest.load_model("nope")
