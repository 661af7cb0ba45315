"""``werest estimate``'s console: the summary as a table, the neighbours' differences and the
line on the evidence the estimates rest on. Presentation only: the records, pairs and models
come from :mod:`werest.estimation` (the estimate) and :mod:`werest.model.files`."""

from __future__ import annotations

import pandas as pd

from werest.features.inputs import input_columns
from werest.formatting import percent, percent_interval
from werest.model.files import Models


def format_summary(records: list[dict], labelled: bool = False) -> str:
    """The summary as a readable table (percentages); ``labelled`` (a ``labels=`` run) adds
    each row's method, its labels and the labels-only estimate."""
    rows = []
    for r in records:
        row = {
            "dataset": r["dataset"],
            "system": r["system"],
            "proxies": _proxies(r),
            "estimated/utts": f"{r['n_estimated']}/{r['n_utterances']}",
            "est. WER %": percent(r["estimated_wer"])
            + (" (chars)" if r.get("unit") == "character" else ""),
            "95% interval": percent_interval(r.get("interval_low"), r.get("interval_high"))
            if "interval_low" in r
            else "",
            "sampling CI": percent_interval(r["ci_low"], r["ci_high"])
            if r["ci_low"] is not None
            else "",
        }
        if labelled:  # labels= (werest.estimation.labels): prediction-powered rows say so
            row["method"] = r["method"]
            row["transcripts (worth)"] = _labels_used(r)
            row["labels only %"] = (
                f"{percent(r['classical_wer'])} "
                f"{percent_interval(r['classical_low'], r['classical_high'])}"
                if r["method"] == "ppi"
                else ""
            )
        if "wer" in r:
            row["true WER %"] = percent(r["wer"])
        rows.append(row)
    return pd.DataFrame(rows).to_string(index=False)


def _signed(rate: float) -> str:
    """A difference of rates in signed points, 2 decimals (never ``-0.00``)."""
    points = round(100 * rate, 2)
    return f"{points + 0.0:+.2f}"  # + 0.0 turns -0.0 into 0.0


def format_pairs(pairs: pd.DataFrame) -> str:
    """The console's lines on differences: each dataset's neighbours in the estimated order,
    with the zero-label interval of their difference and what it says."""
    lines = [
        "Neighbours (A − B in WER points, 95 % interval calibrated leave one domain out on "
        "differences; a verdict only where it excludes 0):"
    ]
    for dataset, rows in pairs.groupby("dataset", sort=True):
        order = rows.drop_duplicates("system_a")["system_a"].tolist()
        for a in order:
            neighbour = rows[rows["system_a"] == a].head(1)
            if neighbour.empty:
                continue
            r = neighbour.iloc[0]
            said = {
                "A better": f"{r['system_a']} is better than {r['system_b']}",
                "B better": f"{r['system_b']} is better than {r['system_a']}",
            }.get(r["verdict"], r["verdict"])
            points = (_signed(r["difference"]), _signed(r["low"]), _signed(r["high"]))
            lines.append(
                f"  {dataset}: {r['system_a']} − {r['system_b']} "
                f"{points[0]} [{points[1]}, {points[2]}]: {said}"
            )
    return "\n".join(lines)


def _labels_used(record: dict) -> str:
    """A prediction-powered row's transcripts (distinct labelled utterances: a redrawn one
    counts once) and the transcripts a labels-only estimate would need for its precision
    (the effective labels, counted in draws, scaled to transcripts)."""
    transcripts = record.get("n_transcripts", record.get("n_labelled", 0))
    if record["method"] != "ppi":
        return str(transcripts)
    draws = max(record["n_labelled"], 1)
    return f"{transcripts} (≈{record['effective_labels'] * transcripts / draws:.0f})"


def _proxies(record: dict) -> str:
    """Every proxy of a summary record, with its utterance count when there are several."""
    proxies = record.get("proxies") or {}
    if len(proxies) <= 1:
        return record.get("proxy") or ""
    return ", ".join(f"{name} {count}" for name, count in proxies.items())


def evidence_line(models: Models, has_audio: bool) -> str:
    """The console's line saying which evidence the estimates rest on: text agreement always,
    and the audio evidence the model reads (Whisper likelihood ``wl_*``, SONAR
    ``similarity``). When the table has audio the model does not use, how to use it."""
    needed = input_columns(models.feature_names)
    kinds = ["text agreement with a proxy (pWER, pCER)"]
    if any(name.startswith("wl_") for name in needed):
        kinds.append("the audio's likelihood of each hypothesis (Whisper, wl_*)")
    if any(name.startswith("similarity") for name in needed):
        kinds.append("speech-text similarity (SONAR)")
    line = "evidence: " + "; ".join(kinds)
    if has_audio and len(kinds) == 1:
        line += (
            ". The table has audio this model does not use: `werest estimate input=T "
            "model_path=audio audio_scoring.enabled=true` scores it with Whisper (docs/audio.md)"
        )
    return line
