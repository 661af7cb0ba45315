"""Which system is best (:mod:`werest.estimation.winner`): the shortlist, the design, the
confidence sequences (checked against ``confseq``, the reference implementation of
Waudby-Smith & Ramdas and Howard et al.) and the decision, on synthetic contests whose truth
is known exactly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from werest.estimation import winner as W
from werest.evaluation.winner import (
    WinnerExperiment,
    best_rank_shares,
    calibrate_shortlist,
    scored_contests,
    simulate_users,
)
from werest.text import as_normaliser

VOCABULARY = [f"w{i}" for i in range(60)]


def synthetic_table(error_rates, n=300, seed=0, dataset="d") -> pd.DataFrame:
    """``n`` utterances of 4–14 words; system k substitutes each word with probability
    ``error_rates[k]`` (independently), so system 0 of the lowest rate is the best."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        words = list(rng.choice(VOCABULARY, size=rng.integers(4, 15)))
        for k, rate in enumerate(error_rates):
            hyp = [w if rng.random() > rate else str(rng.choice(VOCABULARY)) for w in words]
            rows.append(
                {
                    "dataset": dataset,
                    "utt_id": f"u{i:04d}",
                    "system": f"s{k}",
                    "hypothesis": " ".join(hyp),
                    "reference": " ".join(words),
                }
            )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def clear_contest():
    """Three systems at 2 %, 12 % and 20 % substitution rates."""
    contests, errors, truth = scored_contests(
        synthetic_table([0.02, 0.12, 0.20]), as_normaliser("whisper_basic")
    )
    return contests["d"], errors["d"], truth["d"]


# --------------------------------------------------------------------------- the bound


@pytest.mark.parametrize("kind", [W.WITH_REPLACEMENT, W.FRESH_UNIFORM])
def test_a_folded_term_keeps_its_mean_and_lifts_its_floor(clear_contest, kind, monkeypatch):
    """After a first batch, every utterance the next draw may reach, weighted by its chance:
    the folded term x + θ r has the mean a μ + b + θ r̄ the sequence is told (μ the pair's
    true mean difference), and never falls below −(1 − θ) c, the floor its bets are capped
    by. Under the winner design the far pair (s2, s0), which it follows least, folds (θ > 0)
    at the shipped threshold; uniform draws fold it at a lower one (κ = 1)."""
    from werest.estimation import decision

    if kind == W.FRESH_UNIFORM:
        monkeypatch.setattr(decision, "FOLD_RATIO", 1.0)
    contest, errors, _ = clear_contest
    pairs = [(1, 0), (2, 0), (0, 2)]
    mu = np.array([(errors[:, a] - errors[:, b]).mean() for a, b in pairs])
    q = W.winner_probabilities(contest, "s0", ["s1"], 0.2)
    rng = np.random.default_rng(2)
    if kind == W.WITH_REPLACEMENT:
        first = W.Batch(rng.choice(contest.n, size=20, p=q), kind, q)
        chance = q
    else:
        first = W.Batch(rng.choice(contest.n, size=20, replace=False), kind)
        chance = np.where(np.isin(np.arange(contest.n), first.positions), 0.0, 1.0)
        chance = chance / chance.sum()
    reachable = np.flatnonzero(chance > 0)
    rows = []
    for i in reachable:
        terms = W.pair_terms(contest, [first, W.Batch(np.array([i]), kind, q)], errors, pairs)
        rows.append([v[-1] for v in (terms.x, terms.reach, terms.slope, terms.offset)])
        rows[-1] += [terms.reach_mean[-1], terms.c[-1], terms.fold[-1]]
    x, reach, slope, offset, reach_mean, c, fold = (np.array(v) for v in zip(*rows, strict=True))
    weights = chance[reachable][:, None]
    np.testing.assert_allclose(
        (weights * (x + reach)).sum(axis=0), slope[0] * mu + offset[0] + reach_mean[0]
    )
    assert (x + reach >= -(1 - fold) * c - 1e-12).all()
    assert fold[0, 1] > 0 and fold[0, 1] == fold[0, 2]  # one θ for both sides of the pair


def test_the_difference_of_two_systems_errors_is_at_most_their_distance(clear_contest):
    contest, errors, _ = clear_contest
    for a in range(3):
        for b in range(a + 1, 3):
            gap = np.abs(errors[:, a] - errors[:, b])
            assert (gap <= contest.distance(a, b) + 1e-9).all()
            assert (gap > 0).any()  # not vacuous


# --------------------------------------------------------------------------- against confseq


@pytest.fixture(autouse=True)
def _confseq_on_numpy_2(monkeypatch):
    """confseq 0.0.11 (the last release) annotates with ``np.float_``, which NumPy 2 removed:
    give it the alias so it imports under either NumPy (``make check`` may get NumPy 2)."""
    if not hasattr(np, "float_"):
        monkeypatch.setattr(np, "float_", np.float64, raising=False)


def test_the_empirical_bernstein_sequence_is_confseqs_predictable_mixture():
    from confseq.betting_strategies import lambda_predmix_eb
    from confseq.predmix import predmix_lower_cs

    rng = np.random.default_rng(1)
    t = np.arange(1, 301)
    for n_population in (None, 400):
        if n_population is None:  # with replacement: the mean is μ at every draw
            unit = rng.beta(2, 5, size=300)
            slope, offset = np.ones(300), np.zeros(300)
        else:  # without replacement: the conditional mean of the next draw
            unit = rng.permutation(rng.beta(2, 5, size=n_population))[:300]
            before = np.append(0, np.cumsum(2 * unit - 1)[:-1])
            left = n_population - np.arange(300)
            slope, offset = n_population / left, -before / left
        x = 2 * unit - 1  # in [-1, 1]: c = 1
        ours = W.eb_lower_bounds(
            x[:, None], np.ones((300, 1)), slope[:, None], offset[:, None], 0.05
        )[:, 0]
        regularised = (0.5 + np.cumsum(unit)) / (t + 1)
        v = (unit - np.append(0.5, regularised[:-1])) ** 2
        reference = predmix_lower_cs(
            unit,
            v=v,
            lambdas_fn=lambda y: lambda_predmix_eb(
                y, truncation=W.sequences.EB_TRUNCATION, alpha=0.05
            ),
            psi_fn=lambda lam: -np.log(1 - lam) - lam,
            alpha=0.05,
            running_intersection=True,
            N=n_population,
        )
        # confseq bounds a mean of [0, 1] data at 0 from below
        np.testing.assert_allclose(np.maximum((ours + 1) / 2, 0), reference, atol=1e-12)


def test_the_asymptotic_sequence_is_robbins_normal_mixture_boundary():
    from confseq.boundaries import normal_mixture_bound

    x = np.random.default_rng(2).normal(1.0, 2.0, size=(200, 1))
    half = W.asymptotic_half_widths(x, 0.05)
    for t in (20, 100, 200):
        variance = x[:t].var()
        boundary = normal_mixture_bound(
            t * variance, 0.05, W.sequences.ASYMPTOTIC_HORIZON * variance, 0.05, False
        )
        assert half[t - 1, 0] * t == pytest.approx(boundary, rel=1e-9)


# --------------------------------------------------------------------------- validity


def _skewed_population(rng, n=500):
    """Per-utterance distances d (geometric, 40 % exactly 0) and differences |x| ≤ d."""
    d = rng.geometric(0.3, size=n).astype(float) * (rng.random(n) < 0.6)
    x = d * rng.choice([-1.0, 1.0], size=n, p=[0.4, 0.6]) * rng.random(n)
    return d, x


@pytest.mark.parametrize("sequence", ["eb", "betting"])
def test_the_sequences_hold_at_every_time_under_the_winner_design(sequence):
    """2,000 users draw 400 times each from a skewed population with q ∝ d; the share whose
    lower bound ever passes the true mean is at most α (the tolerance, 3 binomial standard
    errors, is never needed: both sequences are conservative)."""
    rng = np.random.default_rng(3)
    n, users, draws, alpha = 500, 2000, 400, 0.05
    d, x = _skewed_population(rng, n)
    q = 0.2 / n + 0.8 * d / d.sum()
    picks = rng.choice(n, size=(draws, users), p=q)
    terms = x[picks] / (n * q[picks])
    bound = np.full_like(terms, (d / (n * q)).max())
    ones, zeros = np.ones_like(terms), np.zeros_like(terms)
    if sequence == "eb":
        lower = W.eb_lower_bounds(terms, bound, ones, zeros, alpha)
        ever = (lower > x.mean()).any(axis=0)
    else:
        checkpoints = list(range(10, draws + 1, 10))
        lower = W.betting_lower_bounds(
            terms,
            bound,
            ones,
            zeros,
            alpha,
            lowest=np.full(users, -d.mean()),
            highest=np.full(users, d.mean()),
            checkpoints=checkpoints,
        )
        ever = (lower > x.mean()).any(axis=0)
        assert (np.diff(lower, axis=0) >= 0).all()  # a running maximum
    missed = ever.mean()
    assert missed <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / users)
    assert np.isfinite(lower[-1]).all()
    assert (lower[-1] > -d.mean()).mean() > 0.9  # not vacuous: it moved off the known range


def test_a_users_kept_terms_give_the_decisions_computed_afresh(clear_contest):
    """A simulated user's ``memo`` keeps each pair set's terms batch by batch (and each
    bound's): every round's decision, winner and uniform batches mixed, is the one computed
    from nothing; the same memo given the batches in another order, or a list that does not
    begin with the kept batches, recomputes them rather than reading the kept ones."""
    contest, errors, _ = clear_contest
    rng = np.random.default_rng(5)
    memo: dict = {}
    batches: list = []
    for round_ in range(8):
        kept = W.decide(contest, batches, errors, memo=memo)
        fresh = W.decide(contest, batches, errors)
        assert kept.as_dict() == fresh.as_dict()  # status, leader, bounds, regret_bound
        if round_ % 3 == 2:
            free = np.flatnonzero(
                ~np.isin(np.arange(contest.n), np.hstack([b.positions for b in batches]))
            )
            batches.append(W.Batch(rng.choice(free, size=10, replace=False), W.FRESH_UNIFORM))
        else:
            batches.append(W.next_batch(contest, fresh, 10, 0.2, rng)[0])
    assert any(key[0] == "terms" for key in memo)  # the terms were kept
    pairs = [(1, 0), (2, 0)]
    for order in (batches, batches[::-1], batches[1:], batches[:3]):
        kept = W.pair_terms(contest, order, errors, pairs, memo=memo)
        fresh = W.pair_terms(contest, order, errors, pairs)
        for name in ("x", "c", "slope", "offset", "reach", "reach_mean", "fold"):
            np.testing.assert_array_equal(getattr(kept, name), getattr(fresh, name))
        assert kept.ends == fresh.ends


@pytest.mark.parametrize("kind", ["winner", "uniform"])
def test_the_pair_bounds_hold_at_every_batch_as_the_loop_draws_them(kind):
    """120 users run the loop (the design follows each round's decision, redraws and all);
    after every batch, each pair's one-sided lower bound at α = 0.1 passes the pair's true
    mean difference for at most α of the users (3 binomial standard errors of tolerance):
    the terms, their known parts, offsets and ranges are what the sequences assume."""
    contests, errors, _ = scored_contests(
        synthetic_table([0.05, 0.06, 0.15], n=250, seed=9), as_normaliser("whisper_basic")
    )
    contest, errors = contests["d"], errors["d"]
    pairs = [(1, 0), (0, 1), (2, 0)]
    truth = np.array([(errors[:, a] - errors[:, b]).mean() for a, b in pairs])
    alpha, users = 0.1, 120
    failed, folded = np.zeros(len(pairs)), np.zeros(len(pairs), dtype=bool)
    for user in range(users):
        rng = np.random.default_rng([9, user])
        batches, labelled, ever = [], np.zeros(contest.n, dtype=bool), np.zeros(3, bool)
        for _ in range(6):
            if kind == "winner":
                decision = W.decide(contest, batches, errors)
                batch, _ = W.next_batch(contest, decision, 10, 0.2, rng)
            else:
                free = np.flatnonzero(~labelled)
                batch = W.Batch(rng.choice(free, size=10, replace=False), W.FRESH_UNIFORM)
            batches.append(batch)
            labelled[batch.positions] = True
            known = W.known_ranges(contest, pairs, errors, labelled)
            terms = W.pair_terms(contest, batches, errors, pairs)
            lower, _ = W.pair_bounds(terms, alpha, lowest=known[0], highest=known[1])
            ever |= lower > truth + 1e-12
            folded |= terms.fold.max(axis=0) > 0
        failed += ever
    assert (failed / users <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / users)).all()
    assert folded[2]  # the far pair (s2, s0) folded its reach: what this test checks holds


def test_the_betting_sequence_is_confseqs_betting_martingale():
    """At the bound it reports, confseq's one-sided betting capital (theta = 1, truncation
    1/2 of 1/m: the hedged capital's positive half, given the same predictable bets) has just
    reached 1/α, and a hair above the bound it has not: the same process, solved for m."""
    from confseq.betting import betting_mart

    rng = np.random.default_rng(4)
    alpha = 0.05
    for n_population in (None, 400):
        if n_population is None:
            unit = rng.beta(2, 5, size=200)
            slope, offset = np.ones(200), np.zeros(200)
        else:
            unit = rng.permutation(rng.beta(2, 5, size=n_population))[:200]
            before = np.append(0, np.cumsum(2 * unit - 1)[:-1])
            left = n_population - np.arange(200)
            slope, offset = n_population / left, -before / left
        x = (2 * unit - 1)[:, None]  # in [-1, 1]: c = 1
        c = np.ones_like(x)
        bets = 2 * W.sequences.predictable_bets(x, c, alpha)[:, 0]  # on the [0, 1] scale
        lower = W.betting_lower_bounds(
            x,
            c,
            slope[:, None],
            offset[:, None],
            alpha,
            lowest=np.array([-1.0]),
            highest=np.array([1.0]),
        )[-1, 0]

        def capital(m, unit=unit, bets=bets, n_population=n_population):
            return betting_mart(
                unit,
                (m + 1) / 2,
                alpha=alpha,
                lambdas_fn_positive=lambda y, mm, bets=bets: bets,
                N=n_population,
                theta=1.0,
                trunc_scale=W.TRUNCATION,
                m_trunc=True,
            )[-1]

        assert lower > -1  # it rejected something
        assert capital(lower) >= 1 / alpha * (1 - 1e-6)
        assert capital(lower + 1e-6) < 1 / alpha


ZERO_LABEL_ORDERS = {
    "none": {},
    "s0 first": {f"s{i}": 0.1 * (i + 1) for i in range(6)},
    "s5 first": {f"s{i}": 0.1 * (6 - i) for i in range(6)},
    "only some": {"s2": 0.3, "s4": 0.1},
}


@pytest.mark.parametrize("order", list(ZERO_LABEL_ORDERS))
def test_the_bounds_of_the_true_best_spend_alpha_over_every_leader_whichever_it_is(order):
    """A stop naming W is wrong only if the bound on (e_B* − e_W) fails for the true best B*:
    for every system B, its bounds against every possible leader W share exactly α. The
    zero-label favourite as leader gets the most (harmonic weights: π ∝ 1/rank, a bound on
    (e_B − e_W) gets α π_W / Σ_{L ≠ B} π_L); with no zero-label estimate every pair α/(S − 1)."""
    systems = [f"s{i}" for i in range(6)]
    contest = W.Contest(
        "d", pd.Index(["u"]), systems, np.zeros((1, 6), dtype=int), np.array(["x"]),
        zero_label=ZERO_LABEL_ORDERS[order],
    )  # fmt: skip
    alpha = 0.05
    for best in range(6):
        spent = sum(W.pair_alpha(contest, w, [best], alpha)[0] for w in range(6) if w != best)
        assert spent == pytest.approx(alpha)
    if order == "none":
        assert W.pair_alpha(contest, 0, [1, 2], alpha) == pytest.approx([alpha / 5] * 2)
    if order == "s5 first":  # s5 ranks 1, s0 ranks 6: a bound on (e_s0 − e_s5)
        harmonic = sum(1 / r for r in range(1, 7))
        assert W.pair_alpha(contest, 5, [0], alpha)[0] == pytest.approx(
            alpha * 1 / (harmonic - 1 / 6)
        )
        assert W.pair_alpha(contest, 5, [0], alpha)[0] > W.pair_alpha(contest, 0, [5], alpha)[0]
    if order == "only some":  # s4, then s2, then the others in their order
        prior = W.leader_prior(contest)
        assert prior[4] > prior[2] > prior[0] > prior[1] > prior[3] > prior[5]


def test_the_true_bests_bounds_against_every_leader_hold_together_as_the_loop_draws():
    """The split's promise, as users of the loop draw (the design following each round's
    leader, read among three): for the true best B*, the lower bounds on (e_B* − e_W) of
    every leader W, each at its α, pass the truth together for at most α of the users. The
    zero-label order puts the true best last, so its bounds get the least α."""
    contests, errors, _ = scored_contests(
        synthetic_table([0.05, 0.06, 0.07, 0.15], n=250, seed=12), as_normaliser("whisper_basic")
    )
    contest, errors = contests["d"], errors["d"]
    contest.zero_label = {"s0": 0.2, "s1": 0.05, "s2": 0.06, "s3": 0.1}
    best = int(np.argmin(errors.sum(axis=0)))
    pairs = [(best, w) for w in range(4) if w != best]
    truth = np.array([(errors[:, a] - errors[:, b]).mean() for a, b in pairs])
    alpha, users = 0.1, 120
    alphas = np.array([W.pair_alpha(contest, w, [b], alpha)[0] for b, w in pairs])
    assert alphas.sum() == pytest.approx(alpha)
    failed = 0
    for user in range(users):
        rng = np.random.default_rng([12, user])
        batches, ever = [], False
        for _ in range(6):
            decision = W.decide(contest, batches, errors, W.WinnerSettings(alpha=alpha))
            batches.append(W.next_batch(contest, decision, 10, 0.2, rng)[0])
            labelled = np.zeros(contest.n, dtype=bool)
            labelled[np.concatenate([b.positions for b in batches])] = True
            low, high = W.known_ranges(contest, pairs, errors, labelled)
            terms = W.pair_terms(contest, batches, errors, pairs)
            lower, _ = W.pair_bounds(terms, alphas, lowest=low, highest=high)
            ever |= bool((lower > truth + 1e-12).any())
        failed += ever
    assert failed / users <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / users)


def test_a_hallucination_no_draw_reached_cannot_make_the_decision_stop_wrong():
    """s0 is the best on 98 % of utterances but loops on 2 % (its output there runs to five
    times the reference), which makes it the worst of the two. Random sheets of 10 rarely see
    a loop: the asymptotic sequence then stops on s0, the betting one (its range on every
    draw is the largest distance of an utterance not yet labelled) never does."""
    table = synthetic_table([0.03, 0.06], n=500, seed=11)
    loops = table["utt_id"].isin([f"u{i:04d}" for i in range(0, 500, 50)])
    mask = loops & (table["system"] == "s0")
    table.loc[mask, "hypothesis"] = (table.loc[mask, "hypothesis"] + " ") * 5
    contests, errors, truth = scored_contests(table, as_normaliser("whisper_basic"))
    contest, errors, truth = contests["d"], errors["d"], truth["d"]
    assert truth[0] - truth[1] > 3  # s0 is worse by more than any margin
    wrong = {}
    for bounds in ("asymptotic", "betting"):
        settings = WinnerExperiment(n_users=40, bounds=bounds, max_labels=150)
        users = simulate_users(contest, errors, truth, "uniform", settings)
        wrong[bounds] = users["wrong"].mean()
    assert wrong["asymptotic"] > 0.2  # the trap is real
    assert wrong["betting"] == 0


def test_a_census_decides_from_the_truth(clear_contest):
    contest, errors, truth = clear_contest
    everything = [W.Batch(np.arange(contest.n), W.FRESH_UNIFORM)]
    decision = W.decide(contest, everything, errors)
    assert decision.status == W.DECIDED and decision.exact
    assert decision.winner == contest.systems[int(np.argmin(truth))]
    assert decision.low == decision.high == pytest.approx(decision.difference)
    assert decision.regret_bound == 0 and decision.labels_to_go is None


# --------------------------------------------------------------------------- the decision


@pytest.mark.parametrize("bounds", W.BOUNDS)
def test_users_of_the_winner_design_name_the_best_with_fewer_labels_than_uniform(bounds):
    contests, errors, truths = scored_contests(
        synthetic_table([0.04, 0.08, 0.25], n=600, seed=5), as_normaliser("whisper_basic")
    )
    contest, errors, truth = contests["d"], errors["d"], truths["d"]
    contest.contenders = ["s0", "s1"]
    settings = WinnerExperiment(n_users=8, bounds=bounds, max_labels=contest.n)
    winner = simulate_users(contest, errors, truth, "winner", settings)
    uniform = simulate_users(contest, errors, truth, "uniform", settings)
    assert (winner["status"] != W.UNDECIDED).all()
    assert (winner["winner"] == "s0").all() and not winner["wrong"].any()
    assert winner["labels"].mean() < uniform["labels"].mean()
    assert winner["regret_held_100"].all()


def test_good_stops_within_the_margin_where_decided_would_need_every_label():
    """Two systems 0.2 points apart under a 1-point margin: showing either worse needs far
    more labels than the utterances; the one-sided rule stops at `good` with a regret bound
    under the margin, and names a system within the margin of the best."""
    contests, errors, truths = scored_contests(
        synthetic_table([0.050, 0.052, 0.3], n=400, seed=6), as_normaliser("whisper_basic")
    )
    contest, errors, truth = contests["d"], errors["d"], truths["d"]
    settings = WinnerExperiment(n_users=6, max_labels=contest.n, relative_margin=0.0)
    users = simulate_users(contest, errors, truth, "winner", settings)
    assert (users["status"] == W.GOOD).all()
    assert (users["gap"] <= 1.0).all() and not users["wrong"].any()
    assert (users["labels"] < contest.n).all()


def test_every_interval_shown_holds_its_own_point_and_the_certificate_is_its_bound():
    contests, errors, _ = scored_contests(
        synthetic_table([0.04, 0.05, 0.2], n=300, seed=8), as_normaliser("whisper_basic")
    )
    contest, errors = contests["d"], errors["d"]
    rng = np.random.default_rng(0)
    batches = []
    for _ in range(12):
        decision = W.decide(contest, batches, errors)
        assert decision.low <= decision.difference <= decision.high
        assert decision.regret_bound == pytest.approx(max(0.0, -decision.low), abs=1e-9)
        assert decision.leader in decision.may_be_best
        if decision.labels_to_go is not None:
            assert decision.labels_to_go <= contest.n - decision.labels_used
        batch, _ = W.next_batch(contest, decision, 10, 0.2, rng)
        batches.append(batch)


def test_two_identical_systems_are_good_without_a_label():
    table = synthetic_table([0.05, 0.3], n=200, seed=4)
    twin = table[table["system"] == "s0"].assign(system="s0-copy")
    contests, errors, _ = scored_contests(
        pd.concat([table[table["system"] == "s0"], twin], ignore_index=True),
        as_normaliser("whisper_basic"),
    )
    contest = contests["d"]
    assert not contest.distance(0, 1).any()
    decision = W.decide(contest, [], errors["d"])
    assert decision.status == W.GOOD and decision.labels_used == 0
    assert decision.regret_bound == 0 and decision.low == decision.high == 0


def test_the_margin_is_points_or_a_share_of_the_leaders_wer():
    assert W.WinnerSettings().margin_points(10.0) == 1.0  # 5 % of 10 is 0.5 < 1
    assert W.WinnerSettings().margin_points(40.0) == pytest.approx(2.0)  # 5 % of 40
    assert W.WinnerSettings(margin=0.5, relative_margin=0).margin_points(40.0) == 0.5
    with pytest.raises(Exception, match="relative_margin"):
        W.WinnerSettings(relative_margin=1.5)


def test_the_draws_leave_out_what_every_system_agrees_on_and_bound_the_weights(clear_contest):
    contest, _, _ = clear_contest
    q = W.winner_probabilities(contest, "s0", ["s1"], 0.2)
    assert q.sum() == pytest.approx(1)
    assert (q[~contest.disputed] == 0).all()
    disputed = contest.disputed.sum()
    assert q[contest.disputed].min() >= 0.2 / disputed - 1e-15
    assert (1 / (contest.n * q[contest.disputed])).max() <= 1 / 0.2
    # the critical pair (s0, s1) gets half of the rest: its terms are at most
    # mean(d) / ((1 − u) π) = mean(d) / 0.4
    d = contest.distance(0, 1)
    reached = q > 0
    assert not d[~reached].any()  # what no draw reaches, the pair agrees on
    assert (d[reached] / (contest.n * q[reached])).max() <= d.mean() / 0.4 + 1e-9


# --------------------------------------------------------------------------- the shortlist


def records(estimates: dict[str, float], dataset="d") -> list[dict]:
    return [{"dataset": dataset, "system": s, "estimated_wer": v} for s, v in estimates.items()]


def test_the_shortlist_keeps_the_lowest_share_of_estimates():
    four = records({"a": 0.30, "b": 0.10, "c": 0.20, "d": 0.40})
    assert W.shortlist(four, 0.5)["d"] == ["b", "c"]  # ⌈0.5·4⌉ = 2
    assert W.shortlist(four, 0.55)["d"] == ["a", "b", "c"]  # ⌈2.2⌉ = 3
    assert W.shortlist(four, 0.05)["d"] == ["b"]
    assert W.shortlist(records({"a": np.nan, "b": np.nan}), 0.1)["d"] == ["a", "b"]


def test_the_shortlist_is_calibrated_without_the_held_out_domain():
    rows = []
    # the best is estimated 2nd of 4 in domain x (⌈s·4⌉ ≥ 2 first at s = 0.3), 1st in y
    # (0.05), 4th in z (⌈s·4⌉ = 4 first at s = 0.8)
    for domain, order in (("x", [1, 0, 2, 3]), ("y", [0, 1, 2, 3]), ("z", [3, 0, 1, 2])):
        for k, rank in enumerate(order):
            rows.append(
                {
                    "dataset": f"{domain}-1",
                    "domain": domain,
                    "system": f"s{k}",
                    "estimated_wer": 0.1 * (rank + 1),
                    "wer": 0.1 * (k + 1),
                }
            )
    cells = pd.DataFrame(rows)
    needed = best_rank_shares(cells).set_index("domain")["needed"]
    assert needed.to_dict() == {"x": 0.3, "y": 0.05, "z": 0.8}
    calibration, shipped = calibrate_shortlist(cells, coverage=0.6)
    share = calibration.set_index("domain")["share"]
    # held out x: y and z need 0.05 and 0.8, and 60 % coverage needs both: 0.8
    assert share.to_dict() == {"x": 0.8, "y": 0.8, "z": 0.3}
    assert calibration.set_index("domain")["holds_best"].to_dict() == {
        "x": True,
        "y": True,
        "z": False,
    }
    assert shipped == 0.3  # 0.3 holds two of the three (0.05 and 0.3): 67 % ≥ 60 %


def test_the_leaderboard_leads_with_the_contenders(tmp_path, capsys):
    from tests.helpers import run_cli
    from werest.demo import demo_table_path

    status, out, err = run_cli(
        capsys, "leaderboard", f"input={demo_table_path()}", f"output_dir={tmp_path / 'b'}"
    )
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("Which system is best")
    # the demo's two datasets: ⌈0.55 · 4⌉ = 3 contenders each, never a single name
    assert lines[1].startswith("  demo-calls: 3 contenders: ")
    markdown = (tmp_path / "b" / "leaderboard.md").read_text()
    assert markdown.index("## Which system is best") < markdown.index("## Ranking")
    page = (tmp_path / "b" / "leaderboard.html").read_text()
    assert page.index('class="contenders"') < page.index("<nav>")


def test_the_shipped_share_is_the_one_the_experiment_calibrated():
    """SHORTLIST_SHARE is what `werest evaluate experiment=winner` calibrated on every shared
    dataset (experiments/results/winner.md says it), never a number typed in by hand."""
    import re

    from tests.conftest import REPO

    report = (REPO / "experiments" / "results" / "winner.md").read_text(encoding="utf-8")
    found = re.search(r"Calibrated on every dataset, the share is ([0-9.]+)", report)
    assert found and float(found.group(1)) == W.SHORTLIST_SHARE
