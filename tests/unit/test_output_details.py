"""What the outputs say, in detail: counts agree with their nouns, a column's numbers have its
decimals, Cohen's d has the sign of Δ, and a system that returned nothing is warned about."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.helpers import run_cli
from werest.cli.main import _wrote
from werest.demo import demo_table_path
from werest.estimation.guards import utterance_counts, warnings_from_counts
from werest.formatting import number, p_value, plural

DEMO = demo_table_path()


def test_counts_agree_with_their_nouns():
    assert plural(1, "dataset") == "1 dataset"
    assert plural(2, "dataset") == "2 datasets"
    assert plural(0, "system") == "0 systems"
    paths = [Path("a/x.csv"), Path("a/y.csv"), Path("a/z.csv"), Path("a/w.csv"), Path("b/v.csv")]
    assert _wrote(paths) == "wrote 4 files in a; 1 file in b"


@pytest.mark.parametrize(
    ("value", "digits", "shown"),
    [(0.00075, 2, "0.00"), (-0.0004, 2, "0.00"), (12.3456, 2, "12.35"), (-1.5, 1, "-1.5")],
)
def test_a_number_has_its_columns_decimals(value, digits, shown):
    assert number(value, digits) == shown


def test_a_tiny_p_value_is_below_the_floor():
    assert p_value(0.00075) == "< 0.001"
    assert p_value(0.0123) == "0.012"
    assert p_value(float("nan")) == ""


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    out = tmp_path_factory.mktemp("board")
    from werest.cli.main import main

    assert main(["leaderboard", f"input={DEMO}", f"output_dir={out}"]) == 0
    return out


def test_cohens_d_has_the_sign_of_the_difference(board):
    pairs = pd.read_csv(board / "pairs.csv")
    for kind in ("est", "true"):
        # d compares mean utterance WERs, Δ corpus WERs: on a clear difference they agree
        d, delta = pairs[f"{kind}_cohens_d"], pairs[f"{kind}_delta"]
        both = d.notna() & (delta.abs() > 0.05)
        assert both.any()
        assert (np.sign(d[both]) == np.sign(delta[both])).all(), pairs
    report = (board / "leaderboard.md").read_text(encoding="utf-8")
    assert "true d (A − B)" in report and "true Δ = A − B pts" in report
    assert "the sign of Δ (negative = A lower" in report


def test_the_console_columns_keep_their_decimals(board, capsys):
    from werest.report.leaderboard_report import pairs_view

    pairs = pd.read_csv(board / "pairs.csv").assign(true_delta=0.0000075, true_p_value=0.00075)
    view = pairs_view(pairs)
    assert set(view["true Δ = A − B pts"]) == {"0.00"}
    assert set(view["true p"]) == {"< 0.001"}


def silent_table() -> pd.DataFrame:
    table = pd.read_csv(DEMO, keep_default_na=False)
    table.loc[table["system"] == "edge-kws", "hypothesis"] = ""
    return table


def test_utterance_counts_count_empty_hypotheses():
    counts = utterance_counts(silent_table()).set_index(["dataset", "system"])
    silent = counts.xs("edge-kws", level="system")
    others = counts.drop(index="edge-kws", level="system")
    assert (silent["empty"] == silent["n"]).all()
    assert (others["empty"] < others["n"]).all()
    assert others["empty"].sum() == 1  # the demo's one empty large-v3 output


def test_a_system_that_returned_nothing_is_warned_about():
    table = silent_table()
    rows = table[["dataset", "system"]].drop_duplicates()
    rows = rows.assign(status="ok", proxy="base", proxy_words=5, est_ref_words=5)
    pairs = pd.DataFrame(columns=["dataset", "system_a", "system_b"])
    warnings = warnings_from_counts(utterance_counts(table), rows, pairs, [])
    silent = [w for w in warnings if "returned nothing on every utterance" in w["message"]]
    assert {(w["dataset"], tuple(w["systems"])) for w in silent} == {
        ("demo-calls", ("edge-kws",)),
        ("demo-meetings", ("edge-kws",)),
    }


def test_estimate_shows_the_silent_system_warning(capsys, tmp_path):
    path = tmp_path / "t.csv"
    silent_table().to_csv(path, index=False)
    status, out, err = run_cli(capsys, "estimate", f"input={path}", f"output_dir={tmp_path / 'o'}")
    assert status == 0, err
    assert "system edge-kws returned nothing on every utterance (6 utterances" in out
