"""Unlabellable rows (issue 42): a sheet row marked ``skip`` (an empty reference, no speech to
transcribe) stays in the design as a draw whose true errors and words are 0, so the estimate
is the corpus WER of the labellable utterances, unbiased for every design, and the count is
reported; an empty reference without the mark is still a one-line error."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from tests.conftest import REPO
from tests.helpers import assert_one_line_error, run_cli

DEMO = REPO / "src" / "werest" / "data" / "demo_transcripts.csv"


def _sheet(tmp_path, skip_utt: str = "m03", mark="true", reference="") -> str:
    """Every demo utterance labelled with its own reference (a census), ``skip_utt``'s row
    given ``reference`` and ``skip=mark``; the input has no references."""
    table = pd.read_csv(DEMO)
    table.drop(columns="reference").to_csv(tmp_path / "input.csv", index=False)
    sheet = table.drop_duplicates(["dataset", "utt_id"])[["dataset", "utt_id", "reference"]]
    sheet = sheet.assign(skip="")
    at = sheet["utt_id"] == skip_utt
    sheet.loc[at, "reference"] = reference
    sheet.loc[at, "skip"] = mark
    path = tmp_path / "labels.csv"
    sheet.to_csv(path, index=False)
    return str(path)


def test_a_skipped_row_gives_the_labellable_utterances_wer(tmp_path, monkeypatch, capsys):
    """A census with one utterance marked skip=true: the estimate is exactly the corpus WER
    of the other utterances (what ``werest score`` gives without that utterance); summary.json
    and the console report it; the other dataset has no skipped row."""
    monkeypatch.chdir(tmp_path)
    labels = _sheet(tmp_path)
    status, out, err = run_cli(
        capsys,
        "estimate",
        "input=input.csv",
        f"labels={labels}",
        "few_labels.min_labels=2",
        "output_dir=out",
    )
    assert status == 0, err
    records = json.loads((tmp_path / "out" / "summary.json").read_text())
    meetings = [r for r in records if r["dataset"] == "demo-meetings"]
    calls = [r for r in records if r["dataset"] == "demo-calls"]
    assert {r["n_skipped"] for r in meetings} == {1}
    assert {r["n_labelled"] for r in meetings} == {7}  # 8 drawn, 1 skipped
    assert {r["n_skipped"] for r in calls} == {0}
    assert [r["unlabellable_share"] for r in meetings] == pytest.approx([1 / 8] * len(meetings))
    assert "1 utterance marked skip" in out + err
    # the truth of the labellable utterances, as werest score counts it
    table = pd.read_csv(DEMO)
    table[table["utt_id"] != "m03"].to_csv(tmp_path / "labellable.csv", index=False)
    status, _, err = run_cli(capsys, "score", "input=labellable.csv", "output_dir=score")
    assert status == 0, err
    scores = pd.read_csv(tmp_path / "score" / "scores.csv")
    truth = dict(
        zip(
            zip(scores["dataset"], scores["system"], strict=True),
            scores["wer"].astype(float),
            strict=True,
        )
    )
    for r in records:
        assert r["method"] == "ppi"
        assert r["estimated_wer"] == pytest.approx(truth[(r["dataset"], r["system"])])


@pytest.mark.parametrize("mark", ["yes", "X", "1", " TRUE "])
def test_documented_skip_values(tmp_path, monkeypatch, capsys, mark):
    monkeypatch.chdir(tmp_path)
    labels = _sheet(tmp_path, mark=mark)
    status, _, err = run_cli(
        capsys, "estimate", "input=input.csv", f"labels={labels}", "output_dir=out"
    )
    assert status == 0, err
    records = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert max(r["n_skipped"] for r in records) == 1


@pytest.mark.parametrize(
    ("mark", "reference", "fragments"),
    [
        ("", "", ["'reference'", "empty reference", "skip=true"]),
        ("false", "", ["'reference'", "empty reference"]),
        ("maybe", "", ["'skip'", "skip must be one of"]),
        ("true", "some words", ["'skip'", "skip=true on a row with a reference"]),
    ],
)
def test_bad_skip_rows(tmp_path, monkeypatch, capsys, mark, reference, fragments):
    """An empty reference without the mark keeps its one-line error; an unknown mark, or a
    mark on a row that has a reference, is one too; nothing is written."""
    monkeypatch.chdir(tmp_path)
    labels = _sheet(tmp_path, mark=mark, reference=reference)
    status, _, err = run_cli(
        capsys, "estimate", "input=input.csv", f"labels={labels}", "output_dir=out"
    )
    assert_one_line_error(status, err, "estimate", *fragments)
    assert not (tmp_path / "out").exists()


def _frame(n: int = 400, seed: int = 0):
    """A dataset of ``n`` utterances, 2 systems, a fifth unlabellable: their true terms are 0
    (what :func:`werest.estimation.corpus.labelled_scores` gives a skipped row), while the
    predictions (which cannot tell) still see words and errors there."""
    from werest.estimation.ppi_frames import DatasetFrame

    rng = np.random.default_rng(seed)
    words = rng.integers(3, 30, size=(n, 1)).astype(float) * np.ones((1, 2))
    errors = rng.poisson(words * np.array([0.1, 0.3]))
    skip = rng.random(n) < 0.2
    errors[skip], truth_words = 0.0, np.where(skip[:, None], 0.0, words)
    pred = np.clip(errors + rng.normal(0, 1.5, errors.shape), 0, None) + skip[:, None] * 10.0
    frame = DatasetFrame(
        dataset="d",
        utterances=pd.Index([f"u{i:04d}" for i in range(n)]),
        systems=["a", "b"],
        pred_errors=pred,
        pred_words=words,
        present=np.ones((n, 2), dtype=bool),
        errors=errors.astype(float),
        words=truth_words,
    )
    return frame, skip


@pytest.mark.parametrize("design", ["random", "active"])
def test_skipped_draws_keep_the_design_weights_unbiased(design):
    """Simple random draws (weights 1) and with-replacement draws ∝ a score (weights
    1/(N p)) that meet unlabellable utterances: with the skipped draws kept as zeros and the
    design's weights unchanged, the mean of the prediction-powered estimate over many draws
    is the labellable utterances' WER; dropping the skipped draws instead is the same for the
    labels alone under simple random sampling, but biased for the prediction-powered estimate
    (the predictions' Σ ê over the unlabellable utterances is then never corrected)."""
    from werest.estimation.ppi import estimate_draws

    frame, skip = _frame()
    truth = frame.errors.sum(axis=0) / frame.words.sum(axis=0)
    rng = np.random.default_rng(1)
    p = np.full(frame.n, 1 / frame.n)
    if design == "active":
        p = frame.pred_errors.mean(axis=1) + 1.0
        p = p / p.sum()
    kept, dropped = [], []
    for _ in range(400):
        if design == "random":
            rows = rng.choice(frame.n, 60, replace=False)
        else:
            rows = rng.choice(frame.n, 60, replace=True, p=p)
        weight = 1.0 / (frame.n * p[rows])
        draws = frame.draws(rows, weight)
        draws.skipped = skip[rows]
        est = estimate_draws(draws, method="t", shrink_to_prior=False)
        kept.append(est.unshrunk)
        assert (est.n_labelled == (~skip[rows]).sum()).all()
        ok = ~skip[rows]
        est = estimate_draws(frame.draws(rows[ok], weight[ok]), method="t", shrink_to_prior=False)
        dropped.append(est.unshrunk)
    kept, dropped = np.mean(kept, axis=0), np.mean(dropped, axis=0)
    assert kept == pytest.approx(truth, abs=0.006)
    assert np.abs(dropped - truth).max() > 0.02  # the predictions' excess on skipped rows


def test_skipped_rows_score_zero_for_every_system():
    from werest.estimation.corpus import labelled_scores
    from werest.ingest.table import read_table
    from werest.text import Normaliser

    table = read_table(DEMO)
    labels = table.drop_duplicates(["dataset", "utt_id"])[["dataset", "utt_id", "reference"]]
    labels = labels.assign(skip=labels["utt_id"] == "m03")
    labels.loc[labels["skip"], "reference"] = ""
    scores = labelled_scores(table, labels, Normaliser())
    skipped = scores[scores["utt_id"] == "m03"]
    assert len(skipped) == 4
    assert (skipped["word_errors"] == 0).all() and (skipped["ref_words"] == 0).all()
    assert len(scores) == len(table)
