"""The four-case harness (werest.evaluation.four_cases) on a small table whose answers are worked
out by hand.

Systems: ``perfect`` (hypothesis = reference on B), the source ``src`` and the target ``tgt``;
``newbie`` exists only in the wild dataset ``w1`` (and is perfect there), ``w2`` has no ``src``.
Every reference has four words, so utterance WERs are quarters. On B, ``perfect`` ranks first
and is everyone's proxy, so pWER = WER there; a LinearRegression on [pwer] trained on such
rows is the identity, which makes the learned method's predictions equal pWER everywhere.

Ranking on B only: perfect < src < tgt (newbie unseen, ranked last). Had w1 reached the
ranking, newbie (WER 0 there) would rank first and become src's and tgt's proxy on w1.

Hand-worked values (fractions):

* src training labels per fold (mean = train_mean): b1 (0, 0.25), b2 (0.5, 0), b3 (0.25,
  0.75); fold b1 trains on b2+b3: 0.375; fold b2 on b1+b3: 0.3125; fold b3 on b1+b2: 0.1875.
* w1, src (proxy tgt): WER 0 and 0.5 (corpus 2/8 = 0.25); pWER vs tgt 1/4 and 2/4; raw_pwer
  MAE 0.125, corpus pWER 3/8; the proxy (tgt) has 4 and 4 words, so the learned
  aWER = (0.25·4 + 0.5·4)/8 = 0.375.
* w1, tgt (proxy src): WER 0.25 and 0 (corpus 1/8); pWER vs src 1/4 and 2 insertions / 2
  proxy words = 1.0; corpus pWER (1+2)/(4+2) = 0.5; the proxy (src) has 4 and 2 words, so the
  learned aWER = (0.25·4 + 1.0·2)/6 = 0.5, the corpus pWER (weighting by the other systems'
  median length, n̂ = 4 and 3, would give 4/7).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from omegaconf import OmegaConf

from werest.errors import ConfigError
from werest.evaluation.four_cases import (
    CSV_COLUMNS,
    MEAN_FOLD,
    FourCases,
    Method,
    evaluate_four_cases,
)
from werest.model.settings import TrainingOptions
from werest.report.reports import bar_cells, write_four_case_reports
from werest.text import Normaliser

REF_1 = "alpha bravo charlie delta"
REF_2 = "echo foxtrot golf hotel"

# (dataset, utt_id, system, hypothesis, reference)
ROWS = [
    # b1: src WER 0, 0.25; tgt 0.5, 0.5
    ("b1", "u1", "perfect", REF_1, REF_1),
    ("b1", "u1", "src", REF_1, REF_1),
    ("b1", "u1", "tgt", "alpha bravo xray yankee", REF_1),
    ("b1", "u2", "perfect", REF_2, REF_2),
    ("b1", "u2", "src", "echo foxtrot golf", REF_2),
    ("b1", "u2", "tgt", "echo foxtrot xray yankee", REF_2),
    # b2: src 0.5, 0; tgt 0.5, 0.5
    ("b2", "u1", "perfect", REF_1, REF_1),
    ("b2", "u1", "src", "alpha bravo", REF_1),
    ("b2", "u1", "tgt", "alpha bravo xray yankee", REF_1),
    ("b2", "u2", "perfect", REF_2, REF_2),
    ("b2", "u2", "src", REF_2, REF_2),
    ("b2", "u2", "tgt", "echo foxtrot xray yankee", REF_2),
    # b3: src 0.25, 0.75; tgt 0.5, 0.5 (tgt is worse than src on average in every fold)
    ("b3", "u1", "perfect", REF_1, REF_1),
    ("b3", "u1", "src", "alpha bravo charlie", REF_1),
    ("b3", "u1", "tgt", "alpha bravo xray yankee", REF_1),
    ("b3", "u2", "perfect", REF_2, REF_2),
    ("b3", "u2", "src", "echo", REF_2),
    ("b3", "u2", "tgt", "echo foxtrot xray yankee", REF_2),
    # w1 (wild, has src): newbie is perfect here and unseen in B
    ("w1", "u1", "src", REF_1, REF_1),
    ("w1", "u1", "tgt", "alpha bravo charlie zulu", REF_1),
    ("w1", "u1", "newbie", REF_1, REF_1),
    ("w1", "u2", "src", "echo foxtrot", REF_2),
    ("w1", "u2", "tgt", REF_2, REF_2),
    ("w1", "u2", "newbie", REF_2, REF_2),
    # w2 (wild, no src): every system is a case-4 target, perfect included
    ("w2", "u1", "perfect", "alpha bravo charlie", REF_1),
    ("w2", "u1", "tgt", REF_1, REF_1),
]
TRAIN_MEAN = {"b1": 0.375, "b2": 0.3125, "b3": 0.1875}


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return pd.DataFrame(ROWS, columns=["dataset", "utt_id", "system", "hypothesis", "reference"])


@pytest.fixture(scope="module")
def protocol() -> FourCases:
    return FourCases("src", ("tgt",), ("b1", "b2", "b3"), ("w1", "w2"))


IDENTITY = OmegaConf.create({"_target_": "sklearn.linear_model.LinearRegression"})
METHODS = [
    Method("werest", "model", "main", ("pwer",), IDENTITY),
    Method("raw_pwer", "raw_pwer", "baseline"),
    Method("train_mean", "train_mean", "baseline"),
]


@pytest.fixture(scope="module")
def result(table, protocol):
    options = TrainingOptions(normaliser=Normaliser("whisper_english"), two_system_views=False)
    return evaluate_four_cases(table, protocol, METHODS, options)


def cell(result, case: int, method: str, fold: str, system: str, dataset: str) -> pd.Series:
    cells = result.cells
    match = cells[
        (cells["case"] == case)
        & (cells["method"] == method)
        & (cells["fold"] == fold)
        & (cells["eval_system"] == system)
        & (cells["dataset"] == dataset)
    ]
    assert len(match) == 1, f"expected one cell, got {len(match)}"
    return match.iloc[0]


def test_rows_land_in_their_case(result):
    cases = set(
        result.predictions[["fold", "case", "dataset", "system"]].itertuples(index=False, name=None)
    )
    expected = set()
    for fold in ("b1", "b2", "b3"):
        expected |= {
            (fold, 1, fold, "src"),
            (fold, 2, fold, "tgt"),  # perfect on the held-out b is neither S nor T: not evaluated
            (fold, 3, "w1", "src"),
            (fold, 4, "w1", "tgt"),
            (fold, 4, "w1", "newbie"),  # never seen in B: an unseen target
            (fold, 4, "w2", "perfect"),  # w2 has no src: all its systems are targets
            (fold, 4, "w2", "tgt"),
        }
    assert cases == expected


def test_unseen_wild_targets_can_be_left_out(protocol):
    strict = FourCases("src", ("tgt",), ("b1", "b2", "b3"), ("w1",), unseen_wild_targets=False)
    systems = {"b1": {"perfect", "src", "tgt"}, "w1": {"src", "tgt", "newbie"}}
    cases = strict.case_of(systems, "b1")
    assert set(cases.itertuples(index=False, name=None)) == {
        ("b1", "src", 1),
        ("b1", "tgt", 2),
        ("w1", "src", 3),
        ("w1", "tgt", 4),
    }


def test_wild_data_never_reaches_the_ranking(result):
    wild = result.predictions[result.predictions["dataset"] == "w1"]
    proxies = wild.groupby("system")["proxy"].unique().map(list).to_dict()
    # With w1 in the ranking, newbie (WER 0 on w1) would be src's and tgt's proxy there.
    assert proxies == {"src": ["tgt"], "tgt": ["src"], "newbie": ["src"]}
    benchmark = result.predictions[result.predictions["dataset"].str.startswith("b")]
    assert set(benchmark["proxy"]) == {"perfect"}


def test_training_uses_only_the_source_rows_of_the_other_benchmarks(result):
    timings = result.timings[result.timings["method"] == "werest"].set_index("fold")
    assert timings["train_rows"].to_dict() == {"b1": 4, "b2": 4, "b3": 4}
    for fold, mean in TRAIN_MEAN.items():
        row = cell(result, 3, "train_mean", fold, "src", "w1")
        assert row["awer"] == pytest.approx(mean)
        assert row["mae"] == pytest.approx((abs(mean - 0) + abs(mean - 0.5)) / 2)


def test_case_1_and_2_metrics(result):
    for fold, (src_wer, mean) in {"b1": (1 / 8, 0.375), "b2": (2 / 8, 0.3125)}.items():
        ours = cell(result, 1, "werest", fold, "src", fold)
        assert ours["n"] == 2
        assert ours["wer"] == pytest.approx(src_wer)
        assert ours["mae"] == pytest.approx(0, abs=1e-9)  # the identity on pWER = WER
        assert ours["awer"] == pytest.approx(src_wer)
        baseline = cell(result, 1, "train_mean", fold, "src", fold)
        assert baseline["abs_corpus_error"] == pytest.approx(abs(mean - src_wer))
        target = cell(result, 2, "raw_pwer", fold, "tgt", fold)
        assert target["wer"] == pytest.approx(0.5)
        assert target["awer"] == pytest.approx(0.5)
        assert target["mae"] == pytest.approx(0)


def test_raw_pwer_is_pwer_and_the_corpus_pwer(result):
    source = cell(result, 3, "raw_pwer", "b1", "src", "w1")
    assert source["wer"] == pytest.approx(0.25)
    assert source["mae"] == pytest.approx(0.125)
    assert source["awer"] == pytest.approx(3 / 8)
    target = cell(result, 4, "raw_pwer", "b2", "tgt", "w1")
    assert target["wer"] == pytest.approx(1 / 8)
    assert target["mae"] == pytest.approx((0 + 1.0) / 2)
    assert target["awer"] == pytest.approx(3 / 6)
    assert target["abs_corpus_error"] == pytest.approx(0.5 - 1 / 8)


def test_learned_corpus_estimate_weights_by_the_proxy_length(result):
    source = cell(result, 3, "werest", "b3", "src", "w1")
    assert source["awer"] == pytest.approx(0.375)
    target = cell(result, 4, "werest", "b3", "tgt", "w1")
    assert target["awer"] == pytest.approx(3 / 6)
    assert target["abs_corpus_error"] == pytest.approx(3 / 6 - 1 / 8)
    assert target["mae"] == pytest.approx((0 + 1.0) / 2)


def test_wild_cells_are_averaged_over_folds(result):
    per_fold = [cell(result, 3, "train_mean", fold, "src", "w1") for fold in TRAIN_MEAN]
    mean = cell(result, 3, "train_mean", MEAN_FOLD, "src", "w1")
    assert mean["awer"] == pytest.approx(sum(TRAIN_MEAN.values()) / 3)
    assert mean["abs_corpus_error"] == pytest.approx(
        sum(row["abs_corpus_error"] for row in per_fold) / 3
    )
    assert not (result.cells["case"].isin([1, 2]) & (result.cells["fold"] == MEAN_FOLD)).any()


def test_ranking_agreement_needs_three_systems(result):
    rankings = result.rankings.set_index(["method", "fold", "dataset"])
    w1 = rankings.loc[("raw_pwer", "b1", "w1")]
    # WER on w1: newbie 0, tgt 0.125, src 0.25
    assert w1["systems_by_wer"] == "newbie < tgt < src"
    assert w1["n_systems"] == 3
    b1 = rankings.loc[("werest", "b1", "b1")]
    assert b1["n_systems"] == 2
    assert pd.isna(b1["spearman"])
    assert "only 2 system(s)" in b1["note"]


def test_reports_write_the_csv_columns_and_bar_cells(result, tmp_path):
    paths = write_four_case_reports(result, None, tmp_path, name="tiny")
    assert [p.name for p in paths] == ["tiny.csv", "tiny.md", "tiny_scatter.png", "tiny_bars.png"]
    written = pd.read_csv(tmp_path / "tiny.csv")
    assert list(written.columns) == CSV_COLUMNS
    assert len(written) == len(result.cells)
    bar = bar_cells(result.cells)
    assert len(bar) == 6  # (src, tgt) x three held-out benchmarks
    # werest MAE 0 vs raw pWER MAE 0 on B: not strictly below, so the bar cell fails
    assert not bar["mae_below_raw"].any()
    assert bar["corpus_within_5"].all()


@pytest.mark.parametrize(
    ("protocol", "fragment"),
    [
        (FourCases("nobody", ("tgt",), ("b1", "b2")), "unknown system 'nobody'"),
        (FourCases("src", ("tgt",), ("b1", "b9")), "unknown dataset 'b9'"),
        (FourCases("newbie", ("tgt",), ("b1", "b2"), ("w1",)), "in no benchmark dataset"),
    ],
)
def test_bad_protocols_are_config_errors(table, protocol, fragment):
    with pytest.raises(ConfigError, match=fragment.replace("(", r"\(")):
        evaluate_four_cases(table, protocol, METHODS)


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        (("src", ("tgt",), ("b1", "b2"), ("b2",)), "'b2' is in benchmark_datasets and"),
        (("src", ("src", "tgt"), ("b1", "b2")), "also in target_systems"),
        (("src", ("tgt",), ("b1",)), "two or more datasets"),
    ],
)
def test_impossible_protocols_fail_when_built(arguments, fragment):
    """A combination no table satisfies fails before any data are read."""
    with pytest.raises(ConfigError, match=fragment):
        FourCases(*arguments)


def test_a_protocol_built_from_config_holds_tuples():
    protocol = FourCases("s", "t", ["b1", "b2"], None, rationale="why")
    assert protocol.target_systems == ("t",)
    assert (protocol.benchmark_datasets, protocol.wild_datasets) == (("b1", "b2"), ())


def test_werest_evaluate_runs_end_to_end(table, tmp_path):
    source = tmp_path / "tiny.csv"
    table.to_csv(source, index=False)
    out = tmp_path / "out"
    script = Path(sys.executable).with_name("werest")
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "werest.cli"]
    result = subprocess.run(
        [
            *command,
            "evaluate",
            "experiment=four_cases",
            f"data.sources=[{{table:'{source}'}}]",
            "cases.source_system=src",
            "cases.target_systems=[tgt]",
            "cases.benchmark_datasets=[b1,b2,b3]",
            "cases.wild_datasets=[w1,w2]",
            "model=ridge",
            "model@ablation.model=ridge",
            "bootstrap.n_resamples=20",
            "n_jobs=1",
            f"output_dir={out}",
            "name=tiny",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    for name in ("tiny.csv", "tiny.md", "tiny_scatter.png", "tiny_bars.png", "tiny.config.yaml"):
        assert (out / name).is_file(), name
    written = pd.read_csv(out / "tiny.csv")
    assert set(CSV_COLUMNS) <= set(written.columns)
    assert set(written["method"]) == {
        "werest",
        "raw_pwer",
        "train_mean",
        "ablation: pwer only",
        "ablation: pcer only",
        "ablation: both",
        "ablation: both + lengths",
        "ablation: full text",
        "ablation: text with counts",
    }
    assert set(written["case"]) == {1, 2, 3, 4}
    assert "## Ablation" in (out / "tiny.md").read_text(encoding="utf-8")
    assert "median |err|" in result.stdout


def test_werest_evaluate_rejects_a_wild_benchmark(table, tmp_path):
    source = tmp_path / "tiny.csv"
    table.to_csv(source, index=False)
    script = Path(sys.executable).with_name("werest")
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "werest.cli"]
    result = subprocess.run(
        [
            *command,
            "evaluate",
            f"data.sources=[{{table:'{source}'}}]",
            "cases.source_system=src",
            "cases.target_systems=[tgt]",
            "cases.benchmark_datasets=[b1,b2]",
            "cases.wild_datasets=[b2]",
            f"output_dir={tmp_path / 'out'}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("werest evaluate: error:"), result.stderr
    assert "'b2' is in benchmark_datasets and wild_datasets" in lines[0]
    assert not (tmp_path / "out").exists()
