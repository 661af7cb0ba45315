"""werest estimate says which evidence its estimates rest on, and how to use audio the model
ignores (issue 37: audio as a first-class input)."""

from __future__ import annotations

import pandas as pd

from tests.helpers import run_cli
from werest.demo import demo_table_path
from werest.model.files import load_models
from werest.report.estimate_report import evidence_line


def test_the_default_model_rests_on_text_and_points_to_the_audio_model(tmp_path, capsys):
    table = pd.read_csv(demo_table_path())
    table.assign(audio=[f"clips/{u}.wav" for u in table["utt_id"]]).to_csv(
        tmp_path / "t.csv", index=False
    )
    status, out, err = run_cli(
        capsys, "estimate", f"input={tmp_path / 't.csv'}", f"output_dir={tmp_path / 'o'}"
    )
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "Which system is best:"  # the shortlist leads (docs/winner.md)
    first = next(line for line in lines if line.startswith("evidence:"))
    assert first.startswith("evidence: text agreement with a proxy (pWER, pCER). ")
    assert "model_path=audio audio_scoring.enabled=true" in first
    status, out, err = run_cli(
        capsys, "estimate", f"input={demo_table_path()}", f"output_dir={tmp_path / 'p'}"
    )
    assert status == 0, err
    assert "evidence: text agreement with a proxy (pWER, pCER)" in out.splitlines()


def test_the_audio_model_names_the_whisper_likelihood():
    line = evidence_line(load_models("audio"), has_audio=True)
    assert line == (
        "evidence: text agreement with a proxy (pWER, pCER); "
        "the audio's likelihood of each hypothesis (Whisper, wl_*)"
    )


def test_inline_audio_scoring_is_refused_where_it_cannot_help(tmp_path, capsys):
    """audio_scoring.enabled=true: for a model that reads no wl_* feature, in a partitioned
    run, or on a table without audio, one line and exit 2 before any scoring, nothing
    written."""
    table = tmp_path / "t.csv"
    pd.read_csv(demo_table_path()).to_csv(table, index=False)  # no audio column
    cases = {
        (): "which this model does not read: use model_path=audio",
        ("model_path=audio", "partition.rows=10"): "not supported in a partitioned run",
        ("model_path=audio",): "has no `audio` column",
    }
    for index, (extra, message) in enumerate(cases.items()):
        out = tmp_path / f"o{index}"
        status, _, err = run_cli(
            capsys,
            "estimate",
            f"input={table}",
            f"output_dir={out}",
            "audio_scoring.enabled=true",
            *extra,
        )
        assert status == 2 and message in err and err.strip().count("\n") == 0, err
        assert not out.exists()
