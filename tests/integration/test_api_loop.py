"""A notebook runs the whole label loop through :mod:`werest.api`, with no command (issue 48):
``werest.sample`` draws each sheet, the notebook fills it, ``werest.decide`` and
``werest.estimate(labels=...)`` read the sheets. The commands, given the same sheets as
files, draw the same next sheet and write the same ``winner.json``."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import werest
from tests.helpers import run_cli
from tests.unit.test_winner import synthetic_table
from werest.estimation.decision import DECIDED, GOOD, WinnerSettings


@pytest.fixture(scope="module")
def notebook():
    """Rounds of 10 draws until every dataset is answered (or five rounds), in Python only:
    the table without its references, the truth to fill each sheet with, the sheets, and
    each round's decisions."""
    full = synthetic_table([0.04, 0.09, 0.15], n=300, seed=5)
    truth = full.drop_duplicates("utt_id").set_index("utt_id")["reference"]
    table = full.drop(columns=["reference"])
    sheets, rounds = [], []
    for _ in range(5):
        draw = werest.sample(table, 10, labels=sheets or None, strategy="winner")
        rounds.append(draw.decisions)
        if draw.sheet.empty:
            break
        sheet = draw.sheet.copy()
        sheet["reference"] = truth.reindex(sheet["utt_id"]).to_numpy()
        sheets.append(sheet)
    return table, sheets, rounds


def test_the_loop_reaches_an_answer_in_python(notebook):
    table, sheets, rounds = notebook
    decisions = werest.decide(table, sheets)
    assert len(decisions) == 1 and decisions[0]["status"] in (DECIDED, GOOD)
    assert decisions[0]["winner"] == "s0"  # the lowest true WER (synthetic_table names s0, s1, ...)
    assert decisions[0]["labels_used"] == len(pd.concat(sheets)["utt_id"].unique())
    assert rounds[0][0]["labels_used"] == 0  # the first sheet starts from no label
    # the estimate with the sheets carries the same decision, and labelled estimates
    estimates = werest.estimate(table, labels=sheets)
    assert estimates.decisions == decisions
    assert set(estimates.summary["method"]) != {"zero_label"}


def test_the_commands_agree_with_the_notebook(notebook, tmp_path, capsys):
    """The same sheets, as files: ``werest estimate labels=`` writes the decision
    ``werest.decide`` returned, and ``werest sample`` after the first sheets draws the sheet
    ``werest.sample`` drew."""
    table, sheets, _ = notebook
    table.to_csv(tmp_path / "calls.csv", index=False)
    paths = []
    for number, sheet in enumerate(sheets):
        paths.append(tmp_path / f"s{number}.csv")
        sheet.to_csv(paths[-1], index=False)
    listed = f"labels=[{','.join(map(str, paths))}]"
    status, _, err = run_cli(
        capsys, "estimate", f"input={tmp_path / 'calls.csv'}", listed, f"output_dir={tmp_path}/e"
    )
    assert status == 0, err
    written = json.loads((tmp_path / "e" / "winner.json").read_text())
    assert written == json.loads(json.dumps(werest.decide(table, sheets)))
    first = f"labels=[{paths[0]}]"
    out = tmp_path / "next.csv"
    command = ["sample", f"input={tmp_path / 'calls.csv'}", "budget=10", "strategy=winner"]
    status, _, err = run_cli(capsys, *command, f"out={out}", first)
    assert status == 0, err
    by_command = pd.read_csv(out, keep_default_na=False, dtype=str)
    by_api = werest.sample(table, 10, labels=[sheets[0]]).sheet
    assert by_command["utt_id"].tolist() == by_api["utt_id"].astype(str).tolist()
    assert by_command["draw_order"].tolist() == by_api["draw_order"].astype(str).tolist()


def test_the_api_takes_the_decisions_settings(notebook):
    """The margin is the larger of ``margin`` and ``relative_margin`` × the leader's WER; a
    smaller α can only widen the certificate."""
    table, sheets, _ = notebook
    wide = werest.decide(table, sheets[:1], winner=WinnerSettings(margin=3.0, relative_margin=0))
    assert wide[0]["margin"] == 3.0
    loose = werest.decide(table, sheets[:1])
    strict = werest.decide(table, sheets[:1], winner=WinnerSettings(alpha=0.001))
    assert strict[0]["regret_bound"] >= loose[0]["regret_bound"]
