"""Features that come with the input (similarity, Whisper likelihood) and their proxy
differences: one join for train, evaluate and estimate (werest.features.inputs)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import Ridge

from werest.cli.commands.estimate import run as estimate
from werest.cli.config import load_settings
from werest.cli.main import main
from werest.demo import demo_table_path
from werest.errors import ConfigError, InputError
from werest.features.inputs import input_columns, join_input_features, with_feature_table
from werest.features.proxy import rank_on
from werest.ingest.table import read_table, write_table
from werest.model.files import load_model, save_model
from werest.model.training import fit_model, training_frame
from werest.text import Normaliser
from werest.text.scoring import score_utterances


def test_input_columns_are_the_bases_of_what_text_does_not_give():
    names = ["pwer", "tri_wer", "ctx_pwer", "similarity", "wl_mean_logprob_vs_proxy"]
    names += ["wl_mean_logprob", "similarity_vs_proxy"]
    assert input_columns(names) == ["similarity", "wl_mean_logprob"]


def test_join_takes_the_row_value_and_subtracts_the_proxys():
    features = pd.DataFrame(
        {
            "dataset": ["d"] * 3,
            "utt_id": ["u1", "u1", "u2"],
            "system": ["a", "b", "a"],
            "proxy": ["b", "a", "b"],
            "pwer": [0.1, 0.1, 0.0],
        }
    )
    table = pd.DataFrame(
        {
            "dataset": ["d"] * 4,
            "utt_id": ["u1", "u1", "u2", "u2"],
            "system": ["a", "b", "a", "b"],
            "score": [-1.0, -3.5, -2.0, np.nan],  # b has no score on u2
        }
    )
    out = join_input_features(features, table, ["pwer", "score", "score_vs_proxy"])
    assert out["score"].tolist() == [-1.0, -3.5, -2.0]
    # a on u1: -1.0 - (-3.5); b on u1: -3.5 - (-1.0); a on u2: its proxy has no score
    assert out["score_vs_proxy"].tolist()[:2] == [2.5, -2.5]
    assert np.isnan(out["score_vs_proxy"].iloc[2])
    assert out["pwer"].tolist() == [0.1, 0.1, 0.0]  # computed features are left alone
    without_proxy = join_input_features(features.drop(columns="proxy"), table, ["score_vs_proxy"])
    assert without_proxy["score"].tolist() == [-1.0, -3.5, -2.0]
    assert without_proxy["score_vs_proxy"].isna().all()


def test_attributed_pwer_is_pwer_times_the_posterior_that_the_row_is_wrong():
    """u1: a's hypothesis totals 2 × -1.0 = -2 nats, b's 4 × -1.0 = -4: the audio favours a by
    2 nats, so P(a is the wrong side) = 1/(1 + e^2) and P(b is) = 1/(1 + e^-2), which add up to
    one; u2: b is empty (no tokens), so nothing can be attributed."""
    features = pd.DataFrame(
        {
            "dataset": ["d"] * 3,
            "utt_id": ["u1", "u1", "u2"],
            "system": ["a", "b", "a"],
            "proxy": ["b", "a", "b"],
            "pwer": [0.5, 0.4, 1.0],
            "pcer": [0.2, 0.2, 1.0],
        }
    )
    table = pd.DataFrame(
        {
            "dataset": ["d"] * 4,
            "utt_id": ["u1", "u1", "u2", "u2"],
            "system": ["a", "b", "a", "b"],
            "wl_mean_logprob": [-1.0, -1.0, -0.5, np.nan],
            "wl_tokens": [2.0, 4.0, 3.0, 0.0],
        }
    )
    names = ["wl_attributed_pwer", "wl_attributed_pcer"]
    assert input_columns(["pwer", *names]) == ["wl_mean_logprob", "wl_tokens"]
    out = join_input_features(features, table, names)
    a_wrong, b_wrong = 1 / (1 + np.exp(2.0)), 1 / (1 + np.exp(-2.0))
    assert out["wl_attributed_pwer"].tolist()[:2] == pytest.approx([0.5 * a_wrong, 0.4 * b_wrong])
    assert out["wl_attributed_pcer"].tolist()[:2] == pytest.approx([0.2 * a_wrong, 0.2 * b_wrong])
    assert out[names].iloc[2].isna().all()


@pytest.fixture(scope="module")
def scored_demo(tmp_path_factory):
    """The demo table with a per-row input column ``quality`` = minus the true utterance WER:
    a perfect audio score, so a model that uses its proxy difference must beat pWER alone."""
    demo = read_table(demo_table_path())
    truth = score_utterances(demo, Normaliser("whisper_english"))[
        ["dataset", "utt_id", "system", "wer"]
    ]
    demo = demo.merge(truth, on=["dataset", "utt_id", "system"])
    demo["quality"] = -demo.pop("wer")
    path = tmp_path_factory.mktemp("scored") / "demo_scored.parquet"
    write_table(demo, path)
    return demo, path


def test_train_joins_input_features_and_their_proxy_difference(scored_demo):
    demo, _ = scored_demo
    ranking = rank_on(demo, Normaliser("whisper_english"))
    names = ["pwer", "quality", "quality_vs_proxy"]
    frame = training_frame(
        demo, ranking, normaliser=Normaliser("whisper_english"), input_features=names
    )
    quality = demo.set_index(["dataset", "utt_id", "system"])["quality"]
    for row in frame.head(20).itertuples():
        own = quality[(row.dataset, row.utt_id, row.system)]
        proxy = quality[(row.dataset, row.utt_id, row.proxy)]
        assert row.quality == own
        assert row.quality_vs_proxy == pytest.approx(own - proxy)
    # quality = -WER, so WER = -quality exactly: a linear fit recovers it
    model = fit_model(frame, ["quality"], Ridge(alpha=1e-9), ranking=ranking)
    assert np.abs(model.predict(frame) - frame["wer"]).max() < 1e-6


def test_training_without_the_input_column_says_how_to_add_it():
    demo = read_table(demo_table_path())
    ranking = rank_on(demo, Normaliser("whisper_english"))
    with pytest.raises(ConfigError, match=r"wl_mean_logprob .*whisper_likelihood"):
        training_frame(
            demo,
            ranking,
            normaliser=Normaliser("whisper_english"),
            input_features=["pwer", "wl_mean_logprob_vs_proxy"],
        )


def test_estimate_derives_the_proxy_difference_the_model_needs(scored_demo, tmp_path):
    demo, scored_path = scored_demo
    ranking = rank_on(demo, Normaliser("whisper_english"))
    names = ["pwer", "quality_vs_proxy"]
    frame = training_frame(
        demo, ranking, normaliser=Normaliser("whisper_english"), input_features=names
    )
    model = fit_model(frame, names, Ridge(alpha=1e-6), ranking=ranking)
    model_path = save_model(model, tmp_path / "m.skops")

    def run(input_path, out):
        return estimate(
            load_settings(
                "estimate",
                [
                    f"input={input_path}",
                    f"model_path={model_path}",
                    f"output_dir={out}",
                    "target=tiny",
                    "proxy=base",
                ],
            )
        )

    records = run(scored_path, tmp_path / "est")
    utterances = pd.read_csv(tmp_path / "est" / "utterances.csv")
    quality = demo.set_index(["dataset", "utt_id", "system"])["quality"]
    expected = [
        quality[(r.dataset, r.utt_id, "tiny")] - quality[(r.dataset, r.utt_id, "base")]
        for r in utterances.itertuples()
    ]
    assert utterances["quality_vs_proxy"].to_numpy() == pytest.approx(expected)
    assert all(r["proxy"] == "base" for r in records)
    with pytest.raises(ConfigError, match=r"quality .*does not hold"):
        run(demo_table_path(), tmp_path / "est2")


def test_the_two_system_guard_names_the_audio_evidence_in_partitions_too(scored_demo, tmp_path):
    """Two systems with a model that uses an audio score's proxy difference: the warning says
    that only the audio scores tell the sides apart, in memory and from the partitions'
    compact rows (which drop the score's column), in the same words."""
    demo, _ = scored_demo
    two = demo[demo["system"].isin(["tiny", "base"])]
    path = tmp_path / "two.parquet"
    write_table(two, path)
    names = ["pwer", "quality_vs_proxy"]
    ranking = rank_on(two, Normaliser("whisper_english"))
    frame = training_frame(
        two, ranking, normaliser=Normaliser("whisper_english"), input_features=names
    )
    model_path = save_model(
        fit_model(frame, names, Ridge(alpha=1e-6), ranking=ranking), tmp_path / "m.skops"
    )

    def warnings(*overrides):
        out = tmp_path / str(len(overrides))
        args = [f"input={path}", f"model_path={model_path}", f"output_dir={out}", *overrides]
        assert main(["estimate", *args]) == 0
        records = json.loads((out / "summary.json").read_text())
        return [w for r in records for w in r.get("warnings", [])]

    in_memory = warnings()
    assert len(in_memory) == 4  # each dataset's warning on each of its two systems
    assert all("only the audio scores (quality_vs_proxy) say which" in m for m in in_memory)
    assert warnings("partition.rows=10", "partition.count=3") == in_memory


def test_train_learns_from_a_feature_table_the_paper_set(tmp_path):
    """features=paper (pWER, pCER, similarity) trains from a feature table: ``werest
    features`` writes it, a similarity column is added to it (the place ``werest embed`` writes
    SONAR's; here the true utterance WER: a perfect audio score, oriented as pWER is for the
    non-negative ridge), and ``werest train
    features_table=…`` joins it to the labelled transcripts by key."""
    demo = read_table(demo_table_path())
    features_path = tmp_path / "features.parquet"
    assert main(["features", f"input={demo_table_path()}", f"out={features_path}"]) == 0
    features = read_table(features_path, required=("dataset", "utt_id", "system"))
    truth = score_utterances(demo, Normaliser("whisper_english"))[
        ["dataset", "utt_id", "system", "wer"]
    ]
    features = features.merge(truth, on=["dataset", "utt_id", "system"])
    features["similarity"] = features.pop("wer")
    write_table(features, features_path)
    train = [
        "train",
        "data=table",
        f"data.sources.0.table={demo_table_path()}",
        "features=paper",
        "model=ridge",
        f"output_dir={tmp_path}",
        "name=paper",
        "normaliser=whisper_english",
    ]
    assert main(train) == 2  # without the feature table: similarity is nowhere
    assert main([*train, f"features_table={features_path}"]) == 0
    model = load_model(tmp_path / "paper.skops")
    assert model.feature_names == ["pwer", "pcer", "similarity"]
    rows = training_frame(
        with_feature_table(demo, features, model.feature_names),
        model.ranking,
        normaliser=Normaliser("whisper_english"),
        input_features=model.feature_names,
    )
    # the model uses the similarity it was given: it beats pWER alone, and without it differs
    error = np.abs(model.predict(rows) - rows["wer"]).mean()
    assert error < np.abs(rows["pwer"] - rows["wer"]).mean()
    assert not np.allclose(model.predict(rows.assign(similarity=0.0)), model.predict(rows))
    no_similarity = features.drop(columns="similarity")
    with pytest.raises(InputError, match=r"lacks similarity.*werest embed"):
        with_feature_table(demo, no_similarity, model.feature_names, source=features_path)
