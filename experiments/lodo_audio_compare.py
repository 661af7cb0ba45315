"""Leave one audio domain out, with and without the audio features (issue 37).

    python experiments/audio_systems.py          # first: the systems and the wl_* scores
    python experiments/lodo_audio_compare.py     # make lodo-audio

Runs ``werest evaluate experiment=lodo_audio`` twice on the same folds, with ``features=audio``
(text + the Whisper likelihood of every hypothesis, scored by Whisper base) and with
``features=anchored``, the shipped text model's features (which writes ``lodo_audio.md`` and
``lodo_audio_text.md``); both with the shipped estimator (``model=anchored``). Then compares
them cell by cell:

* per held-out domain (AN4 test; thennal10 en, ar, ml): the mean corpus |aWER − WER| with and
  without audio, raw pWER's, and their ratio (the bar: audio ≤ 0.8 × text on the same cells);
* the winner per dataset: the system with the lowest true WER against the one each estimate
  ranks first;
* the per-utterance correlation of the predicted WER with the true WER (Pearson and Spearman;
  what the few-label estimate gains from);
* the two-system AN4 case: pocketsphinx generic and AN4-tuned estimated label-free with only
  each other, then with Whisper base as a third system on the same clips (the fold that holds
  AN4 out; the bar: each within 8 points).

Writes ``experiments/results/lodo_audio_compare.{md,json}`` and ``lodo_audio_compare_cells.csv``.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from werest.evaluation.lodo import LodoSettings, evaluate_lodo
from werest.model.training import TrainingOptions, labelled_table
from werest.text import as_normaliser
from werest_cli import config, run, value

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
#: variant -> (report name, conf/features option): *text* is the shipped model's own feature set
VARIANTS = {"audio": ("lodo_audio", "audio"), "text": ("lodo_audio_text", "anchored")}
#: the feature set of the run "with audio" (``--audio-features``; ``audio`` by default)
AUDIO = {"features": "audio"}
TWO = ("pocketsphinx-en-us", "pocketsphinx-an4")
THIRD = "whisper-base"
BAR_RATIO, BAR_AN4 = 0.8, 0.08
KEYS = ["domain", "dataset", "system"]


def overrides(features: str) -> list[str]:
    name, conf = VARIANTS[features]
    if features == "audio" and AUDIO["features"] != "audio":
        name, conf = f"lodo_{AUDIO['features']}", AUDIO["features"]
    return ["experiment=lodo_audio", f"features={conf}", f"name={name}"]


@dataclass
class Held:
    """What a LODO run measured that this comparison reads: its cells (``<name>_cells.csv``)
    and its held-out predictions (``predictions=``)."""

    cells: pd.DataFrame
    utterances: pd.DataFrame


def run_lodo(features: str, reuse: bool = False) -> Held:
    """``werest evaluate experiment=lodo_audio features=<features>`` (its reports written to
    experiments/results), its held-out predictions kept in ``outputs/lodo_audio_compare/``;
    ``--reuse`` reads the last run's files back instead."""
    given = dict(setting.split("=", 1) for setting in overrides(features))
    cells = RESULTS / f"{given['name']}_cells.csv"
    kept = ROOT / "outputs" / "lodo_audio_compare" / f"features={given['features']}.parquet"
    if not (reuse and cells.exists() and kept.exists()):
        run(
            "evaluate",
            *overrides(features),
            f"output_dir={value(RESULTS)}",
            f"predictions={value(kept)}",
        )
    return Held(pd.read_csv(cells), pd.read_parquet(kept))


def lodo_of(settings: dict, table: pd.DataFrame, held_out: list[str]):
    """The LODO run ``werest evaluate`` makes of ``settings`` (its resolved config), on
    ``table`` and holding out ``held_out``: the same sections it builds (the training
    options, the lodo block) handed to :func:`werest.evaluation.lodo.evaluate_lodo`."""
    options = TrainingOptions(
        normaliser=as_normaliser(settings["normaliser"]),
        two_system_views=settings["two_system_views"],
        proxies=settings["proxies"],
        seed=settings["seed"],
        n_jobs=settings["n_jobs"],
    )
    lodo = {k: v for k, v in settings["lodo"].items() if k != "_target_"}
    return evaluate_lodo(
        table,
        settings["data"],
        list(settings["features"]["columns"]),
        settings["model"],
        options,
        LodoSettings(**{**lodo, "held_out": held_out}),
        n_resamples=settings["bootstrap"]["n_resamples"],
    )


def utterance_correlations(result: Held) -> pd.DataFrame:
    """Per held-out domain: Pearson and Spearman of predicted WER and raw pWER with the true
    per-utterance WER (utterances with a reference word)."""
    rows = result.utterances[result.utterances["ref_words"] > 0].copy()
    rows["wer"] = rows["word_errors"] / rows["ref_words"]
    out = []
    for domain, group in rows.groupby("domain"):
        out.append(
            {
                "domain": domain,
                "utterance_rows": len(group),
                "pearson": group["predicted_wer"].corr(group["wer"]),
                "spearman": group["predicted_wer"].corr(group["wer"], method="spearman"),
                "pearson_raw": group["pwer"].corr(group["wer"]),
                "spearman_raw": group["pwer"].corr(group["wer"], method="spearman"),
            }
        )
    return pd.DataFrame(out)


def compared_cells(audio: Held, text: Held) -> pd.DataFrame:
    columns = [*KEYS, "proxy", "n_utterances", "wer", "pwer", "awer", "abs_error", "abs_error_raw"]
    cells = audio.cells[columns].merge(
        text.cells[[*KEYS, "proxy", "awer", "abs_error"]],
        on=KEYS,
        suffixes=("_audio", "_text"),
        validate="one_to_one",
    )
    return cells


def per_domain(cells: pd.DataFrame) -> pd.DataFrame:
    grouped = cells.groupby("domain")
    table = pd.DataFrame(
        {
            "cells": grouped.size(),
            "mean_err_audio": grouped["abs_error_audio"].mean(),
            "mean_err_text": grouped["abs_error_text"].mean(),
            "mean_err_raw": grouped["abs_error_raw"].mean(),
        }
    )
    table["ratio_audio_text"] = table["mean_err_audio"] / table["mean_err_text"]
    table["audio_wins"] = table["mean_err_audio"] < table["mean_err_text"]
    return table.reset_index()


def winners(cells: pd.DataFrame) -> pd.DataFrame:
    out = []
    for dataset, group in cells.groupby("dataset"):
        best = group.loc[group["wer"].idxmin(), "system"]
        out.append(
            {
                "dataset": dataset,
                "systems": len(group),
                "true_best": best,
                "audio_pick": group.loc[group["awer_audio"].idxmin(), "system"],
                "text_pick": group.loc[group["awer_text"].idxmin(), "system"],
                "raw_pick": group.loc[group["pwer"].idxmin(), "system"],
            }
        )
    table = pd.DataFrame(out)
    for pick in ("audio", "text", "raw"):
        table[f"{pick}_right"] = table[f"{pick}_pick"] == table["true_best"]
    return table


def two_system_an4(features: str) -> pd.DataFrame:
    """The AN4 fold (trained on thennal10 en/ar/ml) estimating the two pocketsphinx systems,
    alone and with Whisper base as a third system."""
    settings = config("evaluate", *overrides(features))  # as werest evaluate reads them
    columns = list(settings["features"]["columns"])
    table = labelled_table(settings["data"], columns, settings["features_table"])
    an4 = table["dataset"].str.startswith("an4")
    out = []
    for label, systems in (("two systems", TWO), ("with whisper-base", (*TWO, THIRD))):
        kept = table[~an4 | table["system"].isin(systems)]
        result = lodo_of(settings, kept, held_out=["an4"])
        cells = result.cells[result.cells["system"].isin(systems)]
        for row in cells.itertuples():
            out.append(
                {
                    "features": features,
                    "case": label,
                    "system": row.system,
                    "proxy": row.proxy,
                    "wer": row.wer,
                    "awer": row.awer,
                    "pwer": row.pwer,
                    "abs_error": row.abs_error,
                    "abs_error_raw": row.abs_error_raw,
                    "within_8": bool(row.abs_error <= BAR_AN4),
                }
            )
    return pd.DataFrame(out)


def points(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    frame = frame.copy()
    frame[columns] = (100 * frame[columns]).round(2)
    return frame


def report(
    domains: pd.DataFrame,
    cells: pd.DataFrame,
    wins: pd.DataFrame,
    correlations: pd.DataFrame,
    two: pd.DataFrame,
    summary: dict,
) -> str:
    err = ["mean_err_audio", "mean_err_text", "mean_err_raw"]
    lines = [
        "# Leave one audio domain out: with and without the audio features",
        "",
        "Produced by `python experiments/lodo_audio_compare.py` (`make lodo-audio`) on the tables",
        "of `python experiments/audio_systems.py` (scorer: Whisper base). Errors are corpus WER",
        f"points; *audio* = `features={AUDIO['features']}` (text + wl_*; command: "
        f"`python experiments/lodo_audio_compare.py --audio-features {AUDIO['features']}`),",
        "*text* = `features=anchored` (the shipped text features), both with "
        "`model=anchored`; *raw* = pWER against the same proxies. Same folds, same cells.",
        "",
        "## The bars",
        "",
        "| criterion | measured | bar | holds |",
        "|---|---|---|---|",
        f"| mean corpus error, audio / text (all cells) | {summary['ratio_audio_text']:.3f} "
        f"({100 * summary['mean_err_audio']:.2f} / {100 * summary['mean_err_text']:.2f} points)"
        f" | ≤ {BAR_RATIO} | {'yes' if summary['ratio_holds'] else '**no**'} |",
        f"| AN4 pocketsphinx systems within 8 points, label-free (audio, with whisper-base) | "
        f"max {100 * summary['an4_max_error_three']:.2f} | ≤ 8.00 | "
        f"{'yes' if summary['an4_holds_three'] else '**no**'} |",
        f"| the same, two systems only | max {100 * summary['an4_max_error_two']:.2f} | ≤ 8.00 | "
        f"{'yes' if summary['an4_holds_two'] else '**no**'} |",
        "",
        "## Per held-out domain",
        "",
        points(domains, err).round(3).to_markdown(index=False),
        "",
        "## The winner per dataset",
        "",
        wins.to_markdown(index=False),
        "",
        "## Per-utterance correlation with the true WER",
        "",
        correlations.round(3).to_markdown(index=False),
        "",
        "## The two-system AN4 case, and Whisper base as a third system",
        "",
        "The fold that holds AN4 out (trained on thennal10 en, ar, ml only).",
        "",
        points(two, ["wer", "awer", "pwer", "abs_error", "abs_error_raw"]).to_markdown(index=False),
        "",
        "## Every cell",
        "",
        points(
            cells,
            [
                "wer",
                "pwer",
                "awer_audio",
                "awer_text",
                "abs_error_audio",
                "abs_error_text",
                "abs_error_raw",
            ],
        ).to_markdown(index=False),
        "",
        f"Run time: {summary['seconds']:.0f} s.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reuse", action="store_true", help="the last run's LODO results")
    parser.add_argument("--audio-features", default="audio", help="conf/features/ of 'audio'")
    args = parser.parse_args()
    AUDIO["features"] = args.audio_features
    suffix = "" if args.audio_features == "audio" else f"_{args.audio_features}"
    started = time.perf_counter()
    audio, text = run_lodo("audio", args.reuse), run_lodo("text", args.reuse)
    cells = compared_cells(audio, text)
    domains = per_domain(cells)
    wins = winners(cells)
    correlations = utterance_correlations(audio).merge(
        utterance_correlations(text)[["domain", "pearson", "spearman"]],
        on="domain",
        suffixes=("_audio", "_text"),
    )
    two = pd.concat([two_system_an4("audio"), two_system_an4("text")], ignore_index=True)
    two["features"] = two["features"].replace({"audio": AUDIO["features"]})
    audio_two = two[two["features"] == AUDIO["features"]]
    three = audio_two[audio_two["case"] == "with whisper-base"]
    pair = audio_two[audio_two["case"] == "two systems"]
    summary = {
        "cells": len(cells),
        "mean_err_audio": float(cells["abs_error_audio"].mean()),
        "mean_err_text": float(cells["abs_error_text"].mean()),
        "mean_err_raw": float(cells["abs_error_raw"].mean()),
        "ratio_audio_text": float(cells["abs_error_audio"].mean() / cells["abs_error_text"].mean()),
        "an4_max_error_three": float(three["abs_error"].max()),
        "an4_max_error_two": float(pair["abs_error"].max()),
        "winner_right": {p: int(wins[f"{p}_right"].sum()) for p in ("audio", "text", "raw")},
        "datasets": len(wins),
        "seconds": round(time.perf_counter() - started, 1),
    }
    summary["ratio_holds"] = summary["ratio_audio_text"] <= BAR_RATIO
    summary["an4_holds_three"] = summary["an4_max_error_three"] <= BAR_AN4
    summary["an4_holds_two"] = summary["an4_max_error_two"] <= BAR_AN4
    summary["domains"] = domains.set_index("domain").to_dict(orient="index")
    RESULTS.mkdir(parents=True, exist_ok=True)
    stem = f"lodo_audio_compare{suffix}"
    cells.to_csv(RESULTS / f"{stem}_cells.csv", index=False, float_format="%.6g")
    two.to_csv(RESULTS / f"{stem}_an4.csv", index=False, float_format="%.6g")
    (RESULTS / f"{stem}.json").write_text(
        json.dumps(summary, indent=1, default=_plain) + "\n", encoding="utf-8"
    )
    (RESULTS / f"{stem}.md").write_text(
        report(domains, cells, wins, correlations, two, summary), encoding="utf-8"
    )
    print((RESULTS / f"{stem}.md").read_text(encoding="utf-8"))


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(type(value))


if __name__ == "__main__":
    main()
