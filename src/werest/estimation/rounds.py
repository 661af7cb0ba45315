"""The decision round by round (:func:`label_rounds`): what ``winner.json`` said after each
sheet of a label loop, from the sheets a :class:`werest.estimation.loop.LabelRound` read.

Round k is the sheets numbered k or less (``labels["sheet"]``, as
:func:`werest.estimation.labels.read_labels` numbers them): the decision ``werest estimate
labels=[s0,...,sk]`` writes. The last round is the round's own decision. The leaderboard's
page plots each dataset's certificate against the transcripts it took
(:mod:`werest.report.page.decision`).

This module takes the round it is given and imports no estimate: the commands that build a
:class:`~werest.estimation.loop.LabelRound` pass it in (docs/architecture.md, the import
chain).
"""

from __future__ import annotations

import dataclasses
import tempfile

import pandas as pd

#: One row per (dataset, round): ``round`` (the highest sheet number in it), ``sheets`` (the
#: sheets read so far), ``labels_used`` (distinct utterances transcribed), ``draws``, the
#: ``status``, ``leader``, ``winner``, ``runner_up``, ``regret_bound``, the runner-up minus the
#: leader (``difference`` with its confidence sequence ``low``/``high``), ``margin`` (points)
#: and ``labels_to_go``, as in ``winner.json``.
ROUND_COLUMNS = [
    "dataset",
    "round",
    "sheets",
    "labels_used",
    "draws",
    "status",
    "leader",
    "winner",
    "runner_up",
    "regret_bound",
    "difference",
    "low",
    "high",
    "margin",
    "labels_to_go",
]


def label_rounds(loop, decisions: list[dict] | None = None) -> pd.DataFrame:
    """One row per (dataset, round) of ``loop`` (a
    :class:`~werest.estimation.loop.LabelRound` that has read its sheets; an empty frame
    before any): the decision from the sheets numbered up to each sheet number read
    (:data:`ROUND_COLUMNS`). ``decisions``: ``loop.decide()`` when the caller has it already
    (the last round's). Every round shares the loop's zero-label estimate, and the contests
    are kept between rounds (in the loop's ``cache_dir``, else in a folder of their own for
    this call)."""
    if loop.labels is None or not len(loop.labels):
        return pd.DataFrame(columns=ROUND_COLUMNS)
    numbers = sorted(int(n) for n in loop.labels["sheet"].unique())
    zero_label = loop.zero_label  # computed once, shared
    rows = []
    with tempfile.TemporaryDirectory(prefix="werest-rounds-") as scratch:
        cache_dir = loop.cache_dir if loop.cache_dir is not None else scratch
        for count, number in enumerate(numbers, start=1):
            if number == numbers[-1]:
                said = decisions if decisions is not None else loop.decide()
            else:
                sheets = loop.labels[loop.labels["sheet"] <= number].reset_index(drop=True)
                earlier = dataclasses.replace(loop, labels=sheets, notes=[], cache_dir=cache_dir)
                earlier.zero_label = zero_label
                said = earlier.decide()
            rows += [_row(entry, number, count) for entry in said]
    frame = pd.DataFrame(rows, columns=ROUND_COLUMNS).astype({"labels_to_go": "Int64"})
    return frame.sort_values(["dataset", "round"], kind="stable", ignore_index=True)


def _row(entry: dict, number: int, count: int) -> dict:
    return {
        "dataset": entry["dataset"],
        "round": number,
        "sheets": count,
        **{key: entry.get(key) for key in ROUND_COLUMNS if key not in ("round", "sheets")},
    }
