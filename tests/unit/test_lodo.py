"""Out-of-domain machinery (issue 10): triangulated errors, character-scored languages,
normaliser checks, domains and balancing, the residual regressor, conformal intervals and the
leave-one-domain-out harness."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf

from tests.conftest import shared_path
from werest.errors import ConfigError
from werest.features.agreement import agreement_features, pairwise_agreement, triangulated_errors
from werest.features.proxy import Ranking, choose_proxies
from werest.text import Normaliser, get_normaliser, normalise_many, scoring_unit

KEY = ["dataset", "utt_id", "system"]


def _table(rows):
    return pd.DataFrame(rows, columns=["dataset", "utt_id", "system", "hypothesis"])


def test_triangulated_errors_by_hand():
    # A="a b c d", B="a b c x", C="a y c d": every hypothesis has 4 words, so n̂ = 4.
    # Edit distances: A-B 1, A-C 1, B-C 2 -> d = 0.25, 0.25, 0.5.
    # k = 3: e(A) = (d_AB + d_AC - d_BC) / 2 = 0, e(B) = (0.25 + 0.5 - 0.25) / 2 = 0.25,
    # e(C) = 0.25. A second utterance with two systems has no solution (NaN).
    table = _table(
        [
            ("d", "u1", "A", "a b c d"),
            ("d", "u1", "B", "a b c x"),
            ("d", "u1", "C", "a y c d"),
            ("d", "u2", "A", "p q"),
            ("d", "u2", "B", "p"),
        ]
    )
    tri = triangulated_errors(pairwise_agreement(table, normaliser=Normaliser("none")))
    assert tri.loc[("d", "u1", "A"), "tri_wer"] == pytest.approx(0.0)
    assert tri.loc[("d", "u1", "B"), "tri_wer"] == pytest.approx(0.25)
    assert tri.loc[("d", "u1", "C"), "tri_wer"] == pytest.approx(0.25)
    assert np.isnan(tri.loc[("d", "u2", "A"), "tri_wer"])


def test_triangulated_feature_names_the_proxys_value():
    table = _table(
        [
            ("d", "u1", "A", "a b c d"),
            ("d", "u1", "B", "a b c x"),
            ("d", "u1", "C", "a y c d"),
        ]
    )
    features = agreement_features(
        table,
        choose_proxies(table, Ranking.from_order(["A", "B", "C"])),
        normaliser=Normaliser("none"),
    )
    row = features.set_index(KEY).loc[("d", "u1", "B")]
    assert row["proxy"] == "A"
    assert row["tri_wer"] == pytest.approx(0.25)
    assert row["tri_wer_proxy"] == pytest.approx(0.0)


def test_pairwise_rows_are_mirrored_alignments():
    # "a b" vs "a b c": one edit, measured against the other side's length either way.
    table = _table([("d", "u", "A", "a b c"), ("d", "u", "B", "a b")])
    pairs = pairwise_agreement(table, normaliser=Normaliser("none")).set_index(["system", "other"])
    assert pairs.loc[("A", "B"), ["w_dist", "hyp_words", "other_words"]].tolist() == [1, 3, 2]
    assert pairs.loc[("B", "A"), ["w_dist", "hyp_words", "other_words"]].tolist() == [1, 2, 3]
    assert pairs.loc[("A", "B"), "pwer"] == pytest.approx(1 / 2)
    assert pairs.loc[("B", "A"), "pwer"] == pytest.approx(1 / 3)
    # Against its proxy, the split: an insertion seen from the longer side, a deletion from
    # the other, whichever system's name sorts first.
    for target, proxy, insertions, deletions in (("A", "B", 1, 0), ("B", "A", 0, 1)):
        rows = pd.DataFrame({"dataset": ["d"], "utt_id": ["u"], "system": [target]})
        features = agreement_features(
            table, rows.assign(proxy=proxy), normaliser=Normaliser("none")
        ).iloc[0]
        assert [features["pwer_ins"], features["pwer_del"], features["pwer_sub"]] == [
            insertions,
            deletions,
            0,
        ]


@pytest.mark.parametrize(
    ("language", "text", "expected"),
    [
        ("zh", "你好，世界！", "你 好 世 界"),
        ("zh-CN", "我想 查询 iPhone", "我 想 查 询 i p h o n e"),
        ("ja", "こんにちは", "こ ん に ち は"),
        ("th", "สวัสดี ครับ", "ส วั ส ดี ค รั บ"),  # vowel marks stay on their consonant
        ("es", "¿Hola, señor?", "hola señor"),
    ],
)
def test_languages_without_spaces_are_scored_on_characters(language, text, expected):
    assert get_normaliser("auto", language)(text).split() == expected.split()


def test_scoring_unit_follows_language_and_normaliser():
    assert scoring_unit("zh-CN") == "character"
    assert scoring_unit("cmn") == "character"
    assert scoring_unit("en") == "word"
    assert scoring_unit(None) == "word"
    assert scoring_unit("zh", Normaliser("whisper_english")) == "word"


def test_normalise_many_takes_a_normaliser_not_a_name():
    out = normalise_many(pd.Series(["你好"]), Normaliser("auto"), pd.Series(["zh"]))
    assert out.tolist() == ["你 好"]
    with pytest.raises(TypeError, match="takes a Normaliser"):
        normalise_many(pd.Series(["你好"]), "auto", pd.Series(["zh"]))


def test_score_reports_character_unit(tmp_path):
    from werest.text.scoring import corpus_scores, score_utterances

    table = pd.DataFrame(
        {
            "dataset": ["zh", "en"],
            "utt_id": ["1", "1"],
            "system": ["s", "s"],
            "hypothesis": ["你好吗", "hello word"],
            "reference": ["你好嘛", "hello world"],
            "language": ["zh", "en"],
        }
    )
    scored = score_utterances(table, Normaliser("auto"))
    scores = corpus_scores(scored, n_resamples=0).set_index("dataset")
    # zh: 3 characters, one substituted -> 1/3; en: 2 words, one substituted -> 1/2.
    assert scores.loc["zh", "wer"] == pytest.approx(1 / 3)
    assert scores.loc["zh", "unit"] == "character"
    assert scores.loc["en", "wer"] == pytest.approx(1 / 2)
    assert scores.loc["en", "unit"] == "word"


def test_check_normaliser_accepts_equivalents_and_refuses_others():
    from werest.estimation.estimate import check_normaliser
    from werest.model.files import Models, TrainedModel

    english = pd.DataFrame({"language": ["en", "en-US"]})
    mixed = pd.DataFrame({"language": ["en", "es"]})
    models = Models(TrainedModel(None, [], normaliser="auto"))
    english_normaliser = Normaliser("whisper_english")
    assert check_normaliser(models, None, mixed) == Normaliser("auto")
    assert check_normaliser(models, Normaliser("auto"), mixed) == Normaliser("auto")
    assert check_normaliser(models, english_normaliser, english) == Normaliser("auto")
    with pytest.raises(ConfigError, match="differs from the model's"):
        check_normaliser(models, english_normaliser, mixed)
    with pytest.raises(ConfigError, match="normaliser=none"):
        check_normaliser(models, Normaliser("none"), english)


def test_domains_families_and_balanced_sample():
    from werest.model.training import balanced_sample, domain_of, system_family

    datasets = pd.Series(["afrispeech-dev-clinical", "afrispeech-test-clinical", "mubench-en-US"])
    domains = domain_of(datasets, {"clinical": ["afrispeech-*-clinical"]})
    assert domains.tolist() == ["clinical", "clinical", "mubench-en-US"]
    assert system_family("openai/whisper-large") == "openai/whisper"
    assert system_family("facebook/wav2vec2-large-960h") == "facebook/wav2vec2"
    assert system_family("deepgram-nova3") == "deepgram"
    assert system_family("azure") == "azure"
    # Domain a: family w has 90 rows (3 systems), family x 10 rows; cap 40 -> x keeps its 10
    # (under its share of 20) and w takes the other 30. Domain b (5 rows) keeps every row.
    frame = pd.DataFrame(
        {
            "domain": ["a"] * 100 + ["b"] * 5,
            "system": ["w/m-1"] * 30 + ["w/m-2"] * 30 + ["w/m-3"] * 30 + ["x"] * 10 + ["y"] * 5,
        }
    )
    sample = balanced_sample(frame, 40, seed=0)
    counts = sample.groupby("domain")["system"].apply(lambda s: s.map(system_family).value_counts())
    assert counts[("a", "w/m")] == 30
    assert counts[("a", "x")] == 10
    assert counts[("b", "y")] == 5
    assert not sample.index.duplicated().any()


def test_weighted_quantile_and_conformal_interval():
    from werest.model.intervals import conformal_interval, domain_weights, weighted_quantile

    values = np.array([0.1, 0.2, 0.3, 0.4])
    # Equal weights, level 0.5: target share 0.5 * 5/4 = 0.625 -> the 3rd value (share 0.75).
    assert weighted_quantile(values, np.ones(4), 0.5) == pytest.approx(0.3)
    # Domain a has 3 cells and b one: each domain weighs 1/2, so b's cell holds half the mass.
    weights = domain_weights(pd.Series(["a", "a", "a", "b"]))
    np.testing.assert_allclose(weights, [1 / 3, 1 / 3, 1 / 3, 1])
    low, high = conformal_interval([0.10], [0.5], 0.02, [0.05], [0.11])
    # half-width 0.5 * (0.10 + 0.02) = 0.06 -> [0.04, 0.16], already holding the CI [0.05, 0.11]
    assert low[0] == pytest.approx(0.04)
    assert high[0] == pytest.approx(0.16)
    low, high = conformal_interval([0.10], [0.0], 0.02, [0.05], [0.11])
    assert (low[0], high[0]) == pytest.approx((0.05, 0.11))


def test_interval_settings_are_checked_and_reach_the_calibration(tmp_path):
    from werest.evaluation.lodo import LodoSettings
    from werest.model.intervals import ConformalInterval
    from werest.model.training import read_calibration

    cells = tmp_path / "cells.csv"
    pd.DataFrame({"domain": ["a", "b"], "wer": [0.1, 0.3], "awer": [0.2, 0.2]}).to_csv(
        cells, index=False
    )
    calibration = read_calibration(cells, ConformalInterval(level=0.9, offset=0.1))
    assert (calibration["level"], calibration["offset"]) == (0.9, 0.1)
    assert read_calibration(cells)["level"] == 0.95
    lodo = LodoSettings(held_out="phone-es", level=0.8)
    assert lodo.held_out == ("phone-es",)
    assert lodo.interval == ConformalInterval(level=0.8, offset=0.5)
    with pytest.raises(ConfigError, match=r"^interval.level must be in \(0, 1\), got 95"):
        ConformalInterval(level=95)
    with pytest.raises(ConfigError, match=r"^lodo.offset must be > 0, got -1"):
        LodoSettings(offset=-1)


@pytest.mark.shared
def test_all_shared_joins_librispeech_and_groups_domains():
    shared_path("afrispeech")
    shared_path("mubench")
    from werest.cli.config import compose
    from werest.model.training import domain_of, load_sources

    cfg = compose("train", ["data=all_shared"])
    table = load_sources(cfg.data)
    libri = table[table["dataset"] == "librispeech-test-clean"]
    assert libri["utt_id"].nunique() == 2620
    assert {"azure", "deepspeech", "openai/whisper-large"} <= set(libri["system"])
    assert "dighr-190423" not in set(table["dataset"])
    domains = set(domain_of(table["dataset"], cfg.data.domains))
    assert len(domains) >= 8
    assert {"librispeech", "phone-zh", "afrispeech-clinical", "read-ml"} <= domains


@pytest.mark.shared
def test_lodo_cli_on_thennal10(tmp_path):
    """werest evaluate experiment=lodo on the three thennal10 languages (a cheap real run)."""
    shared_path("thennal10")
    from werest.cli.main import main

    argv = [
        "evaluate",
        "experiment=lodo",
        "model=ridge",
        f"output_dir={tmp_path}",
        "data.sources=[{format: thennal10, paths: [" + str(shared_path("thennal10")) + "]}]",
        "bootstrap.n_resamples=20",
        f"predictions={tmp_path / 'held_out.parquet'}",
    ]
    assert main(argv) == 0  # through the CLI, as a user runs it
    held_out = pd.read_parquet(tmp_path / "held_out.parquet")  # the held-out predictions kept
    assert {"domain", "predicted_wer", "pwer", "word_errors", "ref_words"} <= set(held_out)
    assert set(held_out["domain"]) == {"read-en", "read-ar", "read-ml"}
    domains = pd.read_csv(tmp_path / "lodo_domains.csv")
    cells = pd.read_csv(tmp_path / "lodo_cells.csv")
    assert set(domains["domain"]) == {"read-en", "read-ar", "read-ml"}
    assert len(cells) == 12  # 3 languages x 4 systems
    # The interval holds the point estimate and the bootstrap CI.
    assert (cells["interval_low"] <= cells["awer"]).all()
    assert (cells["interval_high"] >= cells["ci_high"]).all()
    assert (tmp_path / "lodo.md").read_text(encoding="utf-8").count("read-") >= 3
    assert OmegaConf.load(tmp_path / "lodo.config.yaml").protocol == "lodo"
