"""Ranking, proxy choice and agreement features on hand-built tables and on real data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from werest.errors import ConfigError, InputError
from werest.features.agreement import AGREEMENT_FEATURES, STATUS_NO_PROXY, agreement_features
from werest.features.proxy import Ranking, choose_proxies, rank_systems
from werest.ingest.table import validate_table
from werest.text import Normaliser
from werest.text.scoring import corpus_scores, score_utterances


def _table(rows):
    return validate_table(
        pd.DataFrame(rows, columns=["dataset", "utt_id", "system", "hypothesis", "reference"])
    )


# Three systems on two datasets. Reference words: d1 = 4 + 2, d2 = 5.
TABLE = _table(
    [
        ("d1", "u1", "good", "the cat sat down", "the cat sat down"),
        ("d1", "u1", "fair", "the cat sat", "the cat sat down"),
        ("d1", "u1", "poor", "a cat", "the cat sat down"),
        ("d1", "u2", "good", "hello there", "hello there"),
        ("d1", "u2", "poor", "", "hello there"),  # empty: ran, returned nothing
        ("d2", "u3", "fair", "we will see you soon", "we will see you soon"),
        ("d2", "u3", "good", "we will see you", "we will see you soon"),
        ("d2", "u3", "poor", "we would see", "we will see you soon"),
    ]
)


def test_corpus_scores_by_hand():
    scores = corpus_scores(score_utterances(TABLE)).set_index(["dataset", "system"])
    # d1: good 0/6; fair u1 1 deletion / 4 words (no u2 row); poor u1 the->a + 2 del = 3,
    # u2 2 deletions -> 5/6
    assert scores.loc[("d1", "good"), "wer"] == 0
    assert scores.loc[("d1", "fair"), "wer"] == pytest.approx(1 / 4)
    assert scores.loc[("d1", "poor"), "wer"] == pytest.approx(5 / 6)
    assert scores.loc[("d1", "poor"), "empty_hypotheses"] == 1
    assert scores.loc[("d2", "good"), "wer"] == pytest.approx(1 / 5)
    assert scores.loc[("d2", "poor"), "wer"] == pytest.approx(3 / 5)  # will->would, 2 deletions


def test_ranking_is_macro_average_over_datasets():
    ranking = rank_systems(corpus_scores(score_utterances(TABLE)))
    # good: (0 + 0.2)/2 = 0.1; fair: (0.25 + 0)/2 = 0.125; poor: (5/6 + 3/5)/2
    assert ranking.systems == ["good", "fair", "poor"]
    assert ranking.macro_wer["fair"] == pytest.approx(0.125)
    assert ranking.datasets["good"] == ["d1", "d2"]


def test_ranking_round_trips_and_refuses_junk(tmp_path):
    ranking = rank_systems(corpus_scores(score_utterances(TABLE)))
    assert Ranking.load(ranking.save(tmp_path / "r.json")) == ranking
    (tmp_path / "junk.json").write_text('{"a": 1}')
    with pytest.raises(InputError, match="not a werest ranking"):
        Ranking.load(tmp_path / "junk.json")


def test_proxy_is_best_ranked_other_system_with_a_hypothesis():
    proxies = choose_proxies(TABLE, Ranking.from_order(["good", "fair", "poor"])).set_index(
        ["dataset", "utt_id", "system"]
    )["proxy"]
    assert proxies[("d1", "u1", "good")] == "fair"  # best other than itself
    assert proxies[("d1", "u1", "fair")] == "good"
    assert proxies[("d1", "u2", "poor")] == "good"  # fair did not run on u2
    assert proxies[("d1", "u2", "good")] == "poor"  # only poor is left
    assert proxies[("d2", "u3", "poor")] == "good"


def test_explicit_proxy_and_its_errors():
    proxies = choose_proxies(TABLE, None, targets=["good", "poor"], proxy="fair")
    assert set(proxies["proxy"].dropna()) == {"fair"}
    assert proxies.loc[proxies["utt_id"] == "u2", "proxy"].isna().all()  # fair has no u2
    with pytest.raises(ConfigError, match="cannot be its own proxy"):
        choose_proxies(TABLE, None, targets=["fair"], proxy="fair")
    with pytest.raises(ConfigError, match="proxy system 'nobody'"):
        choose_proxies(TABLE, None, targets=["good"], proxy="nobody")
    with pytest.raises(ConfigError, match="target system 'nobody'"):
        choose_proxies(TABLE, Ranking.from_order(["good"]), targets=["nobody"])


def test_unranked_systems_come_last_by_name():
    proxies = choose_proxies(TABLE, Ranking.from_order(["poor"])).set_index(
        ["dataset", "utt_id", "system"]
    )
    assert proxies.loc[("d1", "u1", "good"), "proxy"] == "poor"
    assert proxies.loc[("d1", "u1", "poor"), "proxy"] == "fair"  # fair < good by name


def test_agreement_features_by_hand():
    proxies = choose_proxies(TABLE, Ranking.from_order(["good", "fair", "poor"]))
    features = agreement_features(TABLE, proxies).set_index(["dataset", "utt_id", "system"])
    assert "reference" not in features.columns
    poor_u1 = features.loc[("d1", "u1", "poor")]  # vs good "the cat sat down"
    assert poor_u1["proxy"] == "good"
    assert (poor_u1["pwer_sub"], poor_u1["pwer_del"], poor_u1["pwer_ins"]) == (1, 2, 0)
    assert poor_u1["pwer"] == pytest.approx(3 / 4)
    assert (poor_u1["hyp_words"], poor_u1["proxy_words"]) == (2, 4)
    assert (poor_u1["hyp_chars"], poor_u1["proxy_chars"]) == (5, 16)
    # good on u2: its proxy is poor's empty hypothesis -> denominator 1, pWER = 2 words
    good_u2 = features.loc[("d1", "u2", "good")]
    assert good_u2["pwer"] == 2 and good_u2["pwer_ins"] == 2 and good_u2["proxy_words"] == 0
    assert (features["status"] == "ok").all()


def test_rows_without_a_proxy_get_a_status_and_nan_features():
    lonely = pd.concat([TABLE, _table([("d3", "u9", "good", "alone", None)])], ignore_index=True)
    features = agreement_features(
        lonely, choose_proxies(lonely, Ranking.from_order(["good", "fair", "poor"]))
    )
    row = features[features["utt_id"] == "u9"].iloc[0]
    assert row["status"] == STATUS_NO_PROXY and pd.isna(row["proxy"])
    assert all(np.isnan(row[name]) for name in AGREEMENT_FEATURES)


@pytest.mark.shared
def test_librispeech_corpus_wer_matches_an_independent_jiwer_computation(dighr_table):
    """DeepSpeech is the best of the four on LibriSpeech test-clean at about 8-9 % WER."""
    import jiwer
    from whisper_normalizer.english import EnglishTextNormalizer

    from tests.conftest import shared_path

    folder = shared_path("dighr", "en", "190423")
    raw_refs = pd.read_csv(folder / "actual.csv", dtype=str, keep_default_na=False)
    refs = dict(
        zip(
            raw_refs["path"].str.rsplit("/", n=1).str[-1].str.split(".").str[0],
            raw_refs["sentence"],
            strict=True,
        )
    )
    normalise = EnglishTextNormalizer()
    scores = corpus_scores(score_utterances(dighr_table)).set_index(["dataset", "system"])
    expected = {}
    for system in ["azure", "deepspeech", "google", "watson"]:
        raw = pd.read_csv(folder / f"{system}.csv", dtype=str, keep_default_na=False)
        raw = raw[raw["files"].str.strip() != ""]
        ids = raw["files"].str.rsplit("/", n=1).str[-1].str.split(".").str[0]
        pairs = [
            (normalise(refs[i]), normalise(h))
            for i, h in zip(ids, raw["transcription_en-US"], strict=True)
        ]
        expected[system] = jiwer.wer([r for r, _ in pairs], [h for _, h in pairs])
        assert scores.loc[("dighr-190423", system), "wer"] == pytest.approx(expected[system])
    assert min(expected, key=expected.get) == "deepspeech"
    assert 0.08 <= expected["deepspeech"] <= 0.09


def test_consensus_and_proxy_quality_features_by_hand():
    proxies = choose_proxies(TABLE, Ranking.from_order(["good", "fair", "poor"]))
    row = (
        agreement_features(TABLE, proxies)
        .set_index(["dataset", "utt_id", "system"])
        .loc[("d1", "u1", "poor")]
    )
    # poor "a cat" vs good "the cat sat down": 3/4; vs fair "the cat sat": 2/3
    assert row["n_others"] == 2
    assert row["pwer_mean"] == pytest.approx((3 / 4 + 2 / 3) / 2)
    assert (row["pwer_min"], row["pwer_max"]) == (pytest.approx(2 / 3), 0.75)
    assert row["est_ref_words"] == 3.5  # median of 4 and 3 words
    # the proxy (good) against the remaining system (fair), not the target: 1 insertion / 3
    assert row["proxy_pwer_others"] == pytest.approx(1 / 3)
    assert row["len_ratio"] == pytest.approx(2 / 4)
    assert row["len_ratio_others"] == pytest.approx(2 / 3.5)
    assert row["proxy_len_ratio"] == pytest.approx(4 / 3.5)
    # with only two systems on u2 there is no third system to judge the proxy by
    lone = agreement_features(TABLE, proxies).set_index(["dataset", "utt_id", "system"])
    assert np.isnan(lone.loc[("d1", "u2", "good"), "proxy_pwer_others"])


def test_two_system_view_keeps_only_the_target_and_its_proxy():
    from werest.features.agreement import two_system_view
    from werest.model.training import training_frame

    proxies = choose_proxies(TABLE, Ranking.from_order(["good", "fair", "poor"]))
    features = agreement_features(TABLE, proxies).set_index(["dataset", "utt_id", "system"])
    row = two_system_view(features).loc[("d1", "u1", "poor")]
    # poor vs its proxy good: 3/4 is now every consensus statistic; no third system remains
    assert row["pwer_mean"] == row["pwer_min"] == row["pwer_max"] == pytest.approx(3 / 4)
    assert (row["n_others"], row["est_ref_words"], row["proxy_len_ratio"]) == (1, 4, 1)
    assert np.isnan(row["proxy_pwer_others"])
    frame = training_frame(
        TABLE,
        rank_systems(corpus_scores(score_utterances(TABLE))),
        normaliser=Normaliser("whisper_english"),
        two_system_views=True,
    )
    several = int((frame.loc[frame["view"] == "all", "n_others"] > 1).sum())
    assert (frame["view"] == "pair").sum() == several > 0
