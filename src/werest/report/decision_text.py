"""The console's block of the label loop's decision: one plain line per dataset (the
status, the certificate, the forecast), its notes below it."""

from __future__ import annotations

from werest.estimation.decision import DECIDED, GOOD, UNDECIDED


def format_winner(entries: list[dict]) -> str:
    """The console's first block: per dataset, the shortlist, and with labels the decision
    and its certificate in one plain line (the notes below it)."""
    lines = ["Which system is best:"]
    for entry in entries:
        lines.append(f"  {entry['dataset']}: {_said(entry)}")
        lines += [f"    note: {note}" for note in entry.get("notes", [])]
    return "\n".join(lines)


def _said(entry: dict) -> str:
    """One dataset's line of :func:`format_winner`."""
    contenders, n = entry["contenders"], entry["labels_used"]
    if n == 0 and entry["status"] == UNDECIDED and entry.get("regret_bound") is None:
        if len(contenders) == 1:
            return f"{contenders[0]} (the only contender)"
        return (
            f"{len(contenders)} contenders: {', '.join(contenders)}; label to decide "
            "(werest sample strategy=winner)"
        )
    labels = (
        "every utterance labelled, the answer is exact"
        if entry.get("exact")
        else (f"{n} {'label' if n == 1 else 'labels'}")
    )
    regret = f"at most {entry['regret_bound']:.2f} points worse than the best"
    if entry["status"] == DECIDED:
        return (
            f"{entry['winner']}, decided ({labels}): every other system is worse; the least "
            f"clearly, {entry['runner_up']}, by {_interval(entry)} points"
        )
    if entry["status"] == GOOD:
        return (
            f"{entry['winner']}, good ({labels}): {regret} (margin {entry['margin']:.2f}); "
            f"may be best: {', '.join(entry['may_be_best'])}"
        )
    to_go = entry["labels_to_go"]
    return (
        f"undecided ({labels}): {entry['leader']} leads, {regret}; "
        f"{entry['runner_up']} is {_interval(entry)} points worse"
        + (f"; about {to_go} more labels to within {entry['margin']:.2f}" if to_go else "")
    )


def _interval(entry: dict) -> str:
    return f"{_signed(entry['difference'])} [{_signed(entry['low'])}, {_signed(entry['high'])}]"


def _signed(value) -> str:
    return "?" if value is None else f"{value:+.2f}"
