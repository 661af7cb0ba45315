"""werest estimate says which evidence its estimates rest on, and how to use audio the model
ignores (issue 37: audio as a first-class input)."""

from __future__ import annotations

import pandas as pd

from tests.helpers import run_cli
from werest.demo import demo_table_path
from werest.estimation.estimate import evidence_line, load_models


def test_the_default_model_rests_on_text_and_points_to_the_audio_model(tmp_path, capsys):
    table = pd.read_csv(demo_table_path())
    table.assign(audio=[f"clips/{u}.wav" for u in table["utt_id"]]).to_csv(
        tmp_path / "t.csv", index=False
    )
    status, out, err = run_cli(
        capsys, "estimate", f"input={tmp_path / 't.csv'}", f"output_dir={tmp_path / 'o'}"
    )
    assert status == 0, err
    first = out.splitlines()[0]
    assert first.startswith("evidence: text agreement with a proxy (pWER, pCER). ")
    assert "model_path=audio" in first and "embedder=whisper_likelihood" in first
    status, out, err = run_cli(
        capsys, "estimate", f"input={demo_table_path()}", f"output_dir={tmp_path / 'p'}"
    )
    assert status == 0, err
    assert out.splitlines()[0] == "evidence: text agreement with a proxy (pWER, pCER)"


def test_the_audio_model_names_the_whisper_likelihood():
    line = evidence_line(load_models("audio"), has_audio=True)
    assert line == (
        "evidence: text agreement with a proxy (pWER, pCER); "
        "the audio's likelihood of each hypothesis (Whisper, wl_*)"
    )
