"""The label loop's console: the decision, one plain line per dataset (the status, the
certificate, the forecast), its notes below it (:func:`format_winner`), and the sheet just
drawn (:func:`format_draw`)."""

from __future__ import annotations

import pandas as pd

from werest.estimation.labels import with_label_notes  # noqa: F401 (the notes under it)
from werest.estimation.status import DECIDED, GOOD, UNDECIDED


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


def format_draw(
    sheet: pd.DataFrame, widths: pd.Series | None = None, pilots: dict[str, int] | None = None
) -> str:
    """One line per dataset: its utterances N, the draws and the distinct utterances drawn,
    and, with the model's predictions (``widths``:
    :func:`werest.estimation.sampling.expected_half_width`), the interval to expect from
    the labels and the predictions at this budget; ``pilots``: the labelled draws of the
    datasets whose promise a pilot measured."""
    lines = []
    for dataset, rows in sheet.groupby("dataset", sort=True):
        new = int((rows["reference"].astype(str).str.strip() == "").sum())
        line = (
            f"{dataset}: N={int(rows['n_utterances'].iat[0])}, drawn {int(rows['draws'].sum())}, "
            f"distinct {len(rows)}, to transcribe {new} ({rows['strategy'].iat[0]})"
        )
        if widths is not None and dataset in widths.index and widths[dataset] > 0:
            half, pilot = 100 * widths[dataset], (pilots or {}).get(dataset)
            line += f"; expect a 95 % interval of about ±{half:.1f} points " + (
                f"once these are in (measured on the {pilot} labelled draws already in)"
                if pilot
                else "from these labels with the predictions (from the predictions alone: "
                "a pilot of 20 labels, then labels=, measures it on your audio; "
                "docs/few_labels.md)"
            )
        lines.append(line)
    if widths is None and not (sheet["strategy"] == "winner").all():
        lines.append(
            "(the interval to expect needs the model's predictions: strategy=active or "
            "stratified compute them)"
        )
    return "\n".join(lines)


def answered_line(draw, out) -> str:
    """What ``werest sample`` says when it has nothing to draw: the question is answered
    (every dataset ``decided`` or ``good``), no dataset has two systems to compare, or every
    utterance is labelled; no sheet is written."""
    if draw.decisions:
        return (
            f"every dataset is answered (decided or good): no sheet written to {out}; the "
            "answer is above and in winner.json (werest estimate labels=[...] with the "
            "sheets so far)"
        )
    if draw.strategy == "winner":
        why = "no dataset has two systems to compare"
    else:
        why = "every utterance is labelled already"
    return f"nothing to draw: {why}; no sheet written to {out}"
