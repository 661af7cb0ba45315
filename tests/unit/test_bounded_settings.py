"""Every number a command takes has declared bounds (werest.cli.schema, scikit-learn style),
checked before any work starts; work whose memory is known in advance is refused when it
cannot fit (few_labels' bootstrap)."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.helpers import assert_one_line_error, run_cli
from werest.cli.declare import Setting, entries
from werest.cli.schema import SCHEMAS
from werest.demo import demo_table_path
from werest.estimation.labels import LabelSettings, check_bootstrap_memory
from werest.estimation.ppi import bootstrap_bytes, resample_counts
from werest.formatting import size
from werest.settings import MAX_RESAMPLES

HUGE = 100_000_000_000
DEMO_TABLE = demo_table_path()


def numbers():
    for command, schema in SCHEMAS.items():
        for entry in entries(schema):
            if entry.setting is not None and entry.setting.kind in (int, float):
                yield command, entry.key, entry.setting


def test_every_number_declares_its_bounds():
    # n_jobs counts cores as joblib does (-1: all, -2: all but one): only 0 is refused
    unbounded = [
        f"{command} {key}"
        for command, key, rule in numbers()
        if rule.minimum is None and rule.maximum is None and not rule.nonzero
    ]
    assert unbounded == []


def test_every_resample_count_has_a_maximum():
    counts = [(c, k, r) for c, k, r in numbers() if k.endswith("n_resamples")]
    assert counts
    assert all(rule.maximum == MAX_RESAMPLES for _, _, rule in counts)


def test_levels_and_shares_are_open_intervals():
    rules = {(c, k): r for c, k, r in numbers()}
    for key in ("bootstrap.confidence", "few_labels.level"):
        assert rules[("leaderboard", key)].bounds() == "in (0, 1)"
    assert rules[("sample", "uniform_share")].bounds() == "in (0, 1]"


@pytest.mark.parametrize(
    ("rule", "inside", "outside"),
    [
        (Setting(int, minimum=0, maximum=10), [0, 10], [-1, 11]),
        (Setting(float, minimum=0, maximum=1, closed="neither"), [0.5], [0, 1]),
        (Setting(float, minimum=0, maximum=1, closed="right"), [1], [0]),
        (Setting(float, minimum=0, maximum=1, closed="left"), [0], [1]),
        (Setting(int, nonzero=True), [-2, 1], [0]),
    ],
)
def test_bounds_allow_what_they_say(rule, inside, outside):
    assert all(rule.allows(x) for x in inside)
    assert not any(rule.allows(x) for x in outside)


@pytest.mark.parametrize(
    ("command", "setting", "words"),
    [
        ("leaderboard", f"bootstrap.n_resamples={HUGE}", "a whole number in [0, 1000000]"),
        ("score", f"bootstrap.n_resamples={HUGE}", "a whole number in [0, 1000000]"),
        ("estimate", f"few_labels.n_resamples={HUGE}", "a whole number in [1, 1000000]"),
        ("leaderboard", "bootstrap.confidence=1", "a number in (0, 1), got 1.0"),
        ("sample", "uniform_share=0", "a number in (0, 1], got 0.0"),
    ],
)
def test_an_out_of_bounds_number_is_one_line_before_any_work(
    capsys, tmp_path, command, setting, words
):
    out = tmp_path / "out"
    extra = ["labels=input"] if command == "estimate" else []
    place = f"out={out}" if command == "sample" else f"output_dir={out}"
    extra += ["budget=3"] if command == "sample" else []
    status, _, err = run_cli(capsys, command, f"input={DEMO_TABLE}", setting, place, *extra)
    assert_one_line_error(status, err, command, setting.split("=")[0], words)
    assert not out.exists()


def test_bootstrap_bytes_bound_what_resample_counts_allocates():
    counts = resample_counts(50, 40, seed=0)
    assert counts.nbytes <= bootstrap_bytes(50, 3, 40)
    assert bootstrap_bytes(6, 4, HUGE) > 2**40  # the reported 21.8 TiB run


def test_size_is_for_people():
    assert size(512) == "512 B"
    assert size(1536) == "1.5 KiB"
    assert size(24 * 2**40) == "24.0 TiB"


def test_a_bootstrap_that_cannot_fit_is_refused_before_it_starts():
    table = pd.read_csv(DEMO_TABLE)
    labels = table[["dataset", "utt_id", "reference"]].drop_duplicates(["dataset", "utt_id"])
    labels = labels.assign(draws=float("nan"), expected_draws=float("nan"))
    boot = LabelSettings(interval="bootstrap", n_resamples=1_000_000)
    with pytest.raises(Exception) as caught:
        check_bootstrap_memory(labels, table, boot, available=2**30)
    message = str(caught.value)
    assert "needs" in message and "1.0 GiB is available" in message
    assert "lower few_labels.n_resamples to at most" in message
    assert "few_labels.interval=t" in message
    check_bootstrap_memory(labels, table, boot, available=2**40)  # fits: nothing said
    check_bootstrap_memory(labels, table, LabelSettings(n_resamples=1_000_000), available=1)


def test_the_cli_refuses_a_bootstrap_beyond_memory(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr("werest.resources.available_memory", lambda: 2**30)
    out = tmp_path / "out"
    status, _, err = run_cli(
        capsys,
        "estimate",
        f"input={DEMO_TABLE}",
        "labels=input",
        "few_labels.interval=bootstrap",
        "few_labels.n_resamples=1000000",
        f"output_dir={out}",
    )
    assert_one_line_error(status, err, "estimate", "of memory", "few_labels.n_resamples")
    assert not out.exists()


def test_n_jobs_stops_at_four_workers_per_core(capsys, tmp_path):
    from werest.settings import N_JOBS_PER_CORE, available_cores

    most = N_JOBS_PER_CORE * available_cores()
    rules = {(c, k): r for c, k, r in numbers() if k == "n_jobs"}
    assert len(rules) == 7 and {r.maximum for r in rules.values()} == {most}
    assert all(r.allows(-1) and r.allows(most) and not r.allows(most + 1) for r in rules.values())
    status, _, err = run_cli(
        capsys, "estimate", f"input={DEMO_TABLE}", f"output_dir={tmp_path / 'out'}", "n_jobs=400"
    )
    assert_one_line_error(
        status,
        err,
        "estimate",
        f"n_jobs must be a whole number <= {most} other than 0, got 400",
        f"(at most {N_JOBS_PER_CORE} per core, and this machine gives werest {available_cores()})",
    )
    assert not (tmp_path / "out").exists()
