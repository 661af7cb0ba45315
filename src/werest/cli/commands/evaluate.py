"""``werest evaluate experiment=four_cases|lodo``: the paper's four cases, or leave one domain out.

Both write a cells CSV, a markdown report and plots named ``<name>*`` in ``output_dir`` with the
config, and show the headline table.
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
from omegaconf import DictConfig

from werest.cli.commands._common import (
    instantiate_block,
    labelled_table,
    normaliser_setting,
    output_dir,
    plain_dict,
    print_blocks,
    save_config,
)
from werest.errors import ConfigError
from werest.evaluation.few_labels import FewLabelResult, FewLabelSettings, evaluate_few_labels
from werest.evaluation.four_cases import (
    FourCaseResult,
    FourCases,
    evaluate_four_cases,
    evaluation_table,
    methods_for,
)
from werest.evaluation.lodo import LodoResult, LodoSettings, evaluate_lodo
from werest.io import atomic_path, staged_output
from werest.report.few_labels_report import bars_table, write_few_label_reports
from werest.report.lodo_report import write_lodo_reports
from werest.report.reports import format_bar_table, write_four_case_reports
from werest.stats import Bootstrap


def run(cfg: DictConfig) -> FourCaseResult | LodoResult | FewLabelResult:
    """Run the configured protocol; write its reports and the config; show the headline."""
    start = time.perf_counter()
    settings = plain_dict(cfg)
    if cfg.get("protocol") == "few_labels":
        result = _few_labels(cfg, settings)
        write = write_few_label_reports
        headline = bars_table(result).to_string(index=False)
    elif cfg.get("protocol") == "lodo":
        result = _lodo(cfg, settings)
        write = write_lodo_reports
        headline = result.domains.to_string(index=False, float_format=lambda v: f"{v:.4f}")
    else:
        result = _four_cases(cfg, settings)
        write = write_four_case_reports
        headline = format_bar_table(result.cells)
    result.seconds["total"] = round(time.perf_counter() - start, 1)
    # output_dir is shared by experiments (experiments/results): the run's files replace
    # their namesakes, all at once at the end, and the other files stay
    with staged_output(output_dir(cfg)) as folder:
        write(result, settings, folder, name=str(cfg.name))
        save_config(cfg, folder / f"{cfg.name}.config.yaml")
    print_blocks(headline, f"\nin {result.seconds['total']:.0f} s")
    return result


def _four_cases(cfg: DictConfig, settings: dict) -> FourCaseResult:
    if cfg.get("cases") is None:
        raise ConfigError("no 'cases' settings: choose one, e.g. experiment=four_cases")
    protocol = instantiate_block(cfg, "cases", FourCases)  # a bad protocol fails before the data
    bootstrap = instantiate_block(cfg, "bootstrap", Bootstrap)
    methods = methods_for(
        settings["features"]["columns"], settings["model"], settings.get("ablation")
    )
    table = labelled_table(cfg, sorted({f for method in methods for f in method.features}))
    return evaluate_four_cases(
        evaluation_table(table, protocol),
        protocol,
        methods,
        normaliser=normaliser_setting(cfg),
        n_jobs=cfg.n_jobs,
        n_resamples=bootstrap.n_resamples,
        seed=cfg.seed,
        two_system_views=bool(cfg.get("two_system_views", False)),
    )


def _few_labels(cfg: DictConfig, settings: dict) -> FewLabelResult:
    """Held-out predictions (from ``predictions`` when that file exists, else the LODO
    folds, saved there when it is set), then the draws."""
    few = instantiate_block(cfg, "few_labels", FewLabelSettings)
    lodo = instantiate_block(cfg, "lodo", LodoSettings)
    cached = cfg.get("predictions")
    if cached and Path(cached).exists():
        utterances = pd.read_parquet(cached)
    else:
        utterances = _lodo(cfg, settings).utterances
        if cached:
            Path(cached).parent.mkdir(parents=True, exist_ok=True)
            with atomic_path(Path(cached)) as tmp:
                utterances.to_parquet(tmp)
    if lodo.held_out:
        utterances = utterances[utterances["domain"].isin(lodo.held_out)]
    return evaluate_few_labels(utterances, few, lodo.interval)


def _lodo(cfg: DictConfig, settings: dict) -> LodoResult:
    lodo = instantiate_block(cfg, "lodo", LodoSettings)
    bootstrap = instantiate_block(cfg, "bootstrap", Bootstrap)
    return evaluate_lodo(
        labelled_table(cfg, list(settings["features"]["columns"])),
        settings["data"],
        list(settings["features"]["columns"]),
        settings["model"],
        normaliser=normaliser_setting(cfg),
        two_system_views=bool(cfg.get("two_system_views", True)),
        interval=lodo.interval,
        n_resamples=bootstrap.n_resamples,
        seed=cfg.seed,
        n_jobs=cfg.n_jobs,
        held_out=lodo.held_out,
        proxy_choice=str(cfg.get("proxies", "label_free")),
        panel=lodo.panel,
    )
