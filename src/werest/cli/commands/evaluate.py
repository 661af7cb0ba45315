"""``werest evaluate experiment=four_cases|lodo``: the paper's four cases, or leave one domain out.

Both write a cells CSV, a markdown report and plots named ``<name>*`` in ``output_dir`` with the
config, and show the headline table.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from werest.build import instantiate_checked
from werest.cli.commands._common import (
    build,
    labelled_table,
    normaliser_setting,
    print_blocks,
    save_config,
    training_options,
)
from werest.cli.declare import composed
from werest.cli.schema import EvaluateSettings
from werest.errors import ConfigError, InputError
from werest.evaluation.few_labels import FewLabelResult, FewLabelSettings, evaluate_few_labels
from werest.evaluation.four_cases import (
    FourCaseResult,
    FourCases,
    evaluate_four_cases,
    evaluation_table,
    methods_for,
)
from werest.evaluation.lodo import LodoResult, LodoSettings, evaluate_lodo
from werest.evaluation.winner import (
    WinnerExperiment,
    WinnerResult,
    evaluate_winner,
    hallucination_stress,
    scored_contests,
    stress_cells,
)
from werest.ingest.table import read_table
from werest.io import atomic_path, check_output, staged_output
from werest.report.few_labels_report import bars_table, write_few_label_reports
from werest.report.lodo_report import write_lodo_reports
from werest.report.reports import format_bar_table, write_four_case_reports
from werest.report.winner_report import bars_table as winner_bars
from werest.report.winner_report import write_winner_reports
from werest.stats import Bootstrap

if TYPE_CHECKING:
    import pandas as pd


def run(
    settings: EvaluateSettings,
) -> FourCaseResult | LodoResult | FewLabelResult | WinnerResult:
    """Run the configured protocol; write its reports and the config; show the headline."""
    check_output(settings.output_dir)  # a folder that cannot be written: refused now
    start = time.perf_counter()
    if settings.protocol == "few_labels":
        result = _few_labels(settings)
        write = write_few_label_reports
        headline = bars_table(result).to_string(index=False)
    elif settings.protocol == "winner":
        result = _winner(settings)
        write = write_winner_reports
        headline = winner_bars(result).to_string(index=False)
    elif settings.protocol == "lodo":
        result = run_lodo(settings)
        if settings.predictions:  # what experiment=few_labels draws from, kept
            save_predictions(result.utterances, settings.predictions)
        write = write_lodo_reports
        headline = result.domains.to_string(index=False, float_format=lambda v: f"{v:.4f}")
    else:
        result = _four_cases(settings)
        write = write_four_case_reports
        headline = format_bar_table(result.cells)
    result.seconds["total"] = round(time.perf_counter() - start, 1)
    # output_dir is shared by experiments (experiments/results): the run's files replace
    # their namesakes, all at once at the end, and the other files stay
    with staged_output(settings.output_dir) as folder:
        # the reports record the run's whole config
        write(result, composed(settings), folder, name=settings.name)
        save_config(settings, folder / f"{settings.name}.config.yaml")
    print_blocks(headline, f"\nin {result.seconds['total']:.0f} s")
    return result


def _four_cases(settings: EvaluateSettings) -> FourCaseResult:
    if settings.cases is None:
        raise ConfigError("no 'cases' settings: choose one, e.g. experiment=four_cases")
    protocol = build(settings.cases, FourCases)  # a bad protocol fails before the data
    bootstrap = build(settings.bootstrap, Bootstrap)
    methods = methods_for(settings.features.columns, settings.model.as_dict(), settings.ablation)
    table = labelled_table(settings, sorted({f for method in methods for f in method.features}))
    return evaluate_four_cases(
        evaluation_table(table, protocol),
        protocol,
        methods,
        training_options(settings),
        n_resamples=bootstrap.n_resamples,
    )


def _few_labels(settings: EvaluateSettings) -> FewLabelResult:
    """Held-out predictions (from ``predictions`` when that file exists, else the LODO
    folds, saved there when it is set), then the draws."""
    import pandas as pd

    few = _built(settings.few_labels, FewLabelSettings, "few_labels")
    lodo = _lodo_settings(settings)
    cached = settings.predictions
    if cached and cached.exists():
        utterances = pd.read_parquet(cached)
    else:
        utterances = run_lodo(settings).utterances
        if cached:
            save_predictions(utterances, cached)
    if lodo.held_out:
        utterances = utterances[utterances["domain"].isin(lodo.held_out)]
    return evaluate_few_labels(utterances, few, lodo.interval)


def save_predictions(utterances: pd.DataFrame, path) -> None:
    """The held-out predictions of a LODO run (``LodoResult.utterances``) as Parquet, written
    atomically: ``predictions=`` of ``experiment=lodo`` and ``experiment=few_labels``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        utterances.to_parquet(tmp)


def _winner(settings: EvaluateSettings) -> WinnerResult:
    """Which system is best: the zero-label cells (the LODO cells of the shared data, or the
    shipped model's estimates of ``input``), the labelled contests, the simulated users."""
    import pandas as pd

    experiment = _built(settings.winner, WinnerExperiment, "winner")
    if settings.input:
        from werest.estimation.pipeline import EstimateOptions, estimate_frame
        from werest.model.files import load_models

        table = read_table(settings.input)
        if "reference" not in table.columns or table["reference"].isna().all():
            raise InputError(
                "experiment=winner needs references to simulate labels",
                path=settings.input,
                column="reference",
            )
        options = EstimateOptions(n_jobs=settings.n_jobs)  # every system
        run = estimate_frame(table, load_models(None), options, name=settings.input)
        cells = pd.DataFrame(run.records)
        cells = cells.assign(domain=cells["dataset"])
    else:
        if not (settings.cells and settings.cells.exists()):
            raise ConfigError(
                f"cells={settings.cells}: no such file; `werest evaluate experiment=lodo` "
                "writes the held-out cells (experiments/results/lodo_cells.csv)"
            )
        cells = pd.read_csv(settings.cells).rename(columns={"awer": "estimated_wer"})
        table = labelled_table(settings, [])
        if experiment.stress > 0:  # the hallucination stress dataset (#47)
            source = experiment.stress_dataset
            stress = hallucination_stress(
                table, normaliser_setting(settings), source, experiment.stress, experiment.seed
            )
            table = pd.concat([table, stress], ignore_index=True)
            cells = pd.concat([cells, stress_cells(cells, source)], ignore_index=True)
    contests, errors, truth = scored_contests(table, normaliser_setting(settings))
    return evaluate_winner(contests, errors, truth, cells, experiment, n_jobs=settings.n_jobs)


def run_lodo(settings: EvaluateSettings) -> LodoResult:
    """Leave one domain out as ``settings`` say, on the labelled table of ``settings.data``."""
    lodo = _lodo_settings(settings)
    bootstrap = build(settings.bootstrap, Bootstrap)
    columns = list(settings.features.columns)
    return evaluate_lodo(
        labelled_table(settings, columns),
        settings.data.as_dict(),
        columns,
        settings.model.as_dict(),
        training_options(settings),
        lodo,
        n_resamples=bootstrap.n_resamples,
    )


def _lodo_settings(settings: EvaluateSettings) -> LodoSettings:
    if settings.lodo is None:
        raise ConfigError(f"protocol={settings.protocol} needs 'lodo' settings: experiment=lodo")
    return build(settings.lodo, LodoSettings)


def _built(block: dict | None, kind: type, key: str):
    """An ``Any`` block with a ``_target_`` (``few_labels``: the experiment's own), built."""
    if block is None:
        raise ConfigError(f"no '{key}' settings: experiment=few_labels sets them")
    return instantiate_checked(block, kind, key, _convert_="all")
