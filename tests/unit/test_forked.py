"""Work shared with a forked helper (:mod:`werest.forked`): the same results, in the same
order, as the serial map, whoever computed each item; a helper's failure or death costs
nothing but time; and the label loop's first round (normalisation and features) gives the same
rows with a helper as without one."""

from __future__ import annotations

import multiprocessing
import os
import sys
import time

import pandas as pd
import pytest

from tests.unit.test_feature_chunks import transcripts
from werest import forked
from werest.forked import helper_count, shared_map

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="helpers are forked on Linux only"
)


def _square(x: int) -> tuple[int, int]:
    time.sleep(0.002 * (x % 5))  # uneven items: the two processes interleave
    return x * x, os.getpid()


def test_shared_items_give_the_serial_results_in_order_and_a_helper_computed_some():
    items = list(range(60))
    results = list(shared_map(_square, items, helpers=1))
    assert [value for value, _ in results] == [x * x for x in items]
    pids = {pid for _, pid in results}
    assert os.getpid() in pids and len(pids) == 2  # this process and one helper


def test_first_runs_here_before_this_process_takes_an_item():
    seen = []

    def work(x):
        return x, os.getpid(), list(seen)

    results = list(shared_map(work, list(range(20)), helpers=1, first=lambda: seen.append(1)))
    assert [x for x, _, _ in results] == list(range(20))
    here = [before for _, pid, before in results if pid == os.getpid()]
    assert here and all(before == [1] for before in here)


def test_no_helper_or_one_item_is_the_plain_map():
    calls = []
    assert list(shared_map(lambda x: calls.append(x) or -x, [3], helpers=1)) == [-3]
    assert list(shared_map(lambda x: -x, [1, 2], helpers=0, first=lambda: calls.append(0))) == [
        -1,
        -2,
    ]
    assert calls == [3, 0]


def test_an_item_that_fails_raises_its_own_error_here():
    def work(x):
        if x == 7:
            raise ValueError(f"bad item {x}")
        time.sleep(0.001)
        return x

    with pytest.raises(ValueError, match="bad item 7"):
        list(shared_map(work, list(range(30)), helpers=1))


def test_a_helper_that_dies_leaves_its_items_to_this_process():
    parent = os.getpid()

    def work(x):
        if os.getpid() != parent:
            os._exit(3)  # the helper dies on its first item, sending nothing
        time.sleep(0.002)
        return x + 1

    assert list(shared_map(work, list(range(25)), helpers=1)) == [x + 1 for x in range(25)]


def test_a_helper_that_hangs_is_stopped_and_its_items_computed_here(monkeypatch):
    parent = os.getpid()
    monkeypatch.setattr(forked, "STALL_SECONDS", 0.5)

    def work(x):
        if os.getpid() != parent:
            time.sleep(60)  # never answers
        return 2 * x

    start = time.monotonic()
    assert list(shared_map(work, list(range(10)), helpers=1)) == [2 * x for x in range(10)]
    assert time.monotonic() - start < 20


def _helpers() -> list:
    return [p for p in multiprocessing.active_children() if p.name.startswith("werest-helper")]


def test_a_run_stopped_early_stops_its_helper():
    results = shared_map(_square, list(range(200)), helpers=1)
    next(results)
    assert len(_helpers()) == 1
    results.close()  # the consumer stops (an error, Ctrl-C): the helper is ended
    assert _helpers() == []


def test_helpers_go_to_big_tables_of_a_default_run_with_a_free_core(monkeypatch):
    monkeypatch.setattr(forked, "available_cores", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.2, 1.0, 1.0))  # this run, and a little
    assert forked.spare_cores() == pytest.approx(0.8)
    assert helper_count(1, forked.HELPER_ROWS) == 1
    assert helper_count(1, forked.HELPER_ROWS - 1) == 0  # not worth a fork
    assert helper_count(2, 10 * forked.HELPER_ROWS) == 0  # n_jobs > 1: joblib's workers
    monkeypatch.setattr(os, "getloadavg", lambda: (1.8, 1.0, 1.0))  # the other core is busy
    assert helper_count(1, 10 * forked.HELPER_ROWS) == 0
    monkeypatch.setattr(os, "getloadavg", lambda: (0.1, 0.1, 0.1))
    monkeypatch.setattr(forked, "available_cores", lambda: 1)  # taskset -c 0: one process
    assert helper_count(1, 10 * forked.HELPER_ROWS) == 0


# --------------------------------------------------------------------------- the first round


@pytest.fixture
def computed_in(monkeypatch) -> set[int]:
    """The processes that computed the items of every shared_map call; this process takes
    its first item once a helper has computed one (however busy the machine)."""
    pids: set[int] = set()
    real = forked.shared_map

    def spying(function, items, *, first=None, **options):
        parent, helped = os.getpid(), multiprocessing.get_context("fork").Event()

        def tagged(item):
            if os.getpid() != parent:
                helped.set()
            return os.getpid(), function(item)

        def waiting():
            helped.wait(timeout=30)
            if first is not None:
                first()

        for pid, result in real(tagged, items, first=waiting, **options):
            pids.add(pid)
            yield result

    monkeypatch.setattr(forked, "shared_map", spying)
    return pids


def test_normalising_with_a_helper_gives_the_serial_strings(computed_in):
    from werest.text import as_normaliser, normalise_many

    texts = transcripts()["hypothesis"]
    normaliser = as_normaliser("whisper_english")
    serial = normalise_many(texts, normaliser, chunk_size=50)
    assert not computed_in
    shared = normalise_many(texts, normaliser, chunk_size=50, helpers=1)
    pd.testing.assert_series_equal(shared, serial)
    assert len(computed_in - {os.getpid()}) == 1  # a helper normalised some


def test_features_with_a_helper_are_the_serial_rows_in_the_serial_order(monkeypatch, computed_in):
    """Four chunks, shared with a helper or not: the same rows in the same order, the same
    predictions."""
    import werest.estimation.estimate as estimate
    from werest.model.files import load_models

    table = transcripts()
    models = load_models()
    targets = sorted(table["system"].unique())
    monkeypatch.setattr(estimate, "STEP_UTTERANCES", 40)
    monkeypatch.setattr(estimate, "STEP_ROWS", 400)  # 2 blocks of 40 utterances a chunk
    monkeypatch.setattr(estimate.logs, "bars_shown", lambda: False)
    serial = estimate.estimate_utterances(table, models, targets)
    assert not computed_in
    shared = estimate.estimate_utterances(table, models, targets, helpers=1)
    pd.testing.assert_frame_equal(shared, serial)
    assert len(computed_in - {os.getpid()}) == 2  # a helper normalised, another built chunks
