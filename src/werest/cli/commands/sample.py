"""``werest sample input=T budget=N out=to_label.csv [strategy=...]``: utterances to transcribe.

Draws ``budget`` utterances per dataset of the transcripts table (:func:`werest.estimation.sampling.
draw_sample`) and writes the labelling sheet, CSV, with ``<out>.config.yaml`` beside it.
``stratified`` and ``active`` need the model's per-utterance predictions, so they run
:func:`werest.partition.estimate.estimate_table` on every system first (at least two systems);
``random`` needs no model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from werest.cli.commands._common import build, print_blocks, save_config
from werest.cli.schema import SampleSettings
from werest.errors import InputError
from werest.estimation.decision import WinnerSettings
from werest.estimation.estimate import input_features
from werest.estimation.label_round import winner_draw
from werest.estimation.labels import (
    LabelSettings,
    labelled_estimates,
    read_labels,
    with_label_notes,
)
from werest.estimation.sampling import (
    as_sheet,
    check_design,
    draw_probabilities,
    draw_sample,
    expected_half_width,
    labelling_scores,
    mean_predicted_wer,
    next_sheet,
    utterance_list,
)
from werest.ingest.table import UTTERANCE, read_table
from werest.io import atomic_path, check_output, staged_output
from werest.model.files import load_models
from werest.partition.estimate import EstimateOptions, estimate_table
from werest.report.decision_text import format_winner
from werest.text import NormalisationCache, cached_normalisation

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd


def run(settings: SampleSettings) -> pd.DataFrame:
    """Draw, write the sheet and its config, show a line per dataset; returns the sheet.

    Each distinct hypothesis is normalised once a run: the estimate, the guards' sample,
    the winner's contests and the labels' scores share one cache."""
    with cached_normalisation(NormalisationCache()):
        return _sample(settings)


def _sample(settings: SampleSettings) -> pd.DataFrame:
    check_output(settings.out, file=True)  # one that cannot be replaced: refused now
    strategy = settings.strategy
    table = None
    if strategy == "auto":  # active measures best (docs/few_labels.md); it needs two systems
        table = read_table(settings.input)
        strategy = "active" if table["system"].nunique() >= 2 else "random"
    draw = {
        "budget": settings.budget,
        "strategy": "random" if strategy == "winner" else strategy,
        "seed": settings.seed,
        "uniform_share": float(settings.uniform_share),
        "strata": settings.strata,
    }
    check_design(**draw)  # a bad setting fails before the model and the table load
    winner = build(settings.winner, WinnerSettings)
    estimated = decisions = None
    if strategy == "random":
        table = read_table(settings.input) if table is None else table
    else:
        models = load_models(  # its payload read only if the cache cannot serve the estimate
            settings.model_path,
            trust_model=settings.trust_model,
            deferred=settings.cache_dir is not None,
        )
        table = read_table(settings.input, numeric=input_features(models))
        _check_systems(table, strategy, settings.input)
        estimated, records, _ = estimate_table(
            table,
            models,
            EstimateOptions(n_jobs=settings.n_jobs),  # every system
            source=settings.input,
            cache_dir=settings.cache_dir,
        )
    notes: list[str] = []  # on the labels: printed under the decision
    labels = read_labels(settings.labels, table, settings.input, notes) if settings.labels else None
    number = next_sheet(labels)  # the sheet records it; its draws' generator is seeded by it
    if strategy == "winner":
        rows, decisions = winner_draw(
            records,
            table,
            models.normaliser,
            labels,
            settings.budget,
            seed=settings.seed,
            settings=winner,
            utterances=estimated,
            cache_dir=settings.cache_dir,
            n_jobs=settings.n_jobs,
        )
        rows = rows.merge(utterance_list(table), on=UTTERANCE, how="left").assign(
            strategy="winner",
            inclusion_probability=lambda r: (
                1 - (1 - r["selection_probability"]) ** r["draws"].sum()
            ),
        )
        sheet = as_sheet(rows, settings.budget, number)
    else:
        utterances = utterance_list(table)
        if labels is not None and strategy == "random":  # the next of one random sample
            utterances = utterances[~_labelled(utterances, labels)]
        scores = None
        if strategy != "random":
            score = mean_predicted_wer if strategy == "stratified" else labelling_scores
            scores = score(estimated)
        sheet = draw_sample(utterances, scores=scores, sheet_number=number, **draw)
    if labels is not None:
        sheet = _filled(sheet, labels)
    widths, pilots = (
        (None, {})
        if strategy in ("random", "winner")
        else _promise(estimated, table, labels, models.normaliser, settings, strategy)
    )
    with staged_output(settings.out, file=True) as out:  # the sheet and its config as one
        with atomic_path(out) as tmp:
            sheet.to_csv(tmp, index=False)
        save_config(settings, out)
    sheets = f"'labels=[{_label_list(settings.labels)},{settings.out}]'"
    hint = f"fill the empty references, then: werest estimate input={settings.input} " + (
        sheets if settings.labels else f"labels={settings.out}"
    )
    print_blocks(
        with_label_notes(format_winner(decisions) if decisions else None, notes),
        format_draw(sheet, widths, pilots),
        hint,
    )
    return sheet


def _promise(estimated, table, labels, normaliser, settings: SampleSettings, strategy: str):
    """The half-width to expect per dataset (:func:`expected_half_width`) under this sheet's
    design, measured on the labels already in (a pilot) where there are some; and the
    pilot's labelled draws per dataset it measured."""
    probabilities = None
    if strategy == "active":
        probabilities = draw_probabilities(labelling_scores(estimated), settings.uniform_share)
    pilot = None
    if labels is not None:
        measured = labelled_estimates(
            estimated, table, labels, normaliser, LabelSettings(interval="t")
        )
        pilot = {name: (draws.m, est.se) for name, (draws, est) in measured.items()}
    widths = expected_half_width(
        estimated, settings.budget, probabilities=probabilities, pilot=pilot
    )
    return widths, {name: m for name, (m, _) in (pilot or {}).items()}


def _labelled(utterances: pd.DataFrame, labels: pd.DataFrame) -> np.ndarray:
    """Which of ``utterances`` the labels already transcribe."""
    import pandas as pd

    done = pd.MultiIndex.from_frame(labels[UTTERANCE].astype(str))
    return pd.MultiIndex.from_frame(utterances[UTTERANCE].astype(str)).isin(done)


def _filled(sheet: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """The sheet with the references the labels already give (a redrawn utterance costs no
    new label)."""
    import numpy as np
    import pandas as pd

    known = labels.drop_duplicates(UTTERANCE).set_index(UTTERANCE)["reference"]
    keys = pd.MultiIndex.from_frame(sheet[UTTERANCE].astype(str))
    known.index = pd.MultiIndex.from_frame(known.index.to_frame().astype(str))
    filled = known.reindex(keys).to_numpy()
    sheet["reference"] = np.where(pd.notna(filled), filled, sheet["reference"])
    return sheet


def _label_list(value) -> str:
    return ",".join(map(str, value)) if isinstance(value, list | tuple) else str(value)


def _check_systems(table: pd.DataFrame, strategy: str, source) -> None:
    systems = sorted(table["system"].unique())
    if len(systems) < 2:
        raise InputError(
            f"the input holds one system ({systems[0]}): strategy={strategy} needs the model's "
            "predictions, which need at least two systems' hypotheses of the same utterances; "
            "use strategy=random",
            path=source,
        )


def format_draw(
    sheet: pd.DataFrame, widths: pd.Series | None = None, pilots: dict[str, int] | None = None
) -> str:
    """One line per dataset: its utterances N, the draws and the distinct utterances drawn,
    and, with the model's predictions (``widths``: :func:`expected_half_width`), the interval
    to expect from the labels and the predictions at this budget; ``pilots``: the labelled
    draws of the datasets whose promise a pilot measured."""
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
