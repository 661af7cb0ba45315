"""The features stage's chunks (:func:`werest.estimation.estimate.estimate_utterances`): blocks
of utterances for the progress bar's steps, several blocks a chunk when no bar shows. Whatever
the chunks, the rows are the same, in the same order (block by block), with the same values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import werest.estimation.estimate as estimate
from werest.model.files import load_models


def transcripts(n_utterances: int = 300, n_systems: int = 5, seed: int = 0) -> pd.DataFrame:
    """A table of ``n_utterances`` × ``n_systems`` noisy hypotheses, rows in any order."""
    rng = np.random.default_rng(seed)
    words = ["the", "cat", "sat", "on", "a", "mat", "Dr.", "twenty", "5", "it's", "don't"]
    rows = []
    for u in range(n_utterances):
        truth = list(rng.choice(words, size=int(rng.integers(2, 12))))
        for s in range(n_systems):
            hyp = [w if rng.random() > 0.1 * (s + 1) else str(rng.choice(words)) for w in truth]
            rows.append(
                {
                    "dataset": f"d{u % 2}",
                    "utt_id": f"u{u:04d}",
                    "system": f"sys{s}",
                    "hypothesis": " ".join(hyp).capitalize() + ".",
                }
            )
    frame = pd.DataFrame(rows)
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)


@pytest.mark.parametrize("step_rows", [1, 400, 10**9])  # a block, 2 blocks, all a chunk
def test_the_rows_do_not_depend_on_the_chunks(monkeypatch, step_rows):
    table = transcripts()
    models = load_models()
    targets = sorted(table["system"].unique())
    monkeypatch.setattr(estimate, "STEP_UTTERANCES", 40)
    monkeypatch.setattr(estimate.logs, "bars_shown", lambda: True)  # a chunk per block
    by_block = estimate.estimate_utterances(table, models, targets)
    monkeypatch.setattr(estimate.logs, "bars_shown", lambda: False)
    monkeypatch.setattr(estimate, "STEP_ROWS", step_rows)
    pd.testing.assert_frame_equal(estimate.estimate_utterances(table, models, targets), by_block)
