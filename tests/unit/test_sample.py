"""``werest sample`` and :mod:`werest.estimation.sampling`: the labelling sheet records a design an
estimator can undo.

The statistical checks run many seeds on a fixed population and compare what was drawn with
what the recorded probabilities say should be drawn. The seeds are fixed, so each check is
deterministic; its tolerance is chosen so that a correct design would fail it by chance with
a probability far below 1e-3 (stated at each check), while a wrong probability (a factor
of 1.5 on one utterance, or an estimator off by a few percent) fails it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from werest.cli.declare import settings_of
from werest.cli.main import main
from werest.cli.schema import SampleSettings
from werest.demo import demo_table_path
from werest.errors import ConfigError, InputError
from werest.estimation.sampling import (
    ACTIVE_FLOOR,
    SHEET_COLUMNS,
    STRATEGIES,
    active_probabilities,
    allocate,
    draw_sample,
    labelling_scores,
    mean_predicted_wer,
    stratum_labels,
    utterance_list,
)
from werest.ingest.table import read_table

N = 30


def population(dataset: str = "d", n: int = N, *, missing: int = 0, start: int = 0):
    """``n`` utterances of one dataset, with scores spread over two orders of magnitude (the
    first ``missing`` without a score) and a value ``x`` to estimate the total of."""
    utterances = pd.DataFrame({"dataset": dataset, "utt_id": [f"u{i:03d}" for i in range(n)]})
    rng = np.random.default_rng(start + 12345)
    score = np.exp(rng.uniform(-2, 2.5, n))
    score[:missing] = np.nan
    index = pd.MultiIndex.from_frame(utterances)
    x = pd.Series(np.where(np.isnan(score), 3.0, score) * rng.uniform(0.5, 1.5, n), index=index)
    return utterances, pd.Series(score, index=index), x


def keys(sheet: pd.DataFrame) -> list[tuple[str, str]]:
    return list(zip(sheet["dataset"], sheet["utt_id"], strict=True))


# --------------------------------------------------------------------------- reproducibility


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_seed_reproduces_the_draw_and_another_seed_changes_it(strategy):
    utterances, scores, _ = population(missing=3)
    first = draw_sample(utterances, 6, strategy, seed=7, scores=scores)
    again = draw_sample(utterances.sample(frac=1, random_state=1), 6, strategy, 7, scores)
    pd.testing.assert_frame_equal(first, again)  # the table's row order does not matter
    other = draw_sample(utterances, 6, strategy, seed=8, scores=scores)
    assert keys(first) != keys(other)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_adding_a_dataset_leaves_another_datasets_draw_unchanged(strategy):
    alone, scores, _ = population("meetings")
    extra, extra_scores, _ = population("aaa-calls", 17, start=5)  # sorts before, too
    both = pd.concat([extra, alone], ignore_index=True)
    both_scores = pd.concat([extra_scores, scores])
    before = draw_sample(alone, 5, strategy, seed=3, scores=scores)
    after = draw_sample(both, 5, strategy, seed=3, scores=both_scores)
    after = after[after["dataset"] == "meetings"].reset_index(drop=True)
    pd.testing.assert_frame_equal(before, after)


# --------------------------------------------------------------------------- the designs


def test_random_is_a_simple_random_sample_with_inclusion_n_over_N():
    utterances, _, _ = population()
    extra, _, _ = population("e", 10)
    sheet = draw_sample(pd.concat([utterances, extra]), 4, "random", seed=1)
    assert list(sheet.columns) == SHEET_COLUMNS
    for dataset, size in (("d", N), ("e", 10)):
        rows = sheet[sheet["dataset"] == dataset]
        assert len(rows) == 4 and rows["utt_id"].is_unique and (rows["draws"] == 1).all()
        assert np.allclose(rows["inclusion_probability"], 4 / size)
        assert np.allclose(rows["expected_draws"], 4 / size)
        assert np.allclose(rows["selection_probability"], 1 / size)
        assert (rows["n_utterances"] == size).all() and (rows["budget"] == 4).all()
    assert (sheet["reference"] == "").all() and sheet["stratum"].isna().all()
    assert keys(sheet) == sorted(keys(sheet))


def test_stratified_allocation_sums_to_the_budget_and_each_stratum_is_n_h_over_N_h():
    utterances, scores, _ = population(missing=4)
    for budget, strata in ((9, 4), (5, 4), (2, 4), (1, 4), (12, 3)):
        sheet = draw_sample(utterances, budget, "stratified", seed=2, scores=scores, strata=strata)
        assert sheet["draws"].sum() == budget == len(sheet)
        labels = stratum_labels(scores.to_numpy(), budget, strata)
        sizes = np.bincount(labels)
        assert len(sizes) <= min(strata, budget)
        drawn = sheet["stratum"].to_numpy(dtype=int) - 1
        counts = np.bincount(drawn, minlength=len(sizes))
        assert (counts >= 1).all()  # every stratum is drawn from
        assert np.allclose(sheet["inclusion_probability"], (counts / sizes)[drawn])
        assert np.allclose(sheet["expected_draws"], sheet["inclusion_probability"])
        # the recorded stratum is the one its score puts it in
        position = sheet["utt_id"].str[1:].astype(int).to_numpy()
        assert (labels[position] == drawn).all()
    # with at least two groups, the unscored utterances are a stratum of their own
    labels = stratum_labels(scores.to_numpy(), 9, 4)
    assert set(labels[:4]) == {3} and 3 not in set(labels[4:])
    ordered = labels[4:][np.argsort(scores.to_numpy()[4:])]
    assert (np.diff(ordered) >= 0).all() and np.ptp(np.bincount(ordered)) <= 1  # equal counts


def test_allocation_is_proportional_with_at_least_one_per_stratum():
    sizes = np.array([10, 1, 1, 28])
    assert allocate(sizes, 10).tolist() == [2, 1, 1, 6]
    assert allocate(sizes, 4).tolist() == [1, 1, 1, 1]
    assert allocate(np.array([5, 5, 5]), 7).sum() == 7
    for budget in range(4, 40):
        allocation = allocate(sizes, budget)
        assert allocation.sum() == budget and (allocation >= 1).all()
        assert (allocation <= sizes).all()
        assert np.abs(allocation - budget * sizes / sizes.sum()).max() < 2


def test_active_probabilities_are_bounded_below_and_sum_to_one():
    utterances, scores, _ = population(missing=3)
    for share in (0.1, 0.5, 1.0):
        p = active_probabilities(scores.to_numpy(), share)
        assert p.sum() == pytest.approx(1.0)
        assert (p >= share / N - 1e-15).all()
        if share == 1.0:
            assert np.allclose(p, 1 / N)
    p = active_probabilities(scores.to_numpy(), 0.5)
    sheet = draw_sample(utterances, 8, "active", seed=4, scores=scores, uniform_share=0.5)
    position = sheet["utt_id"].str[1:].astype(int).to_numpy()
    assert np.allclose(sheet["selection_probability"], p[position])
    assert np.allclose(sheet["expected_draws"], 8 * p[position])
    assert np.allclose(sheet["inclusion_probability"], 1 - (1 - p[position]) ** 8)
    assert sheet["draws"].sum() == 8 and len(sheet) <= 8
    assert np.allclose(active_probabilities(np.full(4, np.nan), 0.3), 0.25)  # no score: uniform


def test_active_missing_score_takes_the_datasets_median():
    scores = np.array([1.0, 2.0, 9.0, np.nan])
    p = active_probabilities(scores, 0.5)
    assert p[3] == pytest.approx(p[1])


def test_active_draws_follow_the_recorded_probabilities_over_many_seeds():
    """Summed over R independent seeds, utterance i's draws are Binomial(R·b, p_i): each
    count must lie within 4.5 standard deviations of R·b·p_i (a false failure somewhere
    among the 30 utterances has probability below 30 × 7e-6 = 2e-4; a p_i off by a factor
    1.5 is off by more than 10 sd here), and the highest-score utterance is drawn more often
    than the lowest-score one."""
    utterances, scores, _ = population()
    rounds, budget = 400, 10
    counts = pd.Series(0, index=utterances["utt_id"])
    for seed in range(rounds):
        sheet = draw_sample(utterances, budget, "active", seed=seed, scores=scores)
        counts[sheet["utt_id"]] += sheet["draws"].to_numpy()
    p = active_probabilities(scores.to_numpy(), 0.5)
    expected = rounds * budget * p
    sd = np.sqrt(rounds * budget * p * (1 - p))
    assert (np.abs(counts.to_numpy() - expected) <= 4.5 * sd).all()
    order = np.argsort(scores.to_numpy())
    assert counts.iloc[order[-1]] > counts.iloc[order[0]]
    assert counts.iloc[order[-5:]].sum() > 2 * counts.iloc[order[:5]].sum()


@pytest.mark.parametrize(
    ("strategy", "budget"), [("random", 6), ("stratified", 6), ("active", 8), ("active", 40)]
)
def test_horvitz_thompson_over_many_seeds_recovers_the_population_total(strategy, budget):
    """Σ draws_i · x_i / expected_draws_i over the sheet is unbiased for Σ x_i: over R seeds
    its mean lies within 4 standard errors of the true total (a false failure has
    probability about 6e-5 by the CLT over R = 400 independent draws)."""
    utterances, scores, x = population(missing=3)
    rounds = 400
    estimates = []
    for seed in range(rounds):
        sheet = draw_sample(utterances, budget, strategy, seed=seed, scores=scores)
        index = pd.MultiIndex.from_frame(sheet[["dataset", "utt_id"]])
        weights = sheet["draws"].to_numpy() / sheet["expected_draws"].to_numpy()
        estimates.append(float((weights * x.reindex(index).to_numpy()).sum()))
    estimates = np.array(estimates)
    standard_error = estimates.std(ddof=1) / np.sqrt(rounds)
    if budget >= N:  # a census: every draw gives the total exactly
        assert standard_error == pytest.approx(0, abs=1e-9)
    assert abs(estimates.mean() - x.sum()) <= 4 * standard_error + 1e-9


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("budget", [N, N + 5])
def test_a_budget_of_at_least_N_is_a_census(strategy, budget):
    utterances, scores, _ = population(missing=2)
    sheet = draw_sample(utterances, budget, strategy, seed=0, scores=scores)
    assert sheet["utt_id"].tolist() == utterances["utt_id"].tolist()
    for column in ("draws", "expected_draws", "inclusion_probability"):
        assert (sheet[column] == 1).all()
    assert np.allclose(sheet["selection_probability"], 1 / N)
    assert (sheet["budget"] == budget).all() and (sheet["strategy"] == strategy).all()


def test_bad_settings_are_config_errors_naming_the_setting():
    utterances, scores, _ = population()
    cases = [
        ({"budget": 0}, "budget must be a whole number >= 1"),
        ({"budget": 2.5}, "budget"),
        ({"budget": 3, "strategy": "smart"}, "one of random, stratified, active"),
        ({"budget": 3, "strategy": "active", "uniform_share": 0}, r"uniform_share must be in"),
        ({"budget": 3, "strategy": "active", "uniform_share": 1.2}, r"uniform_share must be in"),
        ({"budget": 3, "seed": -1}, "seed"),
        ({"budget": 3, "strategy": "stratified", "strata": 0}, "strata"),
    ]
    for settings, message in cases:
        with pytest.raises(ConfigError, match=message):
            draw_sample(utterances, scores=scores, **settings)
    with pytest.raises(ConfigError, match="needs per-utterance scores"):
        draw_sample(utterances, 3, "active")
    with pytest.raises(InputError, match="no rows"):
        draw_sample(utterances.iloc[:0], 3)


# --------------------------------------------------------------------------- scores, utterances


def test_labelling_scores_and_mean_predicted_wer():
    estimated = pd.DataFrame(
        {
            "dataset": ["d"] * 5,
            "utt_id": ["a", "a", "a", "b", "c"],
            "system": ["s", "t", "u", "s", "s"],
            "status": ["ok", "ok", "no proxy hypothesis", "ok", "no proxy hypothesis"],
            "predicted_wer": [0.0, 0.5, 9.0, 0.2, np.nan],
            "proxy_words": [10, 10, 10, 0, 5],
        }
    )
    scores = labelling_scores(estimated)
    assert list(scores.index) == [("d", "a"), ("d", "b")]  # c: no "ok" row
    floor = ACTIVE_FLOOR
    expected_a = np.sqrt(((10 * floor) ** 2 + (10 * (0.5 + floor)) ** 2) / 2)
    assert scores[("d", "a")] == pytest.approx(expected_a)
    assert scores[("d", "b")] == pytest.approx(1 * (0.2 + floor))  # max(proxy_words, 1)
    means = mean_predicted_wer(estimated)
    assert means[("d", "a")] == pytest.approx(0.25) and means[("d", "b")] == pytest.approx(0.2)


def test_utterance_list_takes_audio_and_duration_from_the_rows():
    table = pd.DataFrame(
        {
            "dataset": ["d", "d", "d", "c"],
            "utt_id": ["u2", "u1", "u1", "u9"],
            "system": ["a", "a", "b", "a"],
            "hypothesis": ["x", "y", "y", "z"],
            "audio": [None, None, "u1.wav", "u9.wav"],
            "duration": [np.nan, 1.5, 1.5, 2.0],
        }
    )
    out = utterance_list(table)
    assert out[["dataset", "utt_id"]].values.tolist() == [["c", "u9"], ["d", "u1"], ["d", "u2"]]
    assert out["audio"].tolist()[:2] == ["u9.wav", "u1.wav"] and pd.isna(out["audio"].iat[2])
    sheet = draw_sample(out, 5)
    assert sheet["audio"].tolist()[:2] == ["u9.wav", "u1.wav"]
    assert sheet["duration"].tolist()[:2] == [2.0, 1.5]
    bare = utterance_list(table.drop(columns=["audio", "duration"]))
    assert bare["audio"].isna().all() and bare["duration"].isna().all()


def test_the_schema_knows_the_strategies():
    assert settings_of(SampleSettings)["strategy"].choices == ("auto", *STRATEGIES, "winner")
    assert "budget" in {f for f in SampleSettings.__dataclass_fields__}


# --------------------------------------------------------------------------- the command


def run_cli(capsys, *args) -> tuple[int, str, str]:
    status = main(["sample", *(str(a) for a in args)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("strategy", ["random", "active"])
def test_cli_writes_the_labelling_sheet_for_the_demo_table(tmp_path, capsys, strategy):
    out = tmp_path / "to_label.csv"
    demo = demo_table_path()
    status, stdout, err = run_cli(
        capsys, f"input={demo}", "budget=3", f"strategy={strategy}", f"out={out}"
    )
    assert status == 0, err
    sheet = pd.read_csv(out, keep_default_na=False, na_values=[""])
    assert list(sheet.columns) == SHEET_COLUMNS
    table = read_table(demo)
    sizes = table.drop_duplicates(["dataset", "utt_id"]).groupby("dataset").size()
    for dataset, rows in sheet.groupby("dataset"):
        assert rows["draws"].sum() == 3 and (rows["n_utterances"] == sizes[dataset]).all()
        assert rows["selection_probability"].sum() <= 1 + 1e-12
        assert f"{dataset}: N={sizes[dataset]}, drawn 3, distinct {len(rows)}" in stdout
    assert set(sheet["dataset"]) == set(sizes.index)
    assert sheet["reference"].isna().all()  # to fill in: no hypothesis, no reference given
    assert not {"hypothesis", "system"} & set(sheet.columns)
    assert (sheet["strategy"] == strategy).all()
    assert f"werest estimate input={demo} labels={out}" in stdout
    assert (tmp_path / "to_label.csv.config.yaml").exists()
    # the same command again gives the same sheet
    again = run_cli(capsys, f"input={demo}", "budget=3", f"strategy={strategy}", f"out={out}")
    assert again[0] == 0
    pd.testing.assert_frame_equal(sheet, pd.read_csv(out, keep_default_na=False, na_values=[""]))


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ([], "missing required setting(s) budget"),
        (["budget=0"], "budget must be a whole number >= 1, got 0"),
        (["budget=-2"], "budget must be a whole number >= 1"),
        (["budget=2.5"], "budget must be a whole number"),
        (["budget=many"], "budget must be a whole number"),
        (
            ["budget=2", "strategy=smart"],
            "strategy must be one of auto, random, stratified, active",
        ),
        (
            ["budget=2", "strategy=active", "uniform_share=0"],
            "uniform_share must be a number in (0, 1]",
        ),
        (
            ["budget=2", "strategy=active", "uniform_share=1.5"],
            "uniform_share must be a number in (0, 1]",
        ),
    ],
)
def test_cli_bad_settings_exit_2_with_one_line_and_write_nothing(tmp_path, capsys, args, fragment):
    out = tmp_path / "to_label.csv"
    status, _, err = run_cli(capsys, f"input={demo_table_path()}", f"out={out}", *args)
    assert status == 2
    assert len(err.splitlines()) == 1 and err.startswith("werest sample: error: "), err
    assert fragment in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_cli_one_system_needs_strategy_random(tmp_path, capsys):
    table = tmp_path / "one.csv"
    table.write_text("dataset,utt_id,system,hypothesis\nd,u1,a,hi\nd,u2,a,yes\n", "utf-8")
    out = tmp_path / "s.csv"
    status, _, err = run_cli(
        capsys, f"input={table}", "budget=1", "strategy=stratified", f"out={out}"
    )
    assert status == 2 and len(err.splitlines()) == 1
    assert str(table) in err and "one system" in err and "strategy=random" in err
    assert not out.exists()
    assert run_cli(capsys, f"input={table}", "budget=1", f"out={out}")[0] == 0
    assert len(pd.read_csv(out)) == 1


def test_cli_empty_table(tmp_path, capsys):
    table = tmp_path / "empty.csv"
    table.write_text("dataset,utt_id,system,hypothesis\n", "utf-8")
    status, _, err = run_cli(capsys, f"input={table}", "budget=1", f"out={tmp_path / 's.csv'}")
    assert status == 2 and "no rows" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "s.csv").exists()


def test_the_interval_to_expect_by_hand():
    from werest.estimation.sampling import (
        PROMISE_OVERDISPERSION,
        PROMISE_SPREAD,
        expected_half_width,
    )

    # one system, N = 4, predicted errors 1, 2, 3, 4 over 10 words each: θ = 0.25, residuals
    # ±1.5, ±0.5, variance 5/3; n = 2 of 4 at random: √((c² · 5/3 + κ · 0.25 · 10) / 2) / 10
    # · t(0.975, 1) (no finite-population factor: the interval it promises has none)
    estimated = pd.DataFrame(
        {
            "dataset": "d",
            "utt_id": ["a", "b", "c", "d"],
            "system": "s",
            "status": "ok",
            "predicted_wer": [0.1, 0.2, 0.3, 0.4],
            "proxy_words": [10.0] * 4,
        }
    )
    half = expected_half_width(estimated, 2)
    variance = PROMISE_SPREAD**2 * 5 / 3 + PROMISE_OVERDISPERSION * 0.25 * 10
    assert half["d"] == pytest.approx(12.7062 * np.sqrt(variance / 2) / 10, rel=1e-4)
    assert expected_half_width(estimated, 4)["d"] == 0.0  # a census: no sampling error
    # two draws with replacement at p = 0.1, 0.2, 0.3, 0.4 (active: weights 1 / (4 p)): each
    # term z² = c² · residual² + κ · 0.25 · 10, V = Σ z² / (16 p) / 2
    p = pd.Series(
        [0.1, 0.2, 0.3, 0.4], index=pd.MultiIndex.from_frame(estimated[["dataset", "utt_id"]])
    )
    z2 = PROMISE_SPREAD**2 * np.array([2.25, 0.25, 0.25, 2.25]) + PROMISE_OVERDISPERSION * 2.5
    by_hand = 12.7062 * np.sqrt((z2 / (16 * p.to_numpy())).sum() / 2) / 10
    assert expected_half_width(estimated, 2, probabilities=p)["d"] == pytest.approx(
        by_hand, rel=1e-4
    )
    # drawing the large residuals more often promises a narrower interval than drawing them less
    small = pd.Series([0.4, 0.1, 0.1, 0.4], index=p.index)
    large = pd.Series([0.1, 0.4, 0.4, 0.1], index=p.index)
    assert (
        expected_half_width(estimated, 2, probabilities=small)["d"]
        < expected_half_width(estimated, 2, probabilities=large)["d"]
    )


def test_sample_says_the_interval_to_expect(tmp_path, capsys):
    out = tmp_path / "sheet.csv"
    status = main(
        ["sample", f"input={demo_table_path()}", "budget=3", "strategy=active", f"out={out}"]
    )
    assert status == 0
    captured = capsys.readouterr()
    printed = captured.out
    assert "expect a 95 % interval of about ±" in printed
    # the estimate it ran is cached (.werest-cache), but the run's outputs are the sheet, its
    # config and its page only
    wrote = [x for x in (captured.out + captured.err).splitlines() if x.startswith("wrote ")]
    assert wrote == [f"wrote {out}, {out}.config.yaml, {out.with_suffix('.html')}"]
    main(["sample", f"input={demo_table_path()}", "budget=3", "strategy=random", f"out={out}"])
    assert "needs the model's predictions" in capsys.readouterr().out


def test_a_pilot_of_labels_sets_the_promise_by_hand():
    from scipy import stats

    from werest.estimation.sampling import pilot_half_width

    se = np.array([0.01, 0.02, 0.03])
    # 10 labels in, 50 to be: the pilot's median half-width t(49) · 0.02 scaled by √(10/50),
    # pooled with the prediction-only promise 0.02 as variances weighted 10 : 10
    measured = stats.t.ppf(0.975, 49) * 0.02 * np.sqrt(10 / 50)
    by_hand = np.sqrt(0.5 * measured**2 + 0.5 * 0.02**2)
    assert pilot_half_width(se, 10, 50, 0.02) == pytest.approx(by_hand, rel=1e-12)
    # a larger pilot weighs more: 40 labels in, weights 40 : 10
    measured = stats.t.ppf(0.975, 49) * 0.02 * np.sqrt(40 / 50)
    by_hand = np.sqrt(0.8 * measured**2 + 0.2 * 0.02**2)
    assert pilot_half_width(se, 40, 50, 0.02) == pytest.approx(by_hand, rel=1e-12)
    # residuals twice as wide measured: a wider promise; nothing measured: the prior
    assert pilot_half_width(2 * se, 10, 50, 0.02) > pilot_half_width(se, 10, 50, 0.02)
    assert pilot_half_width(np.array([np.nan]), 10, 50, 0.02) == 0.02


def test_sample_with_labels_promises_from_what_the_labels_measured(tmp_path, capsys):
    demo = demo_table_path()
    pilot = tmp_path / "pilot.csv"
    assert main(["sample", f"input={demo}", "budget=2", "strategy=active", f"out={pilot}"]) == 0
    assert "from the predictions alone" in capsys.readouterr().out
    sheet = pd.read_csv(pilot)
    truth = read_table(demo).drop_duplicates(["dataset", "utt_id"]).set_index(["dataset", "utt_id"])
    sheet["reference"] = truth.loc[
        list(zip(sheet["dataset"], sheet["utt_id"], strict=True)), "reference"
    ].to_numpy()
    sheet.to_csv(pilot, index=False)
    out = tmp_path / "next.csv"
    assert main(["sample", f"input={demo}", f"labels={pilot}", "budget=2", f"out={out}"]) == 0
    printed = capsys.readouterr().out
    for dataset, rows in sheet.groupby("dataset"):
        line = next(x for x in printed.splitlines() if x.startswith(f"{dataset}:"))
        assert f"measured on the {int(rows['draws'].sum())} labelled draws already in" in line


def test_the_default_draw_is_active_with_two_systems_and_random_with_one(tmp_path, capsys):
    out = tmp_path / "sheet.csv"
    assert main(["sample", f"input={demo_table_path()}", "budget=3", f"out={out}"]) == 0
    assert set(pd.read_csv(out)["strategy"]) == {"active"}
    one = read_table(demo_table_path())
    one = one[one["system"] == one["system"].iloc[0]]
    path = tmp_path / "one.csv"
    one.to_csv(path, index=False)
    assert main(["sample", f"input={path}", "budget=3", f"out={out}"]) == 0
    assert set(pd.read_csv(out)["strategy"]) == {"random"}
    capsys.readouterr()


def test_a_later_sheet_is_drawn_independently_of_the_first():
    """With the same seed, sheet 1 draws from a generator of its own: the same generator
    redraws every one of an active sheet 0's utterances (a multinomial of 30 after one of 20
    from the same state), and the sheets together would not be the design they record.
    Independent draws of 20 and 30 of 1,000 share about 20 · 30 / 1,000 = 0.6 utterances."""
    from werest.estimation.sampling import draw_sample

    utterances = pd.DataFrame({"dataset": "d", "utt_id": [f"u{i:04d}" for i in range(1000)]})
    scores = pd.Series(
        np.linspace(1, 5, 1000), index=pd.MultiIndex.from_frame(utterances), name="score"
    )
    for strategy in ("random", "active"):
        first = draw_sample(utterances, 20, strategy, seed=0, scores=scores)
        same = draw_sample(utterances, 30, strategy, seed=0, scores=scores)
        later = draw_sample(utterances, 30, strategy, seed=0, scores=scores, sheet_number=1)
        if strategy == "active":  # the trap
            assert set(first["utt_id"]) <= set(same["utt_id"])
        assert len(set(first["utt_id"]) & set(later["utt_id"])) <= 4
        again = draw_sample(utterances, 30, strategy, seed=0, scores=scores, sheet_number=1)
        assert again.equals(later)  # still reproducible


# --------------------------------------------------------------------------- the recorded order


def drawn_sequence(sheet: pd.DataFrame) -> list[str]:
    """A sheet's draws in the order it records (its ``draw_order`` places)."""
    places = {
        int(place): utt
        for utt, cell in zip(sheet["utt_id"], sheet["draw_order"], strict=True)
        for place in str(cell).split("|")
    }
    assert sorted(places) == list(range(int(sheet["draws"].sum())))  # each draw once
    return [places[k] for k in range(len(places))]


def test_recorded_order():
    from werest.estimation.sampling import recorded_order

    assert list(recorded_order(np.array([2, 0, 2, 1]), 4)) == ["1", "3", "0|2", ""]
    assert list(recorded_order(np.array([], dtype=int), 2)) == ["", ""]


def test_each_sheet_records_its_number_and_the_order_its_draws_were_made_in():
    """The order is the generator's: ``random`` takes ``choice(N, n, replace=False)`` of the
    dataset's generator in the order it returns them, ``active`` the multinomial's counts
    then a permutation of them from the same generator; the design columns are those of the
    same draw without the order (its counts are the multinomial's)."""
    from werest.estimation.sampling import dataset_rng

    utterances, scores, _ = population(n=40)
    ids = utterances["utt_id"].to_numpy()
    sheet = draw_sample(utterances, 8, "random", seed=5, scores=scores, sheet_number=3)
    assert (sheet["sheet"] == 3).all() and list(sheet.columns) == SHEET_COLUMNS
    drawn = dataset_rng(5, "d#3").choice(40, size=8, replace=False)
    assert drawn_sequence(sheet) == list(ids[drawn])

    sheet = draw_sample(utterances, 12, "active", seed=5, scores=scores, uniform_share=0.5)
    assert (sheet["sheet"] == 0).all()
    rng = dataset_rng(5, "d")
    counts = rng.multinomial(12, active_probabilities(scores.to_numpy(float), 0.5))
    assert list(sheet["draws"]) == list(counts[counts > 0])
    drawn = rng.permutation(np.repeat(np.arange(40), counts))
    assert drawn_sequence(sheet) == list(ids[drawn])
    assert (sheet["draw_order"].str.count(r"\|") + 1 == sheet["draws"]).all()

    sheet = draw_sample(utterances, 9, "stratified", seed=5, scores=scores, strata=3)
    assert len(drawn_sequence(sheet)) == 9
    census = draw_sample(utterances, 50, "random", seed=5)
    assert sorted(drawn_sequence(census)) == sorted(ids)
