"""Zero-label differences: intervals calibrated leave one domain out on differences, and a
verdict only where they exclude 0 (issue 34, deliverable 2)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tests.helpers import run_cli
from werest.demo import demo_table_path
from werest.estimation.estimate import zero_label_pairs
from werest.evaluation.lodo import cross_conformal_pairs, winner_overall, winner_summary
from werest.model.intervals import (
    PAIR_OFFSET,
    calibration_from_cells,
    cell_pairs,
    pair_calibration,
    pair_interval,
)
from werest.report.estimate_report import format_pairs


def _cells(rows):
    return pd.DataFrame(rows, columns=["domain", "dataset", "system", "wer", "awer", "pwer"])


# Two domains of one dataset each. Domain a: x (wer .10, awer .12), y (.20, .15);
# domain b: u (.30, .30), v (.40, .50), w (.50, .45).
CELLS = _cells(
    [
        ("a", "da", "x", 0.10, 0.12, 0.13),
        ("a", "da", "y", 0.20, 0.15, 0.14),
        ("b", "db", "u", 0.30, 0.30, 0.31),
        ("b", "db", "v", 0.40, 0.50, 0.45),
        ("b", "db", "w", 0.50, 0.45, 0.60),
    ]
)


def test_cell_pairs_scores_by_hand():
    pairs = cell_pairs(CELLS).set_index(["system_a", "system_b"])
    # x − y: true −0.10, estimated −0.03; scale 0.12 + 0.15 + 0.01 = 0.28 -> score 0.25
    assert pairs.loc[("x", "y"), "true_delta"] == pytest.approx(-0.10)
    assert pairs.loc[("x", "y"), "est_delta"] == pytest.approx(-0.03)
    assert pairs.loc[("x", "y"), "scale"] == pytest.approx(0.28)
    assert pairs.loc[("x", "y"), "score"] == pytest.approx(0.25)
    # u − v: true −0.10, est −0.20, scale 0.81 -> 0.1/0.81; v − w: true −0.10, est +0.05,
    # scale 0.96 -> 0.15/0.96; u − w: true −0.20, est −0.15, scale 0.76 -> 0.05/0.76
    assert pairs.loc[("u", "v"), "score"] == pytest.approx(0.1 / 0.81)
    assert pairs.loc[("v", "w"), "score"] == pytest.approx(0.15 / 0.96)
    assert pairs.loc[("u", "w"), "score"] == pytest.approx(0.05 / 0.76)
    assert len(pairs) == 4  # no pair across datasets


def test_pair_calibration_weighs_domains_equally():
    # scores: a: 0.25 (weight 1); b: 0.0658, 0.1235, 0.1563 (weight 1/3 each). Level 0.5:
    # target share 0.5 * 5/4 = 0.625; sorted cumulative shares 1/6, 2/6, 3/6, 1 -> 0.25
    assert pair_calibration(CELLS, 0.5)["quantile"] == pytest.approx(0.25)
    # level 0.3: target 0.375 -> the third value, 0.15/0.96
    assert pair_calibration(CELLS, 0.3)["quantile"] == pytest.approx(0.15 / 0.96)
    # the model's calibration carries it
    assert calibration_from_cells(CELLS)["pair"]["pairs"] == 4
    # cells without systems (an old cells file): no pairs, no quantile, no error
    empty = pair_calibration(CELLS[["domain", "wer", "awer"]], 0.95)
    assert empty["pairs"] == 0 and np.isnan(empty["quantile"])


def test_pair_interval_and_an_old_model_without_one():
    calibration = {"pair": {"quantile": 0.5, "offset": PAIR_OFFSET}}
    low, high = pair_interval(-0.20, 0.10, 0.30, calibration)
    # half-width 0.5 * (0.10 + 0.30 + 0.01) = 0.205
    assert (float(low), float(high)) == pytest.approx((-0.405, 0.005))
    low, high = pair_interval(-0.20, 0.10, 0.30, {"level": 0.95})
    assert np.isnan(low) and np.isnan(high)


def _record(system, wer_est, true=None):
    record = {"dataset": "d", "system": system, "estimated_wer": wer_est}
    if true is not None:
        record["wer"] = true
    return record


def test_zero_label_pairs_say_better_only_where_the_interval_excludes_zero():
    records = [_record("b", 0.30, 0.28), _record("a", 0.10, 0.12), _record("c", 0.60, 0.55)]
    records.append({"dataset": "d", "system": "none", "estimated_wer": None})
    pairs = zero_label_pairs(records, {"pair": {"quantile": 0.5, "offset": PAIR_OFFSET}})
    pairs = pairs.set_index(["system_a", "system_b"])
    assert list(pairs.index) == [("a", "b"), ("a", "c"), ("b", "c")]  # estimated order
    # a − b: −0.20 ± 0.205 -> contains 0; a − c: −0.50 ± 0.355 -> A better;
    # b − c: −0.30 ± 0.455 -> contains 0
    assert pairs.loc[("a", "b"), "verdict"] == "not separable"
    assert pairs.loc[("a", "c"), "verdict"] == "A better"
    assert pairs.loc[("a", "c"), "high"] == pytest.approx(-0.145)
    assert pairs.loc[("b", "c"), "verdict"] == "not separable"
    assert pairs.loc[("a", "c"), "true_difference"] == pytest.approx(-0.43)
    text = format_pairs(pairs.reset_index())
    assert "d: a − b -20.00 [-40.50, +0.50]: not separable" in text
    assert "d: b − c -30.00" in text and "a is better" not in text  # neighbours only
    old = zero_label_pairs(records, {"level": 0.95})
    assert set(old["verdict"]) == {"no calibration"}


def test_cross_conformal_pairs_and_the_winner_table():
    cells = pd.concat(
        [
            CELLS,
            _cells([("c", "dc", s, t, e, e) for s, t, e in [("p", 0.1, 0.3), ("q", 0.2, 0.2)]]),
        ]
    )
    pairs = cross_conformal_pairs(cells, 0.5).set_index(["system_a", "system_b"])
    # domain a is calibrated on b's and c's pairs only: scores b 0.0658, 0.1235, 0.1563 (1/3
    # each) and c: |−0.1 − 0.1| / 0.51 = 0.392 (1); level 0.5 -> 0.625 of the mass -> 0.392
    q = 0.2 / 0.51
    assert pairs.loc[("x", "y"), "low"] == pytest.approx(-0.03 - q * 0.28)
    assert bool(pairs.loc[("x", "y"), "covered"])
    winners = winner_summary(cells, pairs.reset_index())
    assert list(winners["dataset"]) == ["db"]  # the one dataset with 3 systems
    row = winners.iloc[0]
    # true best u (0.30) estimated at 0.30, first; u, v in order; gap 0.10 true, 0.20 estimated
    assert row["best"] == "u" and row["best_error"] == pytest.approx(0.0)
    assert bool(row["first"]) and bool(row["top_two_order"])
    assert row["true_gap"] == pytest.approx(0.10) and row["est_gap"] == pytest.approx(0.20)
    assert bool(row["first_raw"])  # raw pWER: u's 0.31 is the lowest too
    figures = winner_overall(winners, pairs.reset_index())
    assert figures["datasets"] == 1 and figures["pairs"] == 5


def test_estimate_writes_pairs_and_prints_neighbours(tmp_path, capsys):
    status, out, _ = run_cli(
        capsys, "estimate", f"input={demo_table_path()}", f"output_dir={tmp_path}"
    )
    assert status == 0
    pairs = pd.read_csv(tmp_path / "pairs.csv")
    summary = json.loads((tmp_path / "summary.json").read_text())
    systems = {(r["dataset"], r["system"]) for r in summary}
    per_dataset = pd.Series([d for d, _ in systems]).value_counts()
    assert len(pairs) == int((per_dataset * (per_dataset - 1) / 2).sum())
    assert set(pairs["verdict"]) <= {"A better", "B better", "not separable"}
    # a verdict exactly where the interval excludes 0
    excludes = (pairs["low"] > 0) | (pairs["high"] < 0)
    assert ((pairs["verdict"] != "not separable") == excludes).all()
    assert "Neighbours (A − B in WER points" in out
    assert " p " not in out.split("Neighbours", 1)[1]


def test_leaderboard_shows_the_verdict_not_the_bootstrap_p(tmp_path, capsys):
    status, out, _ = run_cli(
        capsys, "leaderboard", f"input={demo_table_path()}", f"output_dir={tmp_path}"
    )
    assert status == 0
    pairs = pd.read_csv(tmp_path / "pairs.csv")
    assert {"est_diff", "est_low", "est_high", "est_verdict"} <= set(pairs.columns)
    excludes = (pairs["est_low"] > 0) | (pairs["est_high"] < 0)
    assert ((pairs["est_verdict"] != "not separable") == excludes).all()
    markdown = (tmp_path / "leaderboard.md").read_text()
    page = (tmp_path / "leaderboard.html").read_text()
    for text in (out, markdown, page):
        assert "est. p" not in text
    assert "calibrated leave one domain out" in out
