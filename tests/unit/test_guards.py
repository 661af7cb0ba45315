"""Run-time guards: the label-free proxy order, name-independent estimates, the ranking
options and the warnings printed next to the numbers (issue 13, item 8)."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest

from werest.cli.commands.estimate import run as estimate
from werest.cli.config import load_settings
from werest.cli.main import main
from werest.demo import demo_table_path
from werest.errors import ConfigError
from werest.estimation.estimate import choose_ranking
from werest.estimation.guards import sample_keys
from werest.features.proxy import consensus_order
from werest.ingest.table import read_table, write_table
from werest.model.files import default_model_path, load_models
from werest.text import Normaliser

WORDS = [
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "a",
    "lazy",
    "dog",
    "near",
    "river",
    "bank",
    "under",
    "grey",
    "sky",
    "today",
]


def _noisy(words: list[str], rate: float, rng: np.random.Generator) -> str:
    """The reference with each word replaced by "x<n>" with probability ``rate``."""
    return " ".join(w if rng.random() >= rate else f"x{rng.integers(1000)}" for w in words)


def _table(n: int = 60, seed: int = 0) -> pd.DataFrame:
    """Three honest systems (5, 15 and 30 % word errors), one that outputs one word per
    utterance and one that returns nothing on 80 % of the utterances."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        words = list(rng.choice(WORDS, size=12))
        reference = " ".join(words)
        systems = {
            name: _noisy(words, rate, rng)
            for name, rate in (("good", 0.05), ("fair", 0.15), ("poor", 0.30))
        }
        systems["oneword"] = words[0]
        systems["mostly_empty"] = "" if rng.random() < 0.8 else reference
        for system, hypothesis in systems.items():
            rows.append(("d", f"u{i:03d}", system, hypothesis, reference))
    return pd.DataFrame(rows, columns=["dataset", "utt_id", "system", "hypothesis", "reference"])


def test_degenerate_systems_cannot_win_the_label_free_order():
    order = consensus_order(_table(), normaliser=Normaliser("none"))
    assert order[:3] == ["good", "fair", "poor"]
    assert set(order[3:]) == {"oneword", "mostly_empty"}


def test_the_label_free_order_ignores_names_and_row_order():
    table = _table()
    rename = {"good": "zz9", "fair": "aa1", "poor": "mm5", "oneword": "a0", "mostly_empty": "b2"}
    renamed = table.assign(system=table["system"].map(rename)).sample(frac=1, random_state=3)
    assert consensus_order(renamed, normaliser=Normaliser("none")) == [
        rename[s] for s in consensus_order(table, normaliser=Normaliser("none"))
    ]


def _summary(table: pd.DataFrame, tmp_path, name: str, *overrides) -> pd.DataFrame:
    write_table(table, tmp_path / f"{name}.csv")
    cfg = load_settings(
        "estimate",
        [f"input={tmp_path / name}.csv", f"output_dir={tmp_path / name}", *overrides],
    )
    estimate(cfg)
    utterances = pd.read_csv(tmp_path / name / "utterances.csv", keep_default_na=False)
    return utterances.set_index(["dataset", "utt_id", "system"]).sort_index()


@pytest.mark.parametrize(
    "rename",
    [
        # names that sort in the opposite order
        {"large-v3": "z-large", "base": "y-base", "tiny": "b-tiny", "edge-kws": "a-edge"},
        # names the shipped model's ranking knows, in an order contradicting the true one
        {
            "large-v3": "speechbrain/asr-crdnn-rnnlm-librispeech",
            "base": "deepspeech2",
            "tiny": "openai/whisper-base",
            "edge-kws": "facebook/wav2vec2-large-robust-ft-libri-960h",
        },
    ],
)
def test_renaming_every_system_leaves_every_estimate_unchanged(tmp_path, rename):
    table = read_table(demo_table_path())
    before = _summary(table, tmp_path, "before")
    after = _summary(table.assign(system=table["system"].map(rename)), tmp_path, "after")
    after = after.rename(index={new: old for old, new in rename.items()}, level="system")
    after["proxy"] = after["proxy"].map({new: old for old, new in rename.items()})
    after = after.sort_index()
    assert list(after.index) == list(before.index)
    assert (after["proxy"] == before["proxy"]).all()
    numeric = before.select_dtypes("number").columns
    np.testing.assert_allclose(after[numeric].to_numpy(float), before[numeric].to_numpy(float))


def test_system_order_and_ranking_options(tmp_path):
    table = read_table(demo_table_path())
    models = load_models()
    assert choose_ranking(models, table).systems[0] == "large-v3"  # label-free
    order = choose_ranking(models, table, system_order=["tiny"])
    assert order.systems[0] == "tiny" and set(order.systems) == set(table["system"])
    truth = choose_ranking(models, table, ranking="references")
    assert truth.systems[-1] == "edge-kws"
    with pytest.raises(ConfigError, match="not in the input"):
        choose_ranking(models, table, system_order=["whisper-huge"])
    with pytest.raises(ConfigError, match="not both"):
        choose_ranking(models, table, ranking="model", system_order=["tiny"])
    utterances = _summary(table, tmp_path, "ordered", "system_order=[tiny,edge-kws]")
    proxies = utterances["proxy"].groupby(level="system").unique()
    assert list(proxies["large-v3"]) == ["tiny"] and list(proxies["tiny"]) == ["edge-kws"]


def test_warnings_for_two_systems_duplicates_and_short_proxies(tmp_path, capsys):
    table = read_table(demo_table_path())
    # a near-duplicate of tiny: the same output but for the last word of one utterance
    copy = table[table["system"] == "tiny"].assign(system="tiny-int8")
    copy.iloc[0, copy.columns.get_loc("hypothesis")] += " extra"
    # edge-kws keeps only its first word everywhere: a short proxy when forced
    two = table[table["system"].isin(["tiny", "edge-kws"])]
    write_table(pd.concat([table, copy]), tmp_path / "dup.csv")
    write_table(two, tmp_path / "two.csv")
    assert main(["estimate", f"input={tmp_path / 'dup.csv'}", f"output_dir={tmp_path / 'a'}"]) == 0
    out = capsys.readouterr().out
    assert "tiny and tiny-int8 may be near-duplicates" in out
    records = json.loads((tmp_path / "a" / "summary.json").read_text())
    flagged = {r["system"] for r in records if any("near-duplicates" in w for w in r["warnings"])}
    assert flagged == {"tiny", "tiny-int8"}
    assert main(["estimate", f"input={tmp_path / 'two.csv'}", f"output_dir={tmp_path / 'b'}"]) == 0
    assert "only two systems (edge-kws, tiny)" in capsys.readouterr().out
    records = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert all(any("only two systems" in w for w in r["warnings"]) for r in records)


def test_a_short_proxy_is_warned_about(tmp_path, capsys):
    table = _table()
    assert default_model_path().exists()
    write_table(table, tmp_path / "t.csv")
    args = ["estimate", f"input={tmp_path / 't.csv'}", f"output_dir={tmp_path / 'o'}"]
    assert main([*args, "target=good", "proxy=mostly_empty"]) == 0
    out = capsys.readouterr().out
    assert "proxy mostly_empty of good is empty or under half" in out
    assert main([*args, "target=good"]) == 0
    assert "is empty or under half" not in capsys.readouterr().out


def test_the_leaderboard_carries_the_same_warnings(tmp_path, capsys):
    table = read_table(demo_table_path())
    two = table[table["system"].isin(["tiny", "edge-kws"])]
    write_table(two, tmp_path / "two.csv")
    args = ["leaderboard", f"input={tmp_path / 'two.csv'}", f"output_dir={tmp_path / 'lb'}"]
    assert main([*args, "fairness.enabled=false"]) == 0
    assert "warning: demo-calls: only two systems (edge-kws, tiny)" in capsys.readouterr().out


def test_two_system_warning_names_the_audio_evidence_when_the_model_has_it(tmp_path):
    """With audio scores, the two sides of a disagreement are no longer indistinguishable:
    the warning says what tells them apart instead of "nothing"."""
    from werest.estimation.guards import guard_warnings, sample_pairs

    table = read_table(demo_table_path())
    two = table[table["system"].isin(["tiny", "edge-kws"])]
    pairs = sample_pairs(two, normaliser=Normaliser("whisper_english"))
    write_table(two, tmp_path / "two.csv")
    assert main(["estimate", f"input={tmp_path / 'two.csv'}", f"output_dir={tmp_path}"]) == 0
    rows = pd.read_csv(tmp_path / "utterances.csv")

    def two_systems(utterances):  # one per dataset of the demo
        warnings = guard_warnings(two, utterances, pairs)
        messages = [w["message"] for w in warnings if "only two systems" in w["message"]]
        assert len(messages) == two["dataset"].nunique()
        return set(message.split(": each is")[1] for message in messages)

    (plain,) = two_systems(rows)
    assert "nothing says which of them made the errors" in plain
    scored = rows.assign(wl_attributed_pwer=0.1, wl_mean_logprob_vs_proxy=np.nan)
    (audio,) = two_systems(scored)
    assert "only the audio scores (wl_attributed_pwer) say which" in audio


@pytest.mark.parametrize("seed", [0, 7])
def test_the_sample_of_parts_is_the_sample_of_the_whole(seed):
    """A partitioned run samples each partition, then their union: that must be the sample of
    all keys, whatever the split and the row order, with repeated keys, non-ASCII ids and
    datasets smaller and larger than per_dataset."""
    rng = np.random.default_rng(seed)
    alphabet = list("abcXYZ019_-éßΩ中🙂")
    ids = ["".join(rng.choice(alphabet, size=rng.integers(1, 6))) for _ in range(3000)]
    keys = pd.DataFrame(
        {
            "dataset": rng.choice(["b", "a", "é", "big"], size=3000, p=[0.1, 0.05, 0.05, 0.8]),
            "utt_id": ids,
        }
    )
    keys = pd.concat([keys, keys.sample(500, random_state=seed)], ignore_index=True)
    whole = sample_keys(keys, per_dataset=100, seed=seed)
    distinct = keys.drop_duplicates()
    sizes = distinct.groupby("dataset").size()
    assert whole.groupby("dataset").size().to_dict() == sizes.clip(upper=100).to_dict()
    assert not whole.duplicated().any()
    assert len(whole.merge(distinct)) == len(whole)  # sampled keys are input keys

    shuffled = keys.sample(frac=1, random_state=seed + 1)
    pd.testing.assert_frame_equal(sample_keys(shuffled, per_dataset=100, seed=seed), whole)
    bounds = np.linspace(0, len(shuffled), 8).astype(int)
    parts = [shuffled.iloc[a:b] for a, b in itertools.pairwise(bounds)]
    union = pd.concat([sample_keys(p, per_dataset=100, seed=seed) for p in parts])
    pd.testing.assert_frame_equal(sample_keys(union, per_dataset=100, seed=seed), whole)

    other = sample_keys(keys, per_dataset=100, seed=seed + 1)
    big = whole["dataset"] == "big"
    assert set(other.loc[other["dataset"] == "big", "utt_id"]) != set(whole.loc[big, "utt_id"])


def _good_systems(n: int = 200, seed: int = 1) -> pd.DataFrame:
    """Three distinct good systems (1, 2 and 3 % word errors, independent), as on a clean
    benchmark where every pair differs by a few points: the relative near-duplicate warning
    cannot single a pair out there. Errors are substituted words, which every normaliser
    leaves as they are."""
    rng = np.random.default_rng(seed)

    def said(words: list[str], rate: float) -> str:
        return " ".join(w if rng.random() >= rate else str(rng.choice(WORDS)) for w in words)

    rows = []
    for i in range(n):
        words = list(rng.choice(WORDS, size=12))
        for system, rate in (("best", 0.01), ("good", 0.02), ("fair", 0.03)):
            rows.append(("d", f"u{i:03d}", system, said(words, rate), " ".join(words)))
    return pd.DataFrame(rows, columns=["dataset", "utt_id", "system", "hypothesis", "reference"])


def _with_copy(table: pd.DataFrame, share: float = 0.01) -> pd.DataFrame:
    """``table`` and ``good-v2``: good's outputs with ``share`` of its utterances changed
    (fair's hypothesis there), as two hosted builds of one model."""
    copy = table[table["system"] == "good"].assign(system="good-v2").reset_index(drop=True)
    fair = table[table["system"] == "fair"].set_index("utt_id")["hypothesis"]
    changed = copy.sample(frac=share, random_state=0).index
    copy.loc[changed, "hypothesis"] = fair.loc[copy.loc[changed, "utt_id"]].to_numpy()
    return pd.concat([table, copy], ignore_index=True)


def _notes(table: pd.DataFrame) -> list[dict]:
    from werest.estimation.guards import guard_warnings, sample_pairs

    pairs = sample_pairs(table, normaliser=Normaliser("none"))
    rows = table.assign(status="ok", proxy="x", proxy_words=12, est_ref_words=12)
    return [w for w in guard_warnings(table, rows, pairs) if "near-duplicates" in w["message"]]


def test_near_identical_outputs_are_noted_where_the_relative_guard_is_silent():
    """A copy of a system with 1 % of its utterances changed differs from it by far under
    1 % of its words: noted, with both names; distinct good systems (2–5 % apart) are not."""
    assert _notes(_good_systems()) == []
    (note,) = _notes(_with_copy(_good_systems()))
    assert note["systems"] == ["good", "good-v2"]
    assert note["message"].startswith("good and good-v2 are near-duplicates: their outputs ")
    assert "on 200 sampled utterances (under 1 %)" in note["message"]


def test_hosted_copies_of_one_model_are_one_note():
    """Three near-identical systems are one note naming all three, not three pairwise ones."""
    table = _with_copy(_good_systems())
    third = table[table["system"] == "good"].assign(system="good-v3")
    (note,) = _notes(pd.concat([table, third], ignore_index=True))
    assert note["systems"] == ["good", "good-v2", "good-v3"]
    assert note["message"].startswith("good, good-v2 and good-v3 are near-duplicates")
    assert "differ pairwise by 0.00–" in note["message"]


def test_few_shared_utterances_are_no_evidence_of_a_copy():
    from werest.estimation.guards import NEAR_IDENTICAL_SHARED

    assert _notes(_with_copy(_good_systems(n=NEAR_IDENTICAL_SHARED - 1), share=0.0)) == []


def test_the_near_duplicate_note_reaches_summary_json_and_the_leaderboard(tmp_path, capsys):
    write_table(_with_copy(_good_systems()), tmp_path / "t.csv")
    assert main(["estimate", f"input={tmp_path / 't.csv'}", f"output_dir={tmp_path / 'e'}"]) == 0
    assert "warning: d: good and good-v2 are near-duplicates" in capsys.readouterr().out
    records = json.loads((tmp_path / "e" / "summary.json").read_text())
    noted = {r["system"] for r in records if any("near-duplicates" in w for w in r["warnings"])}
    assert noted == {"good", "good-v2"}
    args = ["leaderboard", f"input={tmp_path / 't.csv'}", f"output_dir={tmp_path / 'lb'}"]
    assert main([*args, "fairness.enabled=false"]) == 0
    assert "warning: d: good and good-v2 are near-duplicates" in capsys.readouterr().out
    markdown = (tmp_path / "lb" / "leaderboard.md").read_text()
    assert "good and good-v2 are near-duplicates" in markdown
