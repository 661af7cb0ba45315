"""werest estimate: proxies, statuses, summaries, model/feature mismatches and the demo."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from tests.conftest import REPO
from werest.cli.commands.estimate import run as estimate
from werest.cli.config import load_settings
from werest.cli.main import main
from werest.demo import demo_table_path
from werest.features.proxy import rank_on
from werest.ingest.table import read_table, write_table
from werest.model.files import save_model
from werest.model.regressor import StackedWerRegressor
from werest.model.training import fit_model, training_frame
from werest.text import Normaliser

pytestmark = [pytest.mark.shared, pytest.mark.audio]

GRIDS = {"hgb": {"max_iter": [30], "learning_rate": [0.1]}}


@pytest.fixture(scope="module")
def demo():
    return read_table(demo_table_path())


@pytest.fixture(scope="module")
def model_path(tmp_path_factory, demo):
    """A small model trained on the demo table (text features), saved with its card."""
    ranking = rank_on(demo, Normaliser("whisper_english"))
    frame = training_frame(demo, ranking, normaliser=Normaliser("whisper_english"))
    estimator = StackedWerRegressor(models=["hgb"], param_grids=GRIDS, n_splits=2)
    names = ["pwer", "pcer", "pwer_min", "pwer_mean", "est_ref_words"]
    model = fit_model(frame, names, estimator, ranking=ranking)
    return save_model(model, tmp_path_factory.mktemp("model") / "m.skops")


def _estimate(model_path, input_path, out, *overrides):
    cfg = load_settings(
        "estimate",
        [f"input={input_path}", f"model_path={model_path}", f"output_dir={out}", *overrides],
    )
    return estimate(cfg)


def test_estimate_with_references_reports_true_wer(model_path, tmp_path):
    records = _estimate(model_path, demo_table_path(), tmp_path, "target=tiny")
    assert {r["dataset"] for r in records} == {"demo-calls", "demo-meetings"}
    for record in records:
        assert record["system"] == "tiny" and record["proxy"] == "large-v3"  # best ranked
        assert 0 <= record["ci_low"] <= record["estimated_wer"] <= record["ci_high"]
        assert "wer" in record
    calls = next(r for r in records if r["dataset"] == "demo-calls")
    assert calls["wer"] == pytest.approx(6 / 50)  # 6 errors over 50 reference words (by hand)
    utterances = pd.read_csv(tmp_path / "utterances.csv")
    assert len(utterances) == 14 and (utterances["status"] == "ok").all()
    assert {"pwer", "pcer", "predicted_wer", "proxy"} <= set(utterances.columns)
    assert json.loads((tmp_path / "summary.json").read_text()) == json.loads(json.dumps(records))
    resources = json.loads((tmp_path / "resources.json").read_text())  # what the run cost
    assert resources["rss_mb_peak"] >= resources["rss_mb_mean"] > 0
    assert resources["cpu_seconds"] > 0 and resources["wall_seconds"] > 0


def test_estimate_without_references_and_an_explicit_proxy(model_path, demo, tmp_path):
    unlabelled = demo.drop(columns="reference")
    write_table(unlabelled, tmp_path / "in.parquet")
    records = _estimate(
        model_path,
        tmp_path / "in.parquet",
        tmp_path / "out",
        "target=[tiny,edge-kws]",
        "proxy=base",
    )
    assert {(r["system"], r["proxy"]) for r in records} == {("tiny", "base"), ("edge-kws", "base")}
    assert all("wer" not in r for r in records)


def test_corpus_estimate_weights_utterances_by_proxy_length(model_path, tmp_path):
    _estimate(model_path, demo_table_path(), tmp_path, "target=tiny")
    rows = pd.read_csv(tmp_path / "utterances.csv")
    summary = json.loads((tmp_path / "summary.json").read_text())
    for record in summary:
        part = rows[rows["dataset"] == record["dataset"]]
        weight = part["proxy_words"].clip(lower=1)
        expected = (part["predicted_wer"] * weight).sum() / weight.sum()
        # utterances.csv keeps 6 significant digits
        assert record["estimated_wer"] == pytest.approx(expected, rel=1e-5)
        assert record["n_estimated_words"] == pytest.approx(weight.sum())


def test_utterances_without_a_proxy_get_a_status_and_the_rest_are_estimated(
    model_path, demo, tmp_path
):
    lonely = demo[~((demo["utt_id"] == "m03") & (demo["system"] != "tiny"))]
    write_table(lonely, tmp_path / "in.csv")
    _estimate(model_path, tmp_path / "in.csv", tmp_path / "out", "target=tiny")
    rows = pd.read_csv(tmp_path / "out" / "utterances.csv")
    alone = rows[rows["utt_id"] == "m03"].iloc[0]
    assert alone["status"] == "no proxy hypothesis" and np.isnan(alone["predicted_wer"])
    assert (rows.loc[rows["utt_id"] != "m03", "status"] == "ok").all()


def test_unseen_systems_are_ordered_by_agreement(model_path, demo, tmp_path):
    renamed = demo.replace({"system": {"large-v3": "new-a", "base": "new-b"}})
    write_table(renamed, tmp_path / "in.csv")
    records = _estimate(model_path, tmp_path / "in.csv", tmp_path / "out", "target=tiny")
    assert {r["proxy"] for r in records} <= {"new-a", "new-b"}  # not edge-kws


def test_a_model_needing_features_the_input_lacks_is_refused(demo, tmp_path, capsys):
    ranking = rank_on(demo, Normaliser("whisper_english"))
    frame = training_frame(demo, ranking, normaliser=Normaliser("whisper_english"))
    frame["similarity"] = 0.5
    model = fit_model(
        frame,
        ["pwer", "similarity"],
        StackedWerRegressor(models=["hgb"], param_grids=GRIDS, n_splits=2),
    )
    path = save_model(model, tmp_path / "sim.skops")
    status = main(
        [
            "estimate",
            f"input={demo_table_path()}",
            f"model_path={path}",
            f"output_dir={tmp_path / 'out'}",
        ]
    )
    error = capsys.readouterr().err.strip()
    assert status == 2 and "needs feature(s) similarity" in error and "\n" not in error
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["target=nobody"], "target system 'nobody' is not in the input"),
        (["target=tiny", "proxy=tiny"], "proxy 'tiny' is also the target"),
        (["target=tiny", "proxy=nobody"], "proxy system 'nobody' is not in the input"),
    ],
)
def test_bad_target_or_proxy(model_path, tmp_path, capsys, overrides, message):
    status = main(
        [
            "estimate",
            f"input={demo_table_path()}",
            f"model_path={model_path}",
            f"output_dir={tmp_path / 'out'}",
            *overrides,
        ]
    )
    assert status == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_demo_runs_from_a_copy_without_shared(tmp_path):
    """`werest demo` from the repository's files alone, with no ../shared beside them."""
    clone = tmp_path / "clone"
    tracked = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for name in tracked.splitlines():
        source = REPO / name
        if source.is_file() and not name.startswith("tests/"):
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, clone / name)
    assert not (tmp_path / "shared").exists()
    env = {**os.environ, "PYTHONPATH": str(clone / "src")}
    result = subprocess.run(
        [sys.executable, "-m", "werest.cli", "demo"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "est. WER %" in result.stdout and "true WER %" in result.stdout
    assert "edge-kws" in result.stdout


def test_real_an4_chain_on_a_handful_of_files(tmp_path):
    """AN4 audio -> pocketsphinx generic and AN4-tuned -> each estimated with the other as
    proxy, beside the true WER from the AN4 references."""
    from tests.conftest import shared_path

    an4 = shared_path("an4")
    utterances = tmp_path / "an4.parquet"
    assert main(["import", "sphinx", str(an4), "--out", str(utterances)]) == 0
    transcripts = tmp_path / "asr.parquet"
    common = [f"input={utterances}", "dataset=an4-test", "limit=6", f"out={transcripts}"]
    assert main(["transcribe", "asr=pocketsphinx", *common]) == 0
    assert (
        main(
            [
                "transcribe",
                "asr=pocketsphinx_an4",
                f"asr.lm={an4}/etc/an4.ug.lm",
                f"asr.dict={an4}/etc/an4.dic",
                *common,
            ]
        )
        == 0
    )
    table = read_table(transcripts)
    assert sorted(table["system"].unique()) == ["pocketsphinx-an4", "pocketsphinx-en-us"]
    from werest.text.scoring import corpus_scores, score_utterances

    truth = corpus_scores(score_utterances(table)).set_index("system")["wer"]
    for target, proxy in [
        ("pocketsphinx-en-us", "pocketsphinx-an4"),
        ("pocketsphinx-an4", "pocketsphinx-en-us"),
    ]:
        out = tmp_path / target
        assert (
            main(
                [
                    "estimate",
                    f"input={transcripts}",
                    f"target={target}",
                    f"proxy={proxy}",
                    f"output_dir={out}",
                ]
            )
            == 0
        )
        (record,) = json.loads((out / "summary.json").read_text())
        assert (record["system"], record["proxy"], record["n_utterances"]) == (target, proxy, 6)
        assert record["wer"] == pytest.approx(truth[target])
        assert 0 <= record["ci_low"] <= record["estimated_wer"] <= record["ci_high"] <= 1
