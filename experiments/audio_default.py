"""Should ``werest estimate`` score the audio inline by default? Accuracy gained against minutes
per hour of audio (issue 37, deliverable 3).

    python experiments/lodo_audio_compare.py                               # accuracy
    python experiments/bench_audio.py --clips 10 --model base --systems 2 5 10 --full  # cost
    python experiments/audio_default.py                                    # this

Reads what those two wrote (``lodo_audio_compare.json``: leave one audio domain out, the model
with the Whisper base likelihood features against the text-only model on the same cells;
``bench_audio_base.json``: seconds of Whisper base per hour of audio to score 2, 5 and 10
systems) and applies the rule declared here, before the numbers: ``audio_scoring.enabled``
is on by default only if the audio model's mean corpus error is below the text model's
(ratio < 1) **and** no held-out domain gets worse by more than :data:`WORST_DOMAIN` × its
text error, since a user's language may be the one the scorer does not know. Writes
``experiments/results/audio_default.{md,json}``.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
#: the most a held-out domain's error may grow with the audio features for them to be on
WORST_DOMAIN = 1.25


def main() -> None:
    accuracy = json.loads((RESULTS / "lodo_audio_compare.json").read_text(encoding="utf-8"))
    cost = json.loads((RESULTS / "bench_audio_base.json").read_text(encoding="utf-8"))
    scoring = [row for row in cost["rows"] if row["texts_per_clip"] is not None]
    minutes = {int(row["texts_per_clip"]): row["seconds_per_audio_hour"] / 60 for row in scoring}
    domains = accuracy["domains"]
    ratio = accuracy["ratio_audio_text"]
    worst = max(domains, key=lambda d: domains[d]["ratio_audio_text"])
    on = ratio < 1 and domains[worst]["ratio_audio_text"] <= WORST_DOMAIN
    gained = 100 * (accuracy["mean_err_text"] - accuracy["mean_err_audio"])
    record = {
        "default_on": on,
        "mean_err_text_points": round(100 * accuracy["mean_err_text"], 2),
        "mean_err_audio_points": round(100 * accuracy["mean_err_audio"], 2),
        "points_gained": round(gained, 2),
        "ratio_audio_text": round(ratio, 3),
        "worst_domain": worst,
        "worst_domain_ratio": round(domains[worst]["ratio_audio_text"], 3),
        "domains_better": sum(bool(d["audio_wins"]) for d in domains.values()),
        "domains": len(domains),
        "cells": accuracy["cells"],
        "minutes_per_audio_hour": {str(k): round(v, 1) for k, v in sorted(minutes.items())},
        "cost_load_1min": cost["load_1min_at_end"],
    }
    rows = [
        f"| {name} | {100 * d['mean_err_text']:.2f} | {100 * d['mean_err_audio']:.2f} | "
        f"{d['ratio_audio_text']:.2f} |"
        for name, d in sorted(domains.items())
    ]
    cost_rows = [f"| {k} | {v:.1f} |" for k, v in sorted(minutes.items())]
    verdict = "on" if on else "off"
    lines = [
        "# Inline audio scoring: on by default?",
        "",
        "`python experiments/audio_default.py`, from `lodo_audio_compare.json` (leave one audio "
        "domain out) and `bench_audio_base.json` (Whisper base on 2 CPU threads).",
        "",
        "## Decision",
        "",
        f"The rule, declared before the numbers: on only if the audio model's mean corpus error "
        f"is below the text model's and no held-out domain's error grows by more than "
        f"{WORST_DOMAIN}×.",
        "",
        f"**Decision: `audio_scoring.enabled` is {verdict} by default.** Over {record['cells']} "
        f"cells the mean corpus |aWER − WER| is {record['mean_err_text_points']:.2f} points "
        f"text-only and {record['mean_err_audio_points']:.2f} with the audio features (ratio "
        f"{record['ratio_audio_text']:.2f}; {record['points_gained']:+.2f} points gained); "
        f"the audio is better in {record['domains_better']} of {record['domains']} held-out "
        f"domains, and {worst} is {record['worst_domain_ratio']:.2f}× worse with it.",
        "",
        "| held-out domain | text-only error (points) | with audio (points) | ratio |",
        "|---|---|---|---|",
        *rows,
        "",
        "## Cost",
        "",
        f"Scoring with Whisper base (encode, score every system, its own transcript and the "
        f"language check; load {record['cost_load_1min']} on 2 cores):",
        "",
        "| systems per clip | minutes per hour of audio |",
        "|---|---|",
        *cost_rows,
        "",
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "audio_default.md").write_text("\n".join(lines), encoding="utf-8")
    (RESULTS / "audio_default.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
