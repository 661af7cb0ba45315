"""``werest estimate … labels=L``: a few transcribed utterances turn every estimate into a
prediction-powered one (:mod:`werest.estimation.ppi`).

``L`` is a table with ``dataset, utt_id, reference`` (the sheet ``werest sample`` writes, once
filled in), or ``input``: the input's own references where only some rows have one. The
sheet's design columns (``draws``, ``expected_draws``) say how the utterances were drawn;
a table without them is taken as a simple random sample. One reference serves every system
of its utterance. Several sheets are read in the order of the numbers they record
(``sheet``), each with every one of its draws (``draw_order``): :func:`read_labels`.

Per (dataset, system) with at least ``min_labels`` labelled utterances, ``estimated_wer`` and
``interval_low``/``interval_high`` become the prediction-powered estimate and its interval
(``method: ppi``); the labels-only estimate is beside it (``classical_wer``,
``classical_low``, ``classical_high``), with the zero-label estimate (``zero_label_wer``), λ
and the effective number of labels. With fewer labels the zero-label estimate stays
(``method: zero_label``) and a warning says so. Every pair of systems of a labelled dataset
gets the paired difference (``pairs.csv``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import pandas as pd

from werest.errors import ConfigError
from werest.estimation.corpus import estimated_sample
from werest.estimation.label_sheets import (  # noqa: F401 (re-exported: the sheets' reading)
    DESIGN_NUMBERS,
    DESIGN_TEXT,
    FROM_INPUT,
    LABEL_COLUMNS,
    NOT_SKIPPED,
    PROVENANCE,
    SAME_SHEET,
    SKIPPED,
    distinct_labels,
    read_labels,
    with_label_notes,
)
from werest.estimation.ppi import (
    DatasetDraws,
    Estimates,
    bootstrap_bytes,
    estimate_draws,
    more_labels,
    paired_differences,
)
from werest.estimation.ppi_frames import dataset_frames
from werest.estimation.settings import LabelSettings
from werest.features.agreement import STATUS_OK
from werest.formatting import plural, size
from werest.ingest.table import KEY

log = logging.getLogger(__name__)

#: the share of the available memory a bootstrap may take (the run holds its table too)
MEMORY_SHARE = 0.8


def check_bootstrap_memory(
    labels: pd.DataFrame,
    table: pd.DataFrame,
    settings: LabelSettings,
    available: int | None = None,
) -> None:
    """ConfigError, before any work starts, when ``few_labels.interval=bootstrap`` would
    allocate more than :data:`MEMORY_SHARE` of the available memory
    (:func:`werest.resources.available_memory`; ``available`` overrides it) for its largest
    dataset: :func:`werest.estimation.ppi.bootstrap_bytes` of the dataset's labelled draws and
    systems. The datasets are estimated one after another, so the largest one is the peak."""
    if settings.interval != "bootstrap" or labels.empty:
        return
    from werest.resources import available_memory

    draws = labels["draws"].fillna(1).round().groupby(labels["dataset"]).sum()
    systems = table.groupby("dataset")["system"].nunique()
    needs = {
        dataset: bootstrap_bytes(int(m), int(systems.get(dataset, 0)), settings.n_resamples)
        for dataset, m in draws.items()
    }
    dataset = max(needs, key=needs.get)
    need = needs[dataset]
    available = available_memory() if available is None else available
    if available is None or need <= MEMORY_SHARE * available:
        return
    per_resample = need / settings.n_resamples
    fits = int(MEMORY_SHARE * available // per_resample)
    raise ConfigError(
        f"few_labels.n_resamples={settings.n_resamples}: the bootstrap of dataset {dataset} "
        f"({plural(int(draws[dataset]), 'labelled draw')}, "
        f"{plural(int(systems.get(dataset, 0)), 'system')}) needs "
        f"{size(need)} of memory and {size(available)} is available: lower "
        f"few_labels.n_resamples to at most {fits}, or use few_labels.interval=t"
    )


def prediction_rows(utterances: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """:data:`werest.estimation.ppi_frames.FRAME_COLUMNS` rows: each estimated row's
    predicted errors and words, the corpus estimate's own terms
    (:func:`werest.estimation.corpus.estimated_sample`), with its labelled truth
    (``word_errors``, ``ref_words`` of ``scores``) where there is one."""
    done = utterances[utterances["status"] == STATUS_OK]
    sample = estimated_sample(done)
    rows = done[KEY].assign(pred_errors=sample.numerator, pred_words=sample.denominator)
    rows = rows.merge(scores, on=KEY, how="left")
    return rows.rename(columns={"word_errors": "errors", "ref_words": "words"})


def design_rows(labels: pd.DataFrame, frame_utterances: pd.Index) -> tuple[np.ndarray, np.ndarray]:
    """The draws of one dataset: positions in the frame (an utterance drawn k times is k
    draws) and their weights 1 / (N p), p = expected_draws / Σ draws within its sheet (1
    without a design, and for every ``random`` sheet: the sheets ``werest sample
    strategy=random`` draws one after another, each from the utterances not labelled yet,
    are together one simple random sample). Each sheet's draws keep their own weights, so
    sheets of several designs (a random test split, then ``strategy=winner`` batches) give
    one unbiased estimate."""
    rows, weights = [], []
    sheets = labels["sheet"] if "sheet" in labels else pd.Series(0, index=labels.index)
    for _, sheet in labels.groupby(sheets.to_numpy(), sort=True):
        position = frame_utterances.get_indexer(sheet["utt_id"])
        kept = sheet[position >= 0]
        position = position[position >= 0]
        draws = kept["draws"].fillna(1).round().astype(int).to_numpy()
        rows.append(np.repeat(position, draws))
        random = "strategy" in kept and (kept["strategy"] == "random").all()
        if kept["expected_draws"].isna().all() or random:
            weights.append(np.ones(int(draws.sum())))
            continue
        p = kept["expected_draws"].to_numpy(dtype=float) / draws.sum()
        weights.append(np.repeat(1.0 / (len(frame_utterances) * p), draws))
    if not rows:
        return np.zeros(0, dtype=int), np.zeros(0)
    return np.concatenate(rows), np.concatenate(weights)


@dataclass
class LabelledResult:
    """What the labels changed: the records (updated in place), the pairs, the warnings."""

    pairs: pd.DataFrame
    warnings: list[dict]


def dataset_estimates(
    rows: pd.DataFrame, labels: pd.DataFrame, settings: LabelSettings, *, seed: int = 0, method=None
) -> dict[str, tuple[DatasetDraws, Estimates]]:
    """Per labelled dataset: its draws and every system's estimates (:mod:`werest.estimation.ppi`).
    ``rows``: :func:`prediction_rows`; ``method`` overrides ``settings.interval``."""
    out = {}
    for dataset, frame in dataset_frames(rows).items():
        draw_rows, weight = design_rows(labels[labels["dataset"] == dataset], frame.utterances)
        if not len(draw_rows):
            continue
        census = len(np.unique(draw_rows)) == frame.n  # every utterance labelled: the truth
        draws = (
            frame.recalibrated_draws(draw_rows, weight, seed=seed)
            if settings.recalibrate and not census
            else frame.draws(draw_rows, weight)
        )
        skip = labels["skip"] if "skip" in labels else pd.Series(False, index=labels.index)
        mine = labels[(labels["dataset"] == dataset) & skip.astype(bool)]
        if len(mine):
            skipped = frame.utterances.get_indexer(mine["utt_id"].unique())
            draws.skipped = np.isin(draw_rows, skipped[skipped >= 0])
        estimates = estimate_draws(
            draws,
            method=method or settings.interval,
            level=settings.level,
            n_resamples=settings.n_resamples,
            seed=seed,
            shrink_to_prior=settings.shrink and not census,  # a census is the truth
            shared_lambda=settings.shared_lambda,
        )
        tail = frame.tail().any(axis=1)
        estimates.tail_counts = (int(tail.sum()), int(tail[np.unique(draw_rows)].sum()))
        out[dataset] = (draws, estimates)
    return out


def labelled_estimates(
    utterances: pd.DataFrame,
    labels: pd.DataFrame,
    scores: pd.DataFrame,
    settings: LabelSettings,
    *,
    seed: int = 0,
) -> dict[str, tuple[DatasetDraws, Estimates]]:
    """:func:`dataset_estimates` of the labels (:func:`read_labels`) against the estimated
    rows ``utterances``, each system scored on each label (``scores``:
    :func:`werest.estimation.corpus.labelled_scores` of the distinct labels, which the label
    loop computes once a round)."""
    return dataset_estimates(prediction_rows(utterances, scores), labels, settings, seed=seed)


def enough_labels(
    dataset: str, est: Estimates, settings: LabelSettings, warnings: list[dict]
) -> np.ndarray:
    """Which systems of ``dataset`` have ``min_labels`` labelled utterances; the others keep
    their zero-label estimate, and a warning saying so is added to ``warnings``."""
    enough = est.n_labelled >= settings.min_labels
    short = [system for system, ok in zip(est.systems, enough, strict=True) if not ok]
    if short:
        warnings.append(
            {
                "dataset": dataset,
                "systems": short,
                "message": f"{', '.join(short)}: fewer than {settings.min_labels} labelled "
                "utterances: the zero-label estimate is kept (few_labels.min_labels)",
            }
        )
    return enough


def apply_labels(
    records: list[dict],
    estimates: dict[str, tuple[DatasetDraws, Estimates]],
    labels: pd.DataFrame,
    settings: LabelSettings,
) -> LabelledResult:
    """Turn the summary ``records`` of labelled datasets into prediction-powered ones (see
    the module docstring), from the labels' ``estimates`` (:func:`labelled_estimates`);
    returns the paired differences and the warnings."""
    by_cell = {(r["dataset"], r["system"]): r for r in records}
    for record in records:
        if "wer" in record and record.get("n_labelled") != record["n_estimated"]:
            del record["wer"]  # the truth of a labelled subset is not the corpus WER
        record.update(method="zero_label", n_labelled=0)
    pairs, warnings = [], []
    for dataset, (draws, est) in estimates.items():
        skipped = skipped_fields(draws, labels[labels["dataset"] == dataset])
        if skipped["n_skipped"]:
            warnings.append(skipped_warning(dataset, skipped))
        transcripts = transcribed(labels[labels["dataset"] == dataset])
        enough = enough_labels(dataset, est, settings, warnings)
        missed = missed_tail_warning(dataset, draws, est, enough)
        if missed:
            warnings.append(missed)
        for k, system in enumerate(est.systems):
            record = by_cell.get((dataset, system))
            if record is None:
                continue
            record["n_labelled"] = int(est.n_labelled[k])
            record["n_transcripts"] = transcripts
            record.update(skipped)
            if enough[k]:
                record.update(ppi_fields(est, k, settings), zero_label_wer=record["estimated_wer"])
                record["ci_low"], record["ci_high"] = (
                    record["interval_low"],
                    record["interval_high"],
                )
        if enough.sum() >= 2:  # each pair's interval depends on its two systems only
            kept = set(np.asarray(est.systems)[enough])
            pair = paired_differences(draws, est, level=settings.level, method=settings.interval)
            pair = pair[pair["system_a"].isin(kept) & pair["system_b"].isin(kept)]
            pairs.append(pair.assign(dataset=dataset, n_labelled=draws.m))
    columns = ["dataset", "system_a", "system_b", "difference", "low", "high", "verdict"]
    frame = pd.concat(pairs, ignore_index=True) if pairs else pd.DataFrame(columns=columns)
    extra = ["n_labelled", "more_labels_to_separate"]
    return LabelledResult(frame[[*columns, *extra]] if pairs else frame, warnings)


def transcribed(labels: pd.DataFrame) -> int:
    """The transcripts a dataset's labels hold: its distinct labelled utterances, those
    marked ``skip`` left out (a redrawn utterance is one transcript, several draws)."""
    skip = labels["skip"].astype(bool) if "skip" in labels else pd.Series(False, labels.index)
    return int(labels.loc[~skip.to_numpy(), "utt_id"].nunique())


def skipped_fields(draws: DatasetDraws, labels: pd.DataFrame) -> dict:
    """A labelled dataset's unlabellable rows: ``n_skipped`` (distinct utterances marked
    ``skip``) and ``unlabellable_share``, the design-weighted estimate of the share of its N
    utterances that have no WER (mean over the draws of w·1[skip]: Horvitz–Thompson, as the
    estimate itself)."""
    skip = labels["skip"].astype(bool) if "skip" in labels else pd.Series(False, labels.index)
    n_skipped = int(labels.loc[skip.to_numpy(), "utt_id"].nunique())
    share = 0.0
    if draws.skipped is not None and draws.m:
        share = float(np.mean(draws.weight * draws.skipped))
    return {"n_skipped": n_skipped, "unlabellable_share": share}


#: a missed tail is worth a warning when it widens an interval by this much (half-width)
TAIL_WARNING = 0.005


def missed_tail_warning(
    dataset: str, draws: DatasetDraws, est: Estimates, enough: np.ndarray
) -> dict | None:
    """The console's line when the draws missed the heavy tail the predictions show
    (:func:`werest.estimation.ppi.unobserved_tail_variance` widened an interval by
    :data:`TAIL_WARNING` or more): how many tail utterances were drawn, how much wider the
    intervals are, and what labelling them would cost."""
    if est.tail_widening is None or est.tail_counts is None:
        return None
    widening = np.where(enough, est.tail_widening, 0.0)
    if not (widening >= TAIL_WARNING).any():
        return None
    systems = [s for s, w in zip(est.systems, widening, strict=True) if w >= TAIL_WARNING]
    total, drawn = est.tail_counts
    n = draws.n_frame
    random_need = int(np.ceil(3 * n / max(total, 1)))
    return {
        "dataset": dataset,
        "systems": systems,
        "message": f"the labels hold {drawn} of the {plural(total, 'utterance')} whose "
        "predicted errors form a heavy tail (a random draw of "
        f"{draws.m} holds {draws.m * total / n:.1f} on average): what the others' errors may "
        f"be widens the intervals of {', '.join(systems)} by up to "
        f"{100 * widening.max():.1f} points. Labels among them remove it: `werest sample "
        "strategy=active` draws them in proportion to their predicted errors (a random draw "
        f"would need about {random_need} labels to hold 3 of them)",
    }


def skipped_warning(dataset: str, skipped: dict) -> dict:
    """The console's line about a dataset's rows marked ``skip``."""
    n = skipped["n_skipped"]
    return {
        "dataset": dataset,
        "systems": [],
        "message": f"{plural(n, 'utterance')} marked skip (no WER defined): the estimate is "
        "the WER of the utterances that can be transcribed (an estimated "
        f"{100 * (1 - skipped['unlabellable_share']):.0f} % of the dataset)",
    }


#: ``werest estimate`` says how many more labels would bring each interval to ± this
TARGET_HALF_WIDTH = 0.02


def format_more_labels(records: list[dict], pairs: pd.DataFrame) -> str:
    """The console's advice on more labels: per labelled dataset, the labels that would bring
    every system's interval to ±2 points, and, for each pair of neighbours (in the estimated
    order) not yet separated, the labels that would separate them if their difference held
    (an interval shrinks as 1/√labels)."""
    lines = []
    for dataset in sorted({r["dataset"] for r in records if r.get("method") == "ppi"}):
        mine = sorted(
            (r for r in records if r["dataset"] == dataset and r.get("method") == "ppi"),
            key=lambda r: (r["estimated_wer"], r["system"]),
        )
        need = max(r["more_labels_for_2_points"] for r in mine)
        labelled = max(r["n_labelled"] for r in mine)
        left = max(r.get("n_utterances", np.inf) for r in mine) - labelled  # a census is exact
        census = f"only labelling all {labelled + left:.0f} utterances would"
        reach = (
            "every interval is within ±2 points already"
            if need == 0
            else f"{census} bring every interval to ±2 points"
            if need > left
            else f"about {need:.0f} more labels (beyond {labelled}) would bring every "
            "interval to ±2 points"
        )
        lines.append(f"  {dataset}: {reach}")
        here = pairs[pairs["dataset"] == dataset] if len(pairs) else pairs
        for a, b in pairwise(mine):
            row = here[
                ((here["system_a"] == a["system"]) & (here["system_b"] == b["system"]))
                | ((here["system_a"] == b["system"]) & (here["system_b"] == a["system"]))
            ]
            if row.empty or row["verdict"].iat[0] != "not separable":
                continue
            more = row["more_labels_to_separate"].iat[0]
            lines.append(
                f"    {a['system']} vs {b['system']}: "
                + (
                    "equal estimates: no number of labels is sure to separate them"
                    if not np.isfinite(more)
                    else f"{census} tell them apart"
                    if more > left
                    else f"about {more:.0f} more labels would separate them"
                    " if their difference held"
                )
            )
    return "More labels:\n" + "\n".join(lines) if lines else ""


def ppi_fields(est: Estimates, k: int, settings: LabelSettings) -> dict:
    """System ``k``'s prediction-powered fields of a summary record."""
    return {
        "method": "ppi",
        "estimated_wer": float(est.ppi[k]),
        "interval_low": float(est.ppi_low[k]),
        "interval_high": float(est.ppi_high[k]),
        "interval_level": settings.level,
        "classical_wer": float(est.classical[k]),
        "classical_low": float(est.classical_low[k]),
        "classical_high": float(est.classical_high[k]),
        "unshrunk_wer": float(est.unshrunk[k]),
        "prior_weight": float(est.prior_weight[k]),
        "ppi_lambda": float(est.lam[k]),
        "effective_labels": float(est.effective_labels[k]),
        "more_labels_for_2_points": more_labels(
            int(est.n_labelled[k]), (est.ppi_high[k] - est.ppi_low[k]) / 2, TARGET_HALF_WIDTH
        ),
    }
