"""The few-labels study measures coverage per draw: one labelled sample serves every system of
its dataset, so a draw that misses the tail moves them all together (issue 35)."""

from __future__ import annotations

import pandas as pd
import pytest

from werest.evaluation.few_labels import overall, summarise_draws


def _draws(covered_by_draw: dict[int, list[bool]], domain: str = "d") -> pd.DataFrame:
    rows = []
    for draw, covered in covered_by_draw.items():
        for k, hit in enumerate(covered):
            rows.append(
                {
                    "strategy": "random",
                    "budget": 50,
                    "estimator": "ppi",
                    "method": "t",
                    "domain": domain,
                    "dataset": f"{domain}-set",
                    "draw": draw,
                    "system": f"s{k}",
                    "estimate": 0.10,
                    "low": 0.05,
                    "high": 0.15,
                    "wer": 0.10 if hit else 0.30,  # outside [0.05, 0.15] when not covered
                    "lam": 0.5,
                }
            )
    return pd.DataFrame(rows)


def test_a_draw_holds_when_it_covers_four_systems_in_five():
    # draw 0 covers 5/5, draw 1 4/5 (holds: 0.8), draw 2 3/5 (does not), draw 3 0/5
    draws = _draws(
        {
            0: [True] * 5,
            1: [True, True, True, True, False],
            2: [True, True, True, False, False],
            3: [False] * 5,
        }
    )
    row = summarise_draws(draws).iloc[0]
    assert row["coverage"] == pytest.approx(12 / 20)
    assert row["draws_holding"] == pytest.approx(2 / 4)
    assert row["worst_draw_coverage"] == pytest.approx(0.0)


def test_overall_reports_the_lowest_domain_share_of_draws_holding():
    per_domain = summarise_draws(
        pd.concat(
            [
                _draws({0: [True] * 5, 1: [True] * 5}, "a"),
                _draws({0: [True] * 5, 1: [False] * 5}, "b"),
            ]
        )
    )
    zero = pd.DataFrame(
        {
            "domain": ["a", "b"],
            "system": ["s0", "s0"],
            "awer": [0.1, 0.1],
            "wer": [0.1, 0.2],
            "interval_low": [0.0, 0.0],
            "interval_high": [0.3, 0.3],
            "covered": [True, True],
        }
    )
    table = overall(per_domain, zero)
    ppi = table[table["estimator"] == "ppi"].iloc[0]
    assert ppi["draws_holding"] == pytest.approx((1.0 + 0.5) / 2)
    assert ppi["min_draws_holding"] == pytest.approx(0.5)


def test_the_stress_copy_injects_loops_and_empty_outputs_that_agreement_sees():
    import numpy as np

    from werest.estimation.ppi_frames import DatasetFrame
    from werest.evaluation.few_labels import LOOP_WORDS, stressed_frames

    n, systems = 200, ["a", "b", "c", "d", "e"]
    words = np.full((n, 5), 10.0)
    frame = DatasetFrame(
        dataset="x",
        utterances=pd.Index([f"u{i}" for i in range(n)], name="utt_id"),
        systems=systems,
        pred_errors=np.ones((n, 5)),
        pred_words=words.copy(),
        present=np.ones((n, 5), dtype=bool),
        errors=np.full((n, 5), 2.0),
        words=words.copy(),
    )
    small = DatasetFrame(**{**frame.__dict__, "dataset": "y", "utterances": frame.utterances[:50]})
    stressed = stressed_frames({"x": frame, "y": small}, 0.03, seed=1)
    assert list(stressed) == ["x+stress"]  # fewer than 200 utterances: no stress copy
    copy = stressed["x+stress"]
    looped = copy.errors[:, 0] == 2.0 + LOOP_WORDS  # systems 0 and 4 (one in four) loop
    assert looped.sum() == 6 and (copy.errors[:, 4] == copy.errors[:, 0]).all()
    assert (copy.pred_errors[looped, 0] == 1.0 + LOOP_WORDS).all()  # agreement sees the loop
    emptied = copy.errors[:, 1] == 10.0  # system 1 deletes every reference word
    assert emptied.sum() == 6 and not (looped & emptied).any()
    assert (copy.pred_errors[emptied, 1] == 10.0).all()
    untouched = copy.errors[:, [2, 3]]
    assert (untouched == 2.0).all() and (frame.errors == 2.0).all()  # the original is intact
