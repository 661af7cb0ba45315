"""``werest sample input=T budget=N out=to_label.csv [strategy=...]``: utterances to transcribe.

Draws ``budget`` utterances per dataset of the transcripts table (:func:`werest.estimation.sampling.
draw_sample`) and writes the labelling sheet, CSV, with ``<out>.config.yaml`` beside it and
a page to transcribe it on (:mod:`werest.report.sheet_page`: ``to_label.csv`` →
``to_label.html``).
``stratified`` and ``active`` need the model's per-utterance predictions, so they run
:func:`werest.estimation.pipeline.estimate_frame` on every system first (at least two systems);
``random`` needs no model.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from werest.cli.commands._common import build, print_blocks, save_config
from werest.cli.schema import SampleSettings
from werest.estimation.decision import WinnerSettings
from werest.estimation.loop import LabelRound, refuse_filled_sheet
from werest.estimation.sampling import check_design
from werest.io import atomic_path, check_output, staged_output
from werest.model.files import load_models
from werest.report.decision_text import (
    answered_line,
    format_draw,
    format_winner,
    with_label_notes,
)
from werest.report.sheet_page import page_path, write_sheet_page
from werest.text import NormalisationCache, cached_normalisation

if TYPE_CHECKING:
    pass


def run(settings: SampleSettings):
    """Draw, write the sheet and its config, show a line per dataset; returns the sheet.

    Each distinct hypothesis is normalised once a run: the estimate, the guards' sample,
    the winner's contests and the labels' scores share one cache."""
    with cached_normalisation(NormalisationCache()):
        return _sample(settings)


def _sample(settings: SampleSettings):
    check_output(settings.out, file=True)  # one that cannot be replaced: refused now
    refuse_filled_sheet(settings.out)  # nor one that holds someone's transcripts
    design = {"seed": settings.seed, "uniform_share": float(settings.uniform_share)}
    design["strata"] = settings.strata
    check_design(  # a bad setting fails before the model and the table load
        settings.budget,
        "random" if settings.strategy in ("winner", "auto") else settings.strategy,
        **design,
    )
    loop = _round(settings)
    draw = loop.draw(settings.budget, strategy=settings.strategy, **design)
    decision = with_label_notes(
        format_winner(draw.decisions) if draw.decisions else None, loop.notes
    )
    if draw.sheet.empty:  # every dataset answered (decided or good): nothing to label
        print_blocks(decision, answered_line(draw, settings.out))
        return draw.sheet
    with staged_output(settings.out, file=True) as out:  # the sheet and its config as one
        with atomic_path(out) as tmp:
            draw.sheet.to_csv(tmp, index=False)
        save_config(settings, out)
        write_sheet_page(
            draw.sheet, page_path(out), folder=Path(settings.out).parent, name=out.name
        )
    print_blocks(
        decision,
        format_draw(draw.sheet, draw.widths, draw.pilots),
        _hint(settings),
    )
    return draw.sheet


def _round(settings: SampleSettings) -> LabelRound:
    """The label round on the input and the sheets so far; the model loaded only when the
    strategy needs it, its payload read only if the cache cannot serve the estimate."""
    return LabelRound.open(
        settings.input,
        lambda: load_models(
            settings.model_path,
            trust_model=settings.trust_model,
            deferred=settings.cache_dir is not None,
        ),
        labels=settings.labels or None,
        strategy=settings.strategy,
        winner=build(settings.winner, WinnerSettings),
        cache_dir=settings.cache_dir,
        n_jobs=settings.n_jobs,
    )


def _hint(settings: SampleSettings) -> str:
    """What to do with the sheet: fill it, then estimate with every sheet so far."""
    sheets = f"'labels=[{_label_list(settings.labels)},{settings.out}]'"
    hint = f"fill the empty references, then: werest estimate input={settings.input} " + (
        sheets if settings.labels else f"labels={settings.out}"
    )
    return (
        hint + f"\n(or open the page {page_path(settings.out)}: transcribe there, then Save sheet)"
    )


def _label_list(value) -> str:
    return ",".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
