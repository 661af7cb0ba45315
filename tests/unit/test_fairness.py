"""The fairness audit on hand-built tables whose answers are derived by hand.

Every utterance has 10 words. With the group as the only regressor, the Poisson MLE of a
group's rate is its corpus WER Σ E / Σ N, and the log-likelihood ratio of the model with vs
without the group is LR = 2 Σ_g E_g · log(r_g / r̂) (r̂ = the pooled rate; the Σ μ terms cancel
because both fits reproduce the total). These closed forms, not statsmodels, give the answers.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chi2

from werest.errors import ConfigError, InputError
from werest.evaluation.fairness import (
    POOLED,
    FairnessSettings,
    audit,
    audit_category,
    audit_frames,
    compare_audits,
    faas,
    penalised,
    prepare_groups,
    raw_scores,
    skipped_message,
)

PLAIN = FairnessSettings(categories=("gender",), min_group_size=1, dispersion="none")


def utterances(groups: dict[str, list[float]], category: str = "gender") -> pd.DataFrame:
    """Rows of 10 words each; ``groups`` maps a group to its utterances' error counts."""
    rows = [
        {category: g, "errors": e, "words": 10.0} for g, errors in groups.items() for e in errors
    ]
    return pd.DataFrame(rows)


def lr_statistic(totals: dict[str, tuple[float, float]]) -> float:
    """2 Σ E_g log(r_g / r̂) from (errors, words) per group."""
    pooled = sum(e for e, _ in totals.values()) / sum(n for _, n in totals.values())
    return 2 * sum(e * math.log((e / n) / pooled) for e, n in totals.values() if e > 0)


def test_raw_scores_are_min_max_scaled():
    scores = raw_scores(pd.Series({"a": 0.1, "b": 0.2, "c": 0.3}))
    assert scores.to_dict() == pytest.approx({"a": 100.0, "b": 50.0, "c": 0.0})


def test_raw_scores_are_100_when_every_group_has_the_same_wer():
    assert raw_scores(pd.Series({"a": 0.2, "b": 0.2})).tolist() == [100.0, 100.0]


def test_penalty_only_below_alpha():
    assert penalised(80.0, 0.01) == pytest.approx(16.0)  # 80 · 0.01/0.05
    assert penalised(80.0, 0.05) == 80.0
    assert penalised(80.0, 0.3) == 80.0


def test_faas_is_ten_log10_of_score_over_fractional_wer():
    assert faas(80.0, 0.1) == pytest.approx(10 * math.log10(800))  # 29.03
    assert faas(50.0, 0.0) == math.inf
    assert math.isnan(faas(float("nan"), 0.1))


def test_group_scores_and_significant_penalty_by_hand():
    # female: 50 utterances × 1 error (WER 0.10); male: 50 × 1.5 errors (WER 0.15, quasi-counts)
    rows = utterances({"female": [1.0] * 50, "male": [1.5] * 50})
    result = audit_category(rows, "gender", PLAIN)
    groups = result.groups.set_index("group")
    assert groups["predicted_wer"].to_dict() == pytest.approx({"female": 0.10, "male": 0.15})
    assert groups["raw_score"].to_dict() == pytest.approx({"female": 100.0, "male": 0.0})
    assert result.category_score == pytest.approx(50.0)  # 0.5·100 + 0.5·0
    lr = lr_statistic({"female": (50, 500), "male": (75, 500)})  # = 5.03
    assert result.statistic == pytest.approx(lr, rel=1e-6)
    p = chi2.sf(lr, 1)  # 0.0249
    assert result.p_value == pytest.approx(p, rel=1e-5)
    assert 0.02 < p < 0.03
    assert result.adjusted_score == pytest.approx(50.0 * p / 0.05, rel=1e-5)


def test_overall_score_weights_and_faas_by_hand():
    rows = utterances({"female": [1.0] * 50, "male": [1.5] * 50})
    rows["age"] = ["young", "old"] * 50  # both age groups: WER 0.125, no disparity
    settings = FairnessSettings(
        categories=("gender", "age"), weights={"age": 3.0}, min_group_size=1, dispersion="none"
    )
    result = audit(rows, settings)
    by_name = {c.category: c for c in result.categories}
    assert by_name["age"].category_score == pytest.approx(100.0)
    assert by_name["age"].p_value == pytest.approx(1.0)
    gender = 50.0 * chi2.sf(lr_statistic({"f": (50, 500), "m": (75, 500)}), 1) / 0.05
    overall = (1 * gender + 3 * 100.0) / 4
    assert result.overall_score == pytest.approx(overall, rel=1e-5)
    assert result.wer == pytest.approx(125 / 1000)
    assert result.faas == pytest.approx(10 * math.log10(overall / 0.125), rel=1e-6)


def test_pearson_dispersion_divides_the_likelihood_ratio():
    # A: errors 0,0,0,4 ×12 (μ = 1; Pearson terms 1,1,1,9); B: 0,3 ×25 (μ = 1.5; each 1.5)
    rows = utterances({"a": [0.0, 0.0, 0.0, 4.0] * 12, "b": [0.0, 3.0] * 25})
    phi = (12 * (1 + 1 + 1 + 9) + 50 * (2.25 / 1.5)) / (98 - 2)  # X² / df = 2.28
    scaled = FairnessSettings(categories=("gender",), min_group_size=1, dispersion="pearson")
    result = audit_category(rows, "gender", scaled)
    lr = lr_statistic({"a": (48, 480), "b": (75, 500)})
    assert result.statistic == pytest.approx(lr / phi, rel=1e-6)
    assert result.p_value == pytest.approx(chi2.sf(lr / phi, 1), rel=1e-5)
    assert audit_category(rows, "gender", PLAIN).statistic == pytest.approx(lr, rel=1e-6)


def test_a_group_with_zero_errors_gets_wer_zero_and_full_score():
    rows = utterances({"a": [0.0] * 40, "b": [2.0] * 40})
    result = audit_category(rows, "gender", PLAIN)
    groups = result.groups.set_index("group")
    assert groups.loc["a", "predicted_wer"] < 1e-6
    assert groups.loc["b", "predicted_wer"] == pytest.approx(0.2, rel=1e-6)
    assert groups["raw_score"].to_dict() == pytest.approx({"a": 100.0, "b": 0.0})
    assert result.p_value < 1e-10


def test_equal_wer_everywhere_scores_100_without_penalty():
    rows = utterances({"a": [1.0] * 30, "b": [1.0] * 60})
    result = audit_category(rows, "gender", PLAIN)
    assert result.groups["raw_score"].tolist() == [100.0, 100.0]
    assert result.category_score == pytest.approx(100.0)
    assert result.p_value == pytest.approx(1.0)
    assert result.adjusted_score == pytest.approx(100.0)


def test_no_errors_at_all_scores_100_with_p_one():
    result = audit_category(utterances({"a": [0.0] * 5, "b": [0.0] * 5}), "gender", PLAIN)
    assert result.category_score == 100.0 and result.p_value == 1.0


def test_one_group_only_is_reported_but_not_audited():
    result = audit(utterances({"female": [1.0] * 20}), PLAIN)
    (category,) = result.categories
    assert not category.audited and "one group" in category.note
    assert category.category_score == 100.0
    assert math.isnan(result.overall_score) and math.isnan(result.faas)
    assert result.wer == pytest.approx(0.1)


def test_small_groups_are_pooled_or_dropped():
    values = pd.Series(["a"] * 50 + ["b"] * 10 + ["c"] * 25 + [None] * 3)
    pooled = prepare_groups(values, 30, "pool")
    assert pooled.value_counts().to_dict() == {"a": 50, POOLED: 35}
    assert pooled.isna().sum() == 3
    dropped = prepare_groups(values, 30, "drop")
    assert dropped.value_counts().to_dict() == {"a": 50}
    # a pool still below the minimum is dropped as well
    too_small = prepare_groups(pd.Series(["a"] * 50 + ["b"] * 10), 30, "pool")
    assert too_small.value_counts().to_dict() == {"a": 50}


def test_pooling_leaving_one_group_means_not_audited():
    rows = utterances({"a": [1.0] * 40, "b": [3.0] * 5})
    settings = FairnessSettings(categories=("gender",), min_group_size=30)
    result = audit(rows, settings)
    assert not result.categories[0].audited
    assert result.categories[0].groups["group"].tolist() == ["a"]


def test_a_category_without_a_group_of_min_group_size_is_skipped():
    """No group (nor their pool) reaches min_group_size: the category is not audited but
    named in ``skipped`` with its largest group; the audit's tables are empty, not an error."""
    rows = utterances({"a": [1.0] * 16, "b": [2.0] * 8})
    settings = FairnessSettings(categories=("gender",), min_group_size=30)
    result = audit(rows, settings)
    assert result.categories == [] and result.skipped == {"gender": 16}
    assert math.isnan(result.overall_score)
    assert skipped_message("gender", 16, settings) == (
        "the fairness audit of 'gender' is skipped: no group reached fairness.min_group_size "
        "(30 utterances; the largest has 16); lower fairness.min_group_size to audit smaller "
        "groups"
    )
    groups, categories = audit_frames(result, "est")
    assert groups.empty and {"group", "category", "source"} <= set(groups.columns)
    assert categories.empty and {"category", "note", "source"} <= set(categories.columns)
    # a category without values is not "skipped": there was nothing to audit
    unknown = rows.assign(gender=None, age=["x"] * 24)
    both = FairnessSettings(categories=("gender", "age"), min_group_size=30)
    assert audit(unknown, both).skipped == {"age": 24}


def test_covariate_standardisation_recovers_group_rates_when_balanced():
    # log(duration) varies within each group the same way: group rates stay 0.1 and 0.2
    rows = utterances({"a": [1.0, 1.0] * 20, "b": [2.0, 2.0] * 20})
    rows["duration"] = [2.0, 4.0] * 40
    result = audit_category(rows, "gender", PLAIN)
    assert result.note == "covariates: duration"
    rates = result.groups.set_index("group")["predicted_wer"]
    assert rates.to_dict() == pytest.approx({"a": 0.1, "b": 0.2}, rel=1e-6)


def test_speaker_clusters_make_the_test_cluster_robust_and_more_cautious():
    # group b's higher WER comes from one of its four speakers: clustering must temper it
    rates = {"a": [1, 1, 1, 1], "b": [1, 1, 1, 5]}
    rows = []
    for group, per_speaker in rates.items():
        for s, errors in enumerate(per_speaker):
            for u in range(25):
                rows.append(
                    {
                        "gender": group,
                        "speaker": f"{group}{s}",
                        "words": 10.0,
                        "errors": float(errors + (u % 2)),
                    }
                )
    frame = pd.DataFrame(rows)
    settings = FairnessSettings(categories=("gender",), min_group_size=1, dispersion="none")
    clustered = audit_category(frame, "gender", settings)
    independent = audit_category(frame.drop(columns="speaker"), "gender", settings)
    assert "cluster-robust" in clustered.test and independent.test == "LRT"
    assert independent.p_value < 1e-6
    assert clustered.p_value > 100 * independent.p_value
    # the point estimates are the same GLM's
    assert np.allclose(clustered.groups["predicted_wer"], independent.groups["predicted_wer"])


def test_comparison_names_what_differs():
    true = audit(utterances({"female": [1.0] * 50, "male": [1.5] * 50}), PLAIN)
    estimated = audit(utterances({"female": [1.5] * 50, "male": [1.45] * 50}), PLAIN)
    row = compare_audits(true, estimated).iloc[0]
    assert row["true_worst"] == "male" and row["est_worst"] == "female"
    assert "significance" in row["disagreement"] and "worst group" in row["disagreement"]
    same = compare_audits(true, true).iloc[0]
    assert same["disagreement"] == ""


def test_bad_settings_and_inputs_are_user_errors():
    with pytest.raises(ConfigError, match="small_groups"):
        FairnessSettings(small_groups="merge")
    with pytest.raises(ConfigError, match="alpha"):
        FairnessSettings(alpha=0)
    with pytest.raises(InputError, match="no demographic column"):
        audit(utterances({"a": [1.0]}, category="region"), PLAIN)
    with pytest.raises(InputError, match="errors"):
        audit(pd.DataFrame({"gender": ["a"], "words": [1.0]}), PLAIN)


def test_a_category_the_user_names_must_be_a_column():
    columns = ["dataset", "utt_id", "system", "hypothesis", "gender"]
    FairnessSettings().check_columns(columns[:4])  # the default ones: audited where present
    FairnessSettings(categories=["gender"]).check_columns(columns)
    with pytest.raises(ConfigError) as error:
        FairnessSettings(categories=["gender", "dialect"]).check_columns(columns)
    assert str(error.value) == (
        "fairness.categories: the input has no column 'dialect' (its columns: dataset, utt_id, "
        "system, hypothesis, gender); name demographic columns it has, or leave "
        "fairness.categories unset"
    )
