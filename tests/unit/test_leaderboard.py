"""werest leaderboard: the statistics by hand, the command end to end, dighr 190301 audits."""

from __future__ import annotations

import html
import math

import numpy as np
import pandas as pd
import pytest

from tests.conftest import shared_path
from tests.helpers import run_cli
from werest.cli.main import main
from werest.errors import ConfigError
from werest.evaluation.fairness import FairnessSettings
from werest.model.files import load_models
from werest.partition.leaderboard import LeaderboardOptions, build
from werest.ranking.leaderboard import select_datasets
from werest.stats import (
    Bootstrap,
    RateSample,
    bootstrap_ci,
    cohens_d,
    describe,
    latency,
    macro_bootstrap,
    paired_bootstrap,
    rank_agreement,
)

# --------------------------------------------------------------------------- statistics


def test_describe_by_hand():
    summary = describe([0.0, 0.5, 1.0, np.nan])
    assert summary["n"] == 3 and summary["mean"] == 0.5 and summary["sd"] == pytest.approx(0.5)
    half = 4.302653 * 0.5 / math.sqrt(3)  # t(0.975, 2) · SD / √n
    assert summary["ci_low"] == pytest.approx(0.5 - half, rel=1e-5)
    assert summary["ci_high"] == pytest.approx(0.5 + half, rel=1e-5)
    assert (summary["min"], summary["max"]) == (0.0, 1.0)


def test_cohens_d_by_hand():
    assert cohens_d([1, 2, 3], [2, 3, 4]) == pytest.approx(-1.0)  # Δ −1, pooled SD 1
    assert cohens_d([4, 6], [1, 3]) == pytest.approx(3 / math.sqrt(2))
    assert math.isnan(cohens_d([1, 1], [1, 1]))


def test_paired_bootstrap_when_one_system_is_strictly_better():
    rng = np.random.default_rng(1)
    words = rng.integers(3, 20, size=200).astype(float)
    worse = np.minimum(words, rng.integers(1, 5, size=200))
    better = worse - 1  # one error fewer on every utterance
    a = [RateSample(better, words)]
    b = [RateSample(worse, words)]
    result = paired_bootstrap(a, b, n_resamples=300, seed=0)
    assert result["delta"] == pytest.approx(-200 / words.sum())
    assert result["share_a_better"] == 1.0 and result["p_value"] == 0.0
    reverse = paired_bootstrap(b, a, n_resamples=300, seed=0)
    assert reverse["p_value"] == 1.0
    same = paired_bootstrap(a, a, n_resamples=50, seed=0)
    assert same["delta"] == 0.0 and same["p_value"] == 1.0  # A < B never: no evidence


def test_paired_bootstrap_is_paired():
    # per utterance B = A + 0.1·words on wildly varying difficulty: unpaired CIs overlap, but
    # every paired resample has A < B
    rng = np.random.default_rng(2)
    words = np.full(30, 10.0)
    errors_a = rng.uniform(0, 9, size=30)
    errors_b = errors_a + 1.0
    _, high_a = macro_bootstrap([RateSample(errors_a, words)], n_resamples=200)
    low_b, _ = macro_bootstrap([RateSample(errors_b, words)], n_resamples=200)
    assert low_b < high_a
    result = paired_bootstrap(
        [RateSample(errors_a, words)], [RateSample(errors_b, words)], n_resamples=200
    )
    assert result["p_value"] == 0.0


def test_macro_bootstrap_of_one_dataset_is_the_corpus_bootstrap():
    rng = np.random.default_rng(3)
    errors, words = rng.integers(0, 5, 80).astype(float), rng.integers(5, 15, 80).astype(float)
    ours = macro_bootstrap([RateSample(errors, words)], n_resamples=500, seed=7)
    assert ours == pytest.approx(bootstrap_ci(errors, words, n_resamples=500, seed=7))


def test_rank_agreement():
    est = pd.Series({"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.4})
    assert rank_agreement(est, est * 2) == {"n_systems": 4, "spearman": 1.0, "kendall": 1.0}
    reverse = rank_agreement(est, -est)
    assert reverse["spearman"] == pytest.approx(-1) and reverse["kendall"] == pytest.approx(-1)
    assert math.isnan(rank_agreement(est[:2], est[:2])["spearman"])


def test_latency_and_rtfx():
    rows = pd.DataFrame({"duration": [2.0, 4.0, 6.0], "processing_seconds": [1.0, 1.0, np.nan]})
    timing = latency(rows)
    assert timing["rtfx"] == 3.0 and timing["n_timed"] == 2
    assert timing["latency_mean"] == 1.0 and timing["latency_p95"] == 1.0
    assert timing["latency_p50"] == 1.0 and timing["throughput"] == 1.0  # 2 utts in 2 s
    slow = pd.DataFrame({"duration": [1.0, 2.0, 4.0, 8.0], "processing_seconds": [2, 2, 1, 1]})
    assert latency(slow)["rtf_le_1"] == 0.75  # 2 s for 1 s of audio is slower than real time
    assert latency(slow)["latency_p50"] == 1.5
    assert math.isnan(latency(rows.drop(columns="duration"))["rtfx"])


def test_round_trip_latency_stands_in_for_processing_time():
    from werest.ranking.leaderboard import timed

    rows = pd.DataFrame({"duration": [2.0, 4.0], "latency_ms": [500.0, 1500.0]})
    assert list(timed(rows)["processing_seconds"]) == [0.5, 1.5]
    assert latency(timed(rows))["rtfx"] == 3.0
    own = rows.assign(processing_seconds=[0.25, np.nan])  # werest's own timing wins
    assert list(timed(own)["processing_seconds"]) == [0.25, 1.5]


# --------------------------------------------------------------------------- the command

SENTENCES = [
    "the quick brown fox jumps over the lazy dog",
    "please call stella and ask her to bring these things",
    "we will meet at the station at nine tomorrow",
    "she sells sea shells by the sea shore every day",
    "turn left at the second light and park behind the shop",
    "the weather will be cold and windy this weekend",
    "can you send me the report before the meeting starts",
    "my brother plays the guitar in a small band",
]


def _damage(sentence: str, every: int, phase: int | None = None) -> str:
    """Drop every ``every``-th word (0 = keep all), the ones at ``i % every == phase``
    (default ``every - 1``)."""
    words = sentence.split()
    phase = every - 1 if phase is None else phase
    return " ".join(w for i, w in enumerate(words) if not every or i % every != phase)


def toy_table(n_utterances: int = 48) -> pd.DataFrame:
    """Three systems of clearly different quality, with a gender column and timings.

    fair drops words 3, 7, 11…, poor words 0, 2, 4…: their errors never coincide. (With nested
    errors, poor dropping every word fair drops, agreement cannot tell a perfect system from
    fair: triangulation attributes fair's errors to the perfect one.)"""
    quality = {"good": 0, "fair": 4, "poor": 2}
    phase = {"good": None, "fair": None, "poor": 0}
    speed = {"good": 0.5, "fair": 0.25, "poor": 0.1}
    rows = []
    for i in range(n_utterances):
        reference = SENTENCES[i % len(SENTENCES)]
        for system, every in quality.items():
            rows.append(
                {
                    "dataset": "toy" if i % 2 else "toy-b",
                    "utt_id": f"u{i:03d}",
                    "system": system,
                    "hypothesis": _damage(
                        reference, every if (i + len(system)) % 3 else 0, phase[system]
                    ),
                    "reference": reference,
                    "gender": "female" if i % 3 else "male",
                    "duration": 3.0,
                    "processing_seconds": 3.0 * speed[system],
                }
            )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def models():

    return load_models()


def test_build_ranks_reports_truth_rtfx_and_fairness(models):
    table = toy_table()
    settings = FairnessSettings(categories=("gender",), min_group_size=5)
    result = build(
        table, models, LeaderboardOptions(bootstrap=Bootstrap(200, 0.95, 0), fairness=settings)
    )
    board = result.board.set_index("system")
    assert set(result.board["system"]) == {"good", "fair", "poor"}
    assert board.loc["good", "true_wer"] == 0.0
    assert board["true_rank"].to_dict() == {"good": 1, "fair": 2, "poor": 3}
    assert board["rtfx"].to_dict() == pytest.approx({"good": 2.0, "fair": 4.0, "poor": 10.0})
    assert (board["datasets"] == 2).all()
    for system in board.index:  # every CI brackets its estimate
        assert board.loc[system, "est_ci_low"] <= board.loc[system, "est_wer"]
        assert board.loc[system, "est_wer"] <= board.loc[system, "est_ci_high"]
    assert len(result.pairs) == 2  # each system against the next in the estimated order
    summary = result.fairness["summary"]  # one audit per dataset and system
    assert len(summary) == 6
    assert (summary.loc[summary["system"] == "good", "true_wer"] == 0.0).all()
    assert set(result.fairness["groups"]["source"]) == {"true", "est"}
    latency_rows = result.descriptive[result.descriptive["measure"] == "latency_s"]
    assert latency_rows.set_index("system")["mean"].to_dict() == pytest.approx(
        {"good": 1.5, "fair": 0.75, "poor": 0.3}
    )


def test_the_glmm_audit_without_a_speaker_column_is_refused(models):
    """fairness.model=glmm asks for a per-speaker random intercept: on an input without a
    speaker column the leaderboard says so (it used to fall back to the GLM silently)."""
    settings = FairnessSettings(categories=("gender",), min_group_size=5, model="glmm")
    with pytest.raises(ConfigError, match=r"fairness.model=glmm needs a speaker column"):
        build(
            toy_table(),
            models,
            LeaderboardOptions(bootstrap=Bootstrap(50, 0.95, 0), fairness=settings),
        )


@pytest.mark.xfail(
    strict=True,
    reason="known regression of the anchored model (issue 23): the perfect system's proxy is "
    "fair, which drops words, so its pWER counts them as insertions over fair's shorter length "
    "and ranks it below fair; raw pWER does the same, and the bounded correction does not undo it",
)
def test_the_label_free_leaderboard_puts_the_perfect_system_first(models):
    result = build(toy_table(), models, LeaderboardOptions(bootstrap=Bootstrap(200, 0.95, 0)))
    assert list(result.board["system"]) == ["good", "fair", "poor"]
    assert result.agreement["spearman"] == pytest.approx(1.0)
    pairs = result.pairs
    assert list(zip(pairs["better"], pairs["worse"], strict=True)) == [
        ("good", "fair"),
        ("fair", "poor"),
    ]
    assert (pairs["true_p_value"] < 0.05).all()


def test_command_writes_every_output(tmp_path):
    source = tmp_path / "toy.csv"
    toy_table().to_csv(source, index=False)
    out = tmp_path / "board"
    status = main(
        [
            "leaderboard",
            f"input={source}",
            f"output_dir={out}",
            "bootstrap.n_resamples=100",
            "fairness.min_group_size=5",
        ]
    )
    assert status == 0
    for name in (
        "leaderboard.md",
        "leaderboard.csv",
        "leaderboard.png",
        "leaderboard.html",
        "pairs.csv",
        "descriptive.csv",
        "datasets.csv",
        "fairness_summary.csv",
        "fairness_comparison.csv",
        "config.yaml",
    ):
        assert (out / name).is_file(), name
    assert (out / "leaderboard.png").read_bytes()[:4] == b"\x89PNG"
    assert "| rank | system |" in (out / "leaderboard.md").read_text(encoding="utf-8")
    assert not list(out.glob(".*.tmp"))


def test_command_refuses_an_unknown_dataset(tmp_path, capsys):
    source = tmp_path / "toy.csv"
    toy_table(12).to_csv(source, index=False)
    status = main(["leaderboard", f"input={source}", "datasets=[nope]", f"output_dir={tmp_path}"])
    assert status == 2
    assert "dataset 'nope' is not in the input" in capsys.readouterr().err


def test_a_category_without_a_group_of_min_group_size_is_skipped_with_a_warning(tmp_path, capsys):
    """The toy table's datasets have 24 utterances each (16 female, 8 male): with the default
    fairness.min_group_size (30) no gender group, nor their pool, is large enough. The
    leaderboard is written without a fairness audit, and a warning per dataset names the
    column and the setting (it used to stop with pandas' "No objects to concatenate")."""
    source = tmp_path / "toy.csv"
    toy_table().to_csv(source, index=False)
    out = tmp_path / "board"
    status, stdout, err = run_cli(
        capsys, "leaderboard", f"input={source}", f"output_dir={out}", "bootstrap.n_resamples=50"
    )
    assert status == 0, err
    assert "Traceback" not in err
    expected = (
        "the fairness audit of 'gender' is skipped: no group reached fairness.min_group_size "
        "(30 utterances; the largest has 16)"
    )
    for dataset in ("toy", "toy-b"):
        assert f"warning: {dataset}: {expected}" in stdout
    assert expected in (out / "leaderboard.md").read_text(encoding="utf-8")
    assert (out / "leaderboard.csv").is_file() and not list(out.glob("fairness_*.csv"))
    assert "est_faas" not in pd.read_csv(out / "leaderboard.csv").columns
    page = (out / "leaderboard.html").read_text(encoding="utf-8")
    assert html.escape(expected) in page and ">Fairness</button>" not in page


def test_labels_below_min_labels_everywhere_keep_the_zero_label_leaderboard(tmp_path, capsys):
    """labels= with 12 labels per dataset, fewer than few_labels.min_labels (20) in each: the
    leaderboard is the zero-label one (its estimates and its neighbour tests), with the
    warning that says so (it used to stop with KeyError: 'classical_wer' in the report)."""
    table = toy_table()
    source, labels = tmp_path / "toy.csv", tmp_path / "labels.csv"
    table.drop(columns="reference").to_csv(source, index=False)
    utterances = table[table["system"] == "good"].head(24)  # 12 per dataset
    utterances[["dataset", "utt_id", "reference"]].to_csv(labels, index=False)
    out = tmp_path / "board"
    status, stdout, err = run_cli(
        capsys,
        "leaderboard",
        f"input={source}",
        f"labels={labels}",
        f"output_dir={out}",
        "bootstrap.n_resamples=50",
        "fairness.enabled=false",
    )
    assert status == 0, err
    assert "Traceback" not in err
    for dataset in ("toy", "toy-b"):
        assert (
            f"warning: {dataset}: fair, good, poor: fewer than 20 labelled utterances: the "
            "zero-label estimate is kept (few_labels.min_labels)"
        ) in stdout
    datasets = pd.read_csv(out / "datasets.csv")
    assert set(datasets["method"]) == {"zero_label"} and (datasets["n_labelled"] == 12).all()
    assert (datasets["est_wer"] == datasets["zero_label_wer"]).all()
    assert datasets["classical_wer"].isna().all()
    board = pd.read_csv(out / "leaderboard.csv")
    assert set(board["method"]) == {"zero_label"} and (board["n_labelled"] == 24).all()
    pairs = pd.read_csv(out / "pairs.csv")  # the zero-label tests, not empty labelled ones
    assert "verdict" not in pairs and pairs["est_verdict"].notna().all()
    assert "few_labels.min_labels" in (out / "leaderboard.md").read_text(encoding="utf-8")


def test_select_datasets_needs_two_systems():
    table = toy_table(6)
    with pytest.raises(Exception, match="at least two systems"):
        select_datasets(table[table["system"] == "good"], None, [])


# --------------------------------------------------------------------------- shared data


@pytest.mark.shared
def test_dighr_190301_true_and_estimated_audits(models):
    from werest.ingest.importers import import_table

    table = import_table("dighr", [shared_path("dighr", "en", "190301")])
    settings = FairnessSettings(categories=("gender", "age", "accent"), min_group_size=30)
    result = build(
        table, models, LeaderboardOptions(bootstrap=Bootstrap(50, 0.95, 0), fairness=settings)
    )
    assert set(result.board["system"]) == {"azure", "deepspeech", "google"}
    summary = result.fairness["summary"].set_index("system")
    assert set(summary.index) == {"azure", "deepspeech", "google"}
    # the audits cover the ~1,350 utterances with demographics, the same rows on both sides
    assert (summary["true_n"] == summary["est_n"]).all()
    assert summary["true_n"].between(1200, 1600).all()
    categories = result.fairness["categories"]
    audited = categories[categories["audited"]]
    assert set(audited["category"]) == {"gender", "age", "accent"}
    groups = result.fairness["groups"]
    assert (groups["n"] >= 30).all()  # small accents and ages pooled (or dropped)
    assert (groups["raw_score"].between(0, 100)).all()
    # FAAS follows from the overall score and the fractional WER on both sides
    for side in ("true", "est"):
        expected = 10 * np.log10(summary[f"{side}_overall"] / summary[f"{side}_wer"])
        assert np.allclose(summary[f"{side}_faas"], expected)
    assert set(result.fairness["comparison"]["category"]) == {"gender", "age", "accent"}


def test_the_true_wer_beside_an_estimate_is_on_the_estimated_utterances(models):
    """System b alone transcribed u9 (no proxy, not estimated) and got every word wrong: its
    true WER beside its estimate counts only the utterances estimated (0 %)."""
    rows = [
        {"dataset": "A", "utt_id": f"u{u}", "system": s, "hypothesis": "hello world",
         "reference": "hello world"}
        for u in range(3) for s in "abc"
    ]  # fmt: skip
    rows.append(
        {"dataset": "A", "utt_id": "u9", "system": "b", "hypothesis": "x y z w",
         "reference": "one two three four"}
    )  # fmt: skip
    result = build(pd.DataFrame(rows), models, LeaderboardOptions(bootstrap=Bootstrap(50, 0.95, 0)))
    truth = result.datasets.set_index("system")["true_wer"]
    assert truth["b"] == 0.0
    assert result.board.set_index("system").loc["b", "true_wer"] == 0.0


def test_ranking_on_common_ground():
    """A and B ran on an easy and a hard dataset (B twice A's WER on both); C ran only on the
    easy one, slightly worse than A there. By the macro over its own datasets C (6 %) would
    rank first; filled by the multiplicative fit, its hard cell is about 3 × 6 % = 18 % (A's
    ratio of hard to easy is 4), so over both datasets C (about 15 %) ranks between A (12.5 %)
    and B (25 %). D shares no dataset with anyone: nothing compares it, it keeps its own."""
    from werest.ranking.leaderboard import common_ground, filled_macro

    per_dataset = pd.DataFrame(
        [
            ("easy", "A", 0.05), ("hard", "A", 0.20), ("easy", "B", 0.10), ("hard", "B", 0.40),
            ("easy", "C", 0.06), ("other", "D", 0.30),
        ],
        columns=["dataset", "system", "est_wer"],
    )  # fmt: skip
    filled = filled_macro(per_dataset, "est_wer")["macro"]
    assert filled["A"] == pytest.approx(0.125) and filled["B"] == pytest.approx(0.25)
    assert 0.13 < filled["C"] < 0.17  # (0.06 + ≈ 0.24 with the 0.5-point floor) / 2
    assert filled["D"] == pytest.approx(0.30)
    board = pd.DataFrame(
        {
            "rank": 0,
            "system": ["A", "B", "C", "D"],
            "datasets": [2, 2, 1, 1],
            "est_wer": [0.125, 0.25, 0.06, 0.30],
        }
    )
    ranked = common_ground(board, per_dataset)
    assert list(ranked["system"]) == ["A", "C", "B", "D"]
    assert list(ranked["filled_cells"]) == [0, 1, 0, 0]
