"""The bounded panel of werest estimate (werest.features.agreement.Panel): each target compared
with its k best-ranked others, so the cost grows as S·k, not S².

Expected values are derived here by brute force from the pairwise distances: the closed-form
triangulation over each target's own set {target} ∪ others, the mean pWER over those others.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from werest.features.agreement import Panel, agreement_features, pair_distances, pairwise_agreement
from werest.features.proxy import Ranking, choose_proxies
from werest.ingest.table import KEY
from werest.text import Normaliser

NONE = Normaliser("none")
ORDER = ("s3", "s0", "s5", "s1", "s6", "s2", "s4")


def _noisy_table(seed: int = 1, utterances: int = 30) -> pd.DataFrame:
    """Seven systems of growing noise on shared 8-word references; some utterances lack a
    system, so panels differ between utterances."""
    rng = np.random.default_rng(seed)
    words = ["a", "b", "c", "d", "e", "f", "g", "h"]
    rows = []
    for u in range(utterances):
        reference = list(rng.choice(words, 8))
        for s in range(7):
            if s > 2 and rng.random() < 0.15:
                continue
            noisy = [
                w if rng.random() > 0.06 * (s + 1) else str(rng.choice(words)) for w in reference
            ]
            rows.append(("d", f"u{u}", f"s{s}", " ".join(noisy)))
    return pd.DataFrame(rows, columns=["dataset", "utt_id", "system", "hypothesis"])


def _features(table: pd.DataFrame, size: int | None) -> pd.DataFrame:
    proxies = choose_proxies(table, Ranking.from_order(list(ORDER)))
    panel = None if size is None else Panel(ORDER, size)
    return agreement_features(table, proxies, normaliser=NONE, panel=panel).set_index(KEY)


@pytest.mark.parametrize("size", [2, 3, 5])
def test_panel_features_equal_brute_force_over_each_targets_set(size):
    table = _noisy_table()
    features = _features(table, size)
    distances = pairwise_agreement(table, normaliser=NONE).set_index(["utt_id", "system", "other"])
    for utterance, rows in table.groupby("utt_id"):
        present = [name for name in ORDER if name in set(rows["system"])]
        lengths = [len(text.split()) for text in rows["hypothesis"]]
        n_hat = max(float(np.median(lengths)), 1.0)

        def d(a, b, u=utterance, scale=n_hat):
            return distances.loc[(u, a, b), "w_dist"] / scale

        panel = present[: size + 1]
        for system in present:
            others = [o for o in panel if o != system] if system in panel else present[:size]
            members = [system, *others]
            own = sum(d(system, o) for o in others)
            total = sum(d(a, b) for a, b in itertools.combinations(members, 2))
            m = len(members)
            expected = max((own - total / (m - 1)) / (m - 2), 0.0) if m >= 3 else np.nan
            row = features.loc[("d", utterance, system)]
            assert row["n_others"] == len(others)
            assert row["tri_wer"] == pytest.approx(expected, nan_ok=True)
            mean = np.mean([distances.loc[(utterance, system, o), "pwer"] for o in others])
            assert row["pwer_mean"] == pytest.approx(mean)


def test_a_panel_as_large_as_the_utterance_changes_nothing():
    table = _noisy_table()
    everyone, bounded = _features(table, None), _features(table, 6)
    numeric = everyone.select_dtypes("number").columns
    np.testing.assert_array_equal(everyone[numeric].to_numpy(), bounded[numeric].to_numpy())


def test_the_panel_aligns_s_times_k_pairs_not_s_squared():
    """One utterance of S systems: (k+1)·k panel rows plus k rows per other system."""
    for systems, size in ((7, 2), (7, 3), (30, 8)):
        names = tuple(f"s{i:02d}" for i in range(systems))
        keys = pd.DataFrame(
            {
                "dataset": "d",
                "utt_id": "u",
                "system": names,
                "text": [f"w{i} x" for i in range(systems)],
            }
        )
        rows = pair_distances(keys, panel=Panel(names, size))
        assert len(rows) == (size + 1) * size + (systems - size - 1) * size
        assert len(pair_distances(keys)) == systems * (systems - 1)


def test_renaming_systems_leaves_panel_features_unchanged():
    """The panel follows the order given, not the names: renamed systems in a renamed order
    get the same features."""
    table = _noisy_table(seed=3)
    before = _features(table, 3)
    rename = {name: f"zz-{9 - int(name[1])}" for name in ORDER}
    renamed = table.assign(system=table["system"].map(rename))
    order = tuple(rename[name] for name in ORDER)
    proxies = choose_proxies(renamed, Ranking.from_order(list(order)))
    after = agreement_features(renamed, proxies, normaliser=NONE, panel=Panel(order, 3))
    after = after.assign(system=after["system"].map({v: k for k, v in rename.items()}))
    after = after.set_index(KEY).loc[before.index]
    numeric = before.select_dtypes("number").columns
    np.testing.assert_allclose(after[numeric].to_numpy(float), before[numeric].to_numpy(float))


@pytest.mark.parametrize("utterances", [0, 1, 30])
def test_word_totals_equal_the_totals_of_every_pair(utterances):
    """The guards' sample reads only word totals (pairwise_word_totals): the same rows, in
    the same order and types, as pair_totals of the full pairwise agreement; a dataset
    with one system has none."""
    from werest.features.agreement import pair_totals, pairwise_word_totals

    table = _noisy_table(seed=3, utterances=utterances)
    lone = pd.DataFrame(
        [("solo", "u0", "s0", "a b"), ("solo", "u1", "s0", "c")], columns=table.columns
    )
    table = pd.concat([table, lone], ignore_index=True)
    expected = pair_totals(pairwise_agreement(table, normaliser=NONE))
    pd.testing.assert_frame_equal(pairwise_word_totals(table, normaliser=NONE), expected)
