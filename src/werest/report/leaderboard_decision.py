"""The leaderboard's lead with ``labels=``: which system is best per dataset, as people read
it. One plain line per dataset (:func:`decision_lines`), the decision as a table
(:func:`decision_view`), the decision after each sheet (:func:`rounds_view`) and
``leaderboard.md``'s first section (:func:`decision_markdown`); the page's tab
(:mod:`werest.report.page.decision`) shows the same views. The console's block is
:func:`werest.report.decision_text.format_winner`, as ``werest estimate`` prints it.

Labels are counted as transcripts: ``labels_used`` is the distinct utterances transcribed,
not the draws (an utterance drawn twice is transcribed once).
"""

from __future__ import annotations

import pandas as pd

from werest.estimation.status import DECIDED, GOOD
from werest.formatting import markdown_table, missing, number, plural

#: what the decision is, for a reader (above its lines)
DECISION_HEAD = (
    "Which system is best, from the transcripts of the sheets given (labels=), as werest "
    "estimate labels= decides it (winner.json; docs/winner.md); each bound holds, at level "
    "1 − winner.alpha (95 % by default), however and whenever you stop:"
)


def decision_lines(decisions: list[dict]) -> list[str]:
    """One plain line per dataset: the status, the winner or the leader, ``regret_bound``,
    ``may_be_best`` and the transcripts used."""
    return [f"{entry['dataset']}: {_said(entry)}" for entry in decisions]


def _said(entry: dict) -> str:
    transcripts = (
        "every utterance transcribed: exact"
        if entry.get("exact")
        else f"from {plural(int(entry['labels_used']), 'transcript')}"
    )
    regret = (
        "no bound yet"
        if missing(entry.get("regret_bound"))
        else f"at most {number(entry['regret_bound'], 2)} points worse than the best"
    )
    others = [s for s in entry.get("may_be_best", []) if s != (entry["winner"] or entry["leader"])]
    may = f"; may also be best: {', '.join(others)}" if others else ""
    if entry["status"] == DECIDED:
        return f"{entry['winner']}, decided: every other system is worse ({transcripts})"
    if entry["status"] == GOOD:
        return (
            f"{entry['winner']}, good: {regret}, within the margin of "
            f"{number(entry['margin'], 2)} ({transcripts}){may}"
        )
    to_go = entry.get("labels_to_go")
    more = f"; about {plural(int(to_go), 'more transcript')} to within the margin" if to_go else ""
    return f"undecided: {entry['leader']} leads, {regret} ({transcripts}){may}{more}"


def decision_view(decisions: list[dict]) -> pd.DataFrame:
    """The decision per dataset as display strings (points of WER)."""
    return pd.DataFrame(
        {
            "dataset": [e["dataset"] for e in decisions],
            "status": [e["status"] for e in decisions],
            "winner / leader": [
                e["winner"] if e["winner"] else f"{e['leader']} (leads)" for e in decisions
            ],
            "regret bound pts": [number(e.get("regret_bound"), 2) for e in decisions],
            "margin pts": [number(e.get("margin"), 2) for e in decisions],
            "may be best": [", ".join(e.get("may_be_best", [])) for e in decisions],
            "transcripts": [int(e["labels_used"]) for e in decisions],
            "more to go": [
                "" if missing(e.get("labels_to_go")) else str(int(e["labels_to_go"]))
                for e in decisions
            ],
        }
    )


def rounds_view(rounds: pd.DataFrame) -> pd.DataFrame:
    """The decision after each sheet (:func:`werest.estimation.rounds.label_rounds`) as
    display strings: the runner-up minus the leader with its confidence sequence."""
    return pd.DataFrame(
        {
            "dataset": rounds["dataset"],
            "sheet": rounds["round"],
            "transcripts": rounds["labels_used"],
            "status": rounds["status"],
            "leader": rounds["leader"],
            "regret bound pts": rounds["regret_bound"].map(lambda v: number(v, 2)),
            "runner-up": rounds["runner_up"].fillna(""),
            "runner-up − leader pts": [
                f"{number(d, 2)} [{number(lo, 2)}, {number(hi, 2)}]"
                for d, lo, hi in rounds[["difference", "low", "high"]].itertuples(index=False)
            ],
        }
    )


def decision_markdown(decisions: list[dict] | None, rounds, notes: list[str]) -> list[str]:
    """``leaderboard.md``'s first section with ``labels=``: the decision's lines, its notes,
    its table and the decision after each sheet; [] without a decision."""
    if not decisions:
        return []
    lines = ["## Which system is best", "", DECISION_HEAD, ""]
    for entry, line in zip(decisions, decision_lines(decisions), strict=True):
        lines += [f"- {line}", *(f"  - note: {note}" for note in entry.get("notes", []))]
    lines += [f"- note: {note}" for note in notes]
    lines += ["", markdown_table(decision_view(decisions)), ""]
    if rounds is not None and len(rounds):
        lines += [
            "### Round by round",
            "",
            "The decision after each sheet (sheet k: the sheets numbered k or less; "
            "`winner_rounds.csv`).",
            "",
            markdown_table(rounds_view(rounds)),
            "",
        ]
    return lines
