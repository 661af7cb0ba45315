"""A ``strategy=winner`` sheet records the order of its draws (``draw_order``), and the
decision reads each sheet's draws back in that order (:func:`werest.estimation.winner.
sheet_batches`), whatever order the sheet's rows are in (issue 47)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.unit.test_winner import synthetic_table
from werest.estimation import winner as W
from werest.evaluation.winner import scored_contests
from werest.text import as_normaliser

#: a first sheet's draws: enough of 120 utterances that some is drawn twice
DRAWS = 40


@pytest.fixture(scope="module")
def contest():
    contests, errors, _ = scored_contests(
        synthetic_table([0.02, 0.12, 0.20], n=120), as_normaliser("whisper_basic")
    )
    return contests["d"], errors["d"]


def drawn_sheet(contest, errors, seed: int = 3) -> tuple[pd.DataFrame, np.ndarray]:
    """A first sheet of DRAWS draws as read_labels returns it, and the positions
    :func:`next_batch` drew with the same generator, in their order."""
    sheet, decision = W.winner_sheet(contest, [], errors, DRAWS, rng=np.random.default_rng(seed))
    batch, _ = W.next_batch(
        contest, decision, DRAWS, W.WINNER_UNIFORM_SHARE, np.random.default_rng(seed)
    )
    return sheet.assign(dataset="d", sheet=0, strategy="winner"), batch.positions


def test_the_sheet_records_the_order_of_its_draws(contest):
    sheet, positions = drawn_sheet(*contest)
    assert sheet["draws"].sum() == DRAWS and len(sheet) < DRAWS  # some utterance drawn twice
    places = {
        int(place): utt
        for utt, cell in zip(sheet["utt_id"], sheet["draw_order"], strict=True)
        for place in cell.split("|")
    }
    assert [places[k] for k in range(DRAWS)] == list(contest[0].utterances[positions])


def test_the_decision_reads_the_draws_in_the_recorded_order(contest):
    sheet, positions = drawn_sheet(*contest)
    batches, notes = W.sheet_batches(contest[0], sheet)
    assert not notes and list(batches[0].positions) == list(positions)
    shuffled = sheet.iloc[np.random.default_rng(1).permutation(len(sheet))]
    assert list(W.sheet_batches(contest[0], shuffled)[0][0].positions) == list(positions)


def test_a_sheet_without_a_recorded_order_keeps_the_fallback(contest):
    sheet, positions = drawn_sheet(*contest)
    old = sheet.drop(columns="draw_order")
    rows = contest[0].utterances.get_indexer(old["utt_id"])
    expected = W.draw_order(np.repeat(rows, old["draws"].to_numpy()), "d", 0)
    (batch,), _ = W.sheet_batches(contest[0], old)
    assert list(batch.positions) == list(expected)
    assert sorted(batch.positions) == sorted(positions)
