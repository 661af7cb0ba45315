"""``werest score`` warns about a system that returned nothing on every utterance of a dataset,
as estimate and leaderboard do (werest.estimation.guards): its 100 % WER says the run failed
(issue 36's audit: score-mute-system printed no warning)."""

from __future__ import annotations

import pandas as pd

from tests.helpers import run_cli
from werest.demo import demo_table_path
from werest.text.scoring import format_scores, silent_system_warnings


def with_mute(tmp_path):
    table = pd.read_csv(demo_table_path(), keep_default_na=False)
    mute = table[table["system"] == "base"].assign(system="mute", hypothesis="")
    path = tmp_path / "t.csv"
    pd.concat([table, mute], ignore_index=True).to_csv(path, index=False)
    return path


def scores(empty: list[int]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "dataset": ["d1", "d1", "d2"],
            "system": ["a", "b", "b"],
            "n_utterances": [4, 4, 3],
            "wer": [0.1, 1.0, 1.0],
            "wer_ci_low": [0.0, 1.0, 1.0],
            "wer_ci_high": [0.2, 1.0, 1.0],
            "cer": [0.1, 1.0, 1.0],
            "empty_hypotheses": empty,
        }
    )


def test_only_a_system_empty_on_every_utterance_is_named():
    warnings = silent_system_warnings(scores([1, 4, 2]))
    assert len(warnings) == 1
    assert warnings[0].startswith("warning: d1: system b returned nothing on every utterance")
    assert "(4 utterances, every hypothesis empty)" in warnings[0]
    assert silent_system_warnings(scores([0, 3, 2])) == []
    assert silent_system_warnings(scores([0, 0, 0]).drop(columns="empty_hypotheses")) == []
    assert format_scores(scores([1, 4, 3])).splitlines()[-2:] == silent_system_warnings(
        scores([1, 4, 3])
    )


def test_score_warns_and_still_scores_the_silent_system(tmp_path, capsys):
    out = tmp_path / "out"
    status, printed, err = run_cli(
        capsys, "score", f"input={with_mute(tmp_path)}", f"output_dir={out}"
    )
    assert status == 0, err
    warnings = [line for line in printed.splitlines() if line.startswith("warning:")]
    assert [w.split(" returned")[0] for w in warnings] == [
        "warning: demo-calls: system mute",
        "warning: demo-meetings: system mute",
    ], printed
    table = pd.read_csv(out / "scores.csv")
    assert set(table.loc[table["system"] == "mute", "wer"]) == {1.0}
