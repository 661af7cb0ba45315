"""Language-identification metrics by hand: accuracy, confusion, confidence, thresholds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.unit.test_leaderboard import models, toy_table  # noqa: F401  (the fixture)
from werest.partition.leaderboard import LeaderboardOptions, build
from werest.stats import Bootstrap
from werest.text.lid import confusion_matrix, has_lid, lid_report, normalise_language


def lid_table() -> pd.DataFrame:
    # system a: 3 of 4 right; its one error (es heard as en) has the lowest confidence
    return pd.DataFrame(
        {
            "system": ["a"] * 4 + ["b"] * 2,
            "language": ["en", "en", "es", "es", "en", "es"],
            "detected_language": ["<|en|>", "English", "es-MX", "en", "en", None],
            "detected_language_probability": [0.9, 0.8, 0.95, 0.4, 0.7, 0.6],
        }
    )


def test_normalise_language():
    values = pd.Series(["<|en|>", "English", "en-US", "ZH_cn", None, " "])
    assert list(normalise_language(values).astype(object).fillna("-")) == [
        "en", "en", "en", "zh", "-", "-",
    ]  # fmt: skip


def test_accuracy_confusion_confidence_and_thresholds():
    report = lid_report(lid_table(), thresholds=(0.0, 0.5, 0.9))
    acc = report.accuracy.set_index(["system", "language"])
    assert acc.loc[("a", "all"), "accuracy"] == 0.75
    assert acc.loc[("a", "en"), "accuracy"] == 1.0 and acc.loc[("a", "es"), "accuracy"] == 0.5
    assert acc.loc[("b", "all"), "n"] == 1  # the row without a detection is left out
    matrix = confusion_matrix(report.confusion, "a")
    assert matrix.loc["es", "en"] == 1 and matrix.loc["es", "es"] == 1
    assert matrix.loc["en", "en"] == 2 and matrix.to_numpy().sum() == 4
    confidence = report.confidence.set_index("system")
    assert confidence.loc["a", "mean_confidence_right"] == pytest.approx((0.9 + 0.8 + 0.95) / 3)
    assert confidence.loc["a", "mean_confidence_wrong"] == pytest.approx(0.4)
    assert np.isnan(confidence.loc["b", "mean_confidence_wrong"])  # never wrong
    rows = report.thresholds[report.thresholds["system"] == "a"].set_index("threshold")
    assert rows.loc[0.0, "accuracy"] == 0.75 and rows.loc[0.0, "coverage"] == 1.0
    assert rows.loc[0.5, "accuracy"] == 1.0 and rows.loc[0.5, "coverage"] == 0.75
    assert rows.loc[0.9, "coverage"] == 0.5  # 0.9 itself is kept (≥ t)


def test_no_lid_without_both_columns():
    assert not has_lid(lid_table().drop(columns="detected_language"))
    assert has_lid(lid_table())


def test_leaderboard_reports_lid(models):  # noqa: F811
    table = toy_table(24).assign(language="en")
    table["detected_language"] = np.where(table["utt_id"] == "u003", "de", "en")
    result = build(table, models, LeaderboardOptions(bootstrap=Bootstrap(20, 0.95, 0)))
    overall = result.lid.accuracy[result.lid.accuracy["language"] == "all"]
    assert list(overall["accuracy"]) == pytest.approx([23 / 24] * 3)
    from werest.report.webpage import render

    page = render(result)
    assert "Confusion: good" in page and ">Language ID</button>" in page
