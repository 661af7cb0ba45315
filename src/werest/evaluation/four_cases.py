"""``werest evaluate experiment=four_cases``: the paper's four evaluation cases.

Source system S, target systems T, benchmark datasets B and in-the-wild datasets W
(Waheed et al., 2025; see docs/architecture.md). Leave one B dataset out: for each held-out ``b``,

1. rank every system on the labelled rows of B∖{b} only (:func:`werest.model.training.rank_on`);
2. train a fresh estimator on S's rows of B∖{b} (:func:`werest.model.training.training_frame`);
3. evaluate, with proxies chosen by that fold's ranking (systems it never saw rank last):
   case 1 = S on ``b``; case 2 = each T on ``b``; case 3 = S on each W dataset that has S;
   case 4 = each T on each W dataset, plus the systems of W never seen in B (unseen
   targets), and every system of a W dataset that has no S.

W rows never reach ranking or training. Cases 3 and 4 are evaluated with every fold's model:
one cell per fold, plus a ``fold = "mean"`` cell averaging the per-fold metrics.

Every method runs on the same fold data: ``werest`` (the configured ``model`` on the
configured ``features``), the baselines ``raw_pwer`` (pWER as the estimate; the corpus
estimate is the corpus pWER) and ``train_mean`` (the mean training label), and the ablation
feature sets (``ablation.feature_sets`` with ``ablation.model``). A learned method's corpus
estimate weights utterances by the proxy's length ``n = proxy_words`` (clipped at 1):
Σ(pred · n) / Σ n (:func:`werest.estimation.corpus.estimated_sample`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from werest import logs
from werest.errors import ConfigError, InputError
from werest.estimation.corpus import estimated_sample
from werest.evaluation.settings import FourCases
from werest.features.proxy import rank_on
from werest.model.settings import TrainingOptions
from werest.model.training import fit_model, training_frame
from werest.resampling import bootstrap_ci
from werest.text.normalise import Normaliser
from werest.text.scoring import utterance_labels

log = logging.getLogger(__name__)

CASES: dict[int, str] = {
    1: "S on held-out B (IID, source)",
    2: "T on held-out B (IID, target)",
    3: "S on W (OOD, source)",
    4: "T on W (OOD, target)",
}
CELL = ["case", "method", "fold", "train_system", "eval_system", "dataset"]
METRICS = ["n", "mae", "rmse", "pearson", "spearman", "wer", "awer", "abs_corpus_error"]
CSV_COLUMNS = [*CELL, *METRICS, "awer_ci_low", "awer_ci_high", "group", "features", "model"]
MEAN_FOLD = "mean"
MAIN = "main"
ABLATION = "ablation"
BASELINE = "baseline"
RAW_PWER = "raw_pwer"
TRAIN_MEAN = "train_mean"
WEREST = "werest"


@dataclass(frozen=True)
class Method:
    """One way of estimating utterance WER: a learned model or a baseline.

    Parameters
    ----------
    name : the ``method`` column (``werest``, ``raw_pwer``, ``train_mean``, ``ablation: …``).
    kind : ``model``, ``raw_pwer`` or ``train_mean``.
    group : ``main``, ``baseline`` or ``ablation``.
    features : feature columns of a learned method.
    model : the model config (``_target_`` …) of a learned method.
    """

    name: str
    kind: str
    group: str = MAIN
    features: tuple[str, ...] = ()
    model: Mapping | None = field(default=None, compare=False)

    @property
    def model_name(self) -> str:
        """A short name of the estimator, for tables."""
        if self.model is None:
            return ""
        target = str(self.model.get("_target_", "")).rsplit(".", 1)[-1]
        models = self.model.get("models")
        return f"{target}({'+'.join(models)})" if models else target


@dataclass
class FourCaseResult:
    """Everything a four-case run measured.

    Attributes
    ----------
    cells : one row per (case, method, fold, train_system, eval_system, dataset) with
        :data:`METRICS`; cases 3/4 also have ``fold = "mean"`` rows.
    predictions : the evaluated rows of every fold (keys, ``case``, ``fold``, labels) with one
        prediction column per method (``pred:<method>``).
    rankings : per (method, fold, dataset): Spearman/Kendall of the systems' aWER vs WER.
    timings : per (fold, method): training seconds.
    protocol : the protocol that was run.
    """

    cells: pd.DataFrame
    predictions: pd.DataFrame
    rankings: pd.DataFrame
    timings: pd.DataFrame
    protocol: FourCases
    methods: list[Method]
    seconds: dict[str, float] = field(default_factory=dict)


def evaluate_four_cases(
    table: pd.DataFrame,
    protocol: FourCases,
    methods: list[Method],
    options: TrainingOptions = TrainingOptions(two_system_views=False),
    *,
    n_resamples: int = 0,
) -> FourCaseResult:
    """Run the leave-one-benchmark-out protocol for every method.

    Parameters
    ----------
    table : labelled transcripts of (at least) every dataset in B ∪ W.
    protocol : S, T, B, W (validated here).
    methods : learned methods and baselines (:func:`methods_from_config`).
    options : how each fold's training rows are built (its ``normaliser``, of labels and
        features; ``two_system_views``: :func:`werest.model.training.training_frame`), with
        ``n_jobs`` processes; its ``seed`` seeds the bootstrap. The proxies are those of the
        fold's ranking, whatever ``options.proxies`` says (the paper's protocol).
    n_resamples : bootstrap resamples for the aWER CI (0: none).

    Returns
    -------
    A :class:`FourCaseResult`.
    """
    start = time.perf_counter()
    table = _labelled_table(table, protocol)
    labels = utterance_labels(table, options.normaliser, options.n_jobs)
    systems_by_dataset = table.groupby("dataset")["system"].agg(set).to_dict()
    benchmarks = logs.track(protocol.benchmark_datasets, desc="evaluate (folds)", unit="fold")
    folds = [
        run_fold(
            table,
            labels,
            protocol,
            held_out,
            methods,
            systems_by_dataset=systems_by_dataset,
            options=options,
        )
        for held_out in benchmarks
    ]
    predicted = pd.concat([predictions for predictions, _ in folds], ignore_index=True)
    cells = cell_metrics(predicted, methods, protocol, n_resamples=n_resamples, seed=options.seed)
    return FourCaseResult(
        cells=cells,
        predictions=predicted,
        rankings=ranking_agreement(cells),
        timings=pd.DataFrame([timing for _, timings in folds for timing in timings]),
        protocol=protocol,
        methods=methods,
        seconds={"evaluate": round(time.perf_counter() - start, 1)},
    )


def _labelled_table(table: pd.DataFrame, protocol: FourCases) -> pd.DataFrame:
    """:func:`evaluation_table`; InputError when its rows hold no reference."""
    table = evaluation_table(table, protocol)
    if "reference" not in table.columns or table["reference"].isna().all():
        raise InputError("the evaluation data has no references: nothing to evaluate against")
    return table


def run_fold(
    table: pd.DataFrame,
    labels: pd.DataFrame,
    protocol: FourCases,
    held_out: str,
    methods: list[Method],
    *,
    systems_by_dataset: Mapping[str, set[str]],
    options: TrainingOptions,
) -> tuple[pd.DataFrame, list[dict]]:
    """One leave-one-out fold: rank and train on B∖{held_out}, predict its evaluation rows.

    Returns
    -------
    The fold's evaluated rows with ``fold``, ``case`` and one ``pred:<method>`` column per
    method, and the training time of each method.
    """
    train_datasets = [d for d in protocol.benchmark_datasets if d != held_out]
    train_table = table[table["dataset"].isin(train_datasets)]
    ranking = rank_on(train_table, options.normaliser, labels=labels)
    log.info("fold %s: ranking on %s: %s", held_out, train_datasets, ranking.systems)
    inputs = sorted({name for method in methods for name in method.features})
    train = training_frame(
        train_table,
        ranking,
        normaliser=options.normaliser,
        targets=[protocol.source_system],
        labels=labels,
        two_system_views=options.two_system_views,
        n_jobs=options.n_jobs,
        input_features=inputs,
    )
    if train.empty:
        raise ConfigError(
            f"fold {held_out}: source system {protocol.source_system!r} has no labelled row with "
            f"a proxy in {', '.join(train_datasets)}"
        )
    evaluated = evaluation_rows(
        table,
        labels,
        protocol,
        held_out,
        ranking,
        systems_by_dataset,
        normaliser=options.normaliser,
        n_jobs=options.n_jobs,
        input_features=inputs,
    )
    return evaluated, predict_methods(methods, train, evaluated, held_out)


def predict_methods(
    methods: list[Method], train: pd.DataFrame, evaluated: pd.DataFrame, held_out: str
) -> list[dict]:
    """Each method trained on ``train`` and its predictions added to ``evaluated`` (in
    place, as ``pred:<method>``); the training time of each."""
    timings = []
    for method in methods:
        seconds = time.perf_counter()
        evaluated[f"pred:{method.name}"], inner_cv = predict_method(method, train, evaluated)
        timings.append(
            {
                "fold": held_out,
                "method": method.name,
                "group": method.group,
                "model": method.model_name,
                "train_rows": len(train),
                "seconds": round(time.perf_counter() - seconds, 2),
                "inner_cv": inner_cv,
            }
        )
        log.info("fold %s: %s in %.1f s", held_out, method.name, timings[-1]["seconds"])
    return timings


def evaluation_rows(
    table: pd.DataFrame,
    labels: pd.DataFrame,
    protocol: FourCases,
    held_out: str,
    ranking,
    systems_by_dataset: Mapping[str, set[str]],
    *,
    normaliser: Normaliser,
    n_jobs: int,
    input_features: Sequence[str] = (),
) -> pd.DataFrame:
    """Features and labels of the fold's evaluation rows (held-out B and every W), with cases;
    ``input_features`` as in :func:`werest.model.training.training_frame`."""
    cases = protocol.case_of(systems_by_dataset, held_out)
    eval_table = table[table["dataset"].isin([held_out, *protocol.wild_datasets])]
    frame = training_frame(
        eval_table,
        ranking,
        normaliser=normaliser,
        targets=sorted(cases["system"].unique()),
        labels=labels,
        n_jobs=n_jobs,
        input_features=input_features,
    )
    frame = frame.merge(cases, on=["dataset", "system"], how="inner")
    return frame.assign(fold=held_out).reset_index(drop=True)


def predict_method(
    method: Method, train: pd.DataFrame, evaluated: pd.DataFrame
) -> tuple[np.ndarray, str]:
    """Utterance WER estimates of ``method`` for ``evaluated``, trained on ``train``.

    Returns
    -------
    The predictions and, for a stacked model, a one-line summary of its inner
    cross-validation (each base model's MAE and its weight in the blend; else "").
    """
    if method.kind == RAW_PWER:
        return evaluated["pwer"].to_numpy(dtype=float), ""
    if method.kind == TRAIN_MEAN:
        return np.full(len(evaluated), float(train["wer"].mean())), ""
    if method.kind != "model":
        raise ConfigError(f"unknown method kind {method.kind!r}")
    estimator = build_estimator(method)
    model = fit_model(train, list(method.features), estimator, target="wer")
    predicted = model.estimator.predict(evaluated[list(method.features)])
    return np.asarray(predicted, dtype=float), stack_summary(model.info.get("cv", {}))


def stack_summary(cv: Mapping) -> str:
    """``gb 0.074 (w 0.89); …`` from a StackedWerRegressor's ``cv_results_``."""
    weights = cv.get("stack", {}).get("weights", [])
    names = [name for name in cv if name != "stack"]
    if len(weights) != len(names):
        return ""
    return "; ".join(
        f"{name} {cv[name]['cv_mae']:.3f} (w {weight:.2f})"
        for name, weight in zip(names, weights, strict=True)
    )


def build_estimator(method: Method):
    """A fresh estimator from the method's model config; monotonic features restricted to the
    method's feature set (an ablation set may lack some)."""
    overrides = {}
    monotonic = method.model.get("monotonic_features") if method.model is not None else None
    if monotonic:
        overrides["monotonic_features"] = [f for f in monotonic if f in method.features]
    from werest.model.training import build_regressor

    return build_regressor(method.model, **overrides)


def corpus_estimate(method: Method, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Numerator and denominator terms per row of the method's corpus estimate.

    ``raw_pwer``: pWER errors over proxy words (the corpus pWER); every other method:
    prediction · n over n (n: proxy words, :func:`werest.estimation.corpus.estimated_sample`).
    """
    if method.kind == RAW_PWER:
        errors = frame[["pwer_sub", "pwer_del", "pwer_ins"]].sum(axis=1).to_numpy(dtype=float)
        return errors, frame["proxy_words"].to_numpy(dtype=float)
    sample = estimated_sample(frame, f"pred:{method.name}")
    return sample.numerator, sample.denominator


def _correlation(function, x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(function(x, y)[0])


def utterance_metrics(predicted: np.ndarray, actual: np.ndarray) -> dict[str, float]:
    """n, MAE, RMSE, Pearson and Spearman of utterance estimates (NaN correlations when
    either side is constant)."""
    error = predicted - actual
    return {
        "n": len(actual),
        "mae": float(np.mean(np.abs(error))) if len(actual) else float("nan"),
        "rmse": float(np.sqrt(np.mean(error**2))) if len(actual) else float("nan"),
        "pearson": _correlation(stats.pearsonr, predicted, actual),
        "spearman": _correlation(stats.spearmanr, predicted, actual),
    }


def cell_metrics(
    predicted: pd.DataFrame,
    methods: list[Method],
    protocol: FourCases,
    *,
    n_resamples: int = 0,
    seed: int = 0,
) -> pd.DataFrame:
    """Metrics per (case, method, fold, eval_system, dataset), plus fold-mean rows for
    cases 3 and 4."""
    rows = []
    for (case, fold, system, dataset), group in predicted.groupby(
        ["case", "fold", "system", "dataset"], sort=True
    ):
        wer = _ratio(group["word_errors"].sum(), group["ref_words"].sum())
        for method in methods:
            numerator, denominator = corpus_estimate(method, group)
            awer = _ratio(numerator.sum(), denominator.sum())
            low, high = (
                bootstrap_ci(numerator, denominator, n_resamples=n_resamples, seed=seed)
                if n_resamples
                else (float("nan"), float("nan"))
            )
            rows.append(
                {
                    "case": int(case),
                    "method": method.name,
                    "fold": fold,
                    "train_system": protocol.source_system,
                    "eval_system": system,
                    "dataset": dataset,
                    **utterance_metrics(
                        group[f"pred:{method.name}"].to_numpy(dtype=float),
                        group["wer"].to_numpy(dtype=float),
                    ),
                    "wer": wer,
                    "awer": awer,
                    "abs_corpus_error": abs(awer - wer),
                    "awer_ci_low": low,
                    "awer_ci_high": high,
                    "group": method.group,
                    "features": ",".join(method.features),
                    "model": method.model_name,
                }
            )
    cells = pd.DataFrame(rows, columns=CSV_COLUMNS)
    return pd.concat([cells, fold_means(cells)], ignore_index=True)


def _ratio(numerator: float, denominator: float) -> float:
    return float(numerator / denominator) if denominator > 0 else float("nan")


def fold_means(cells: pd.DataFrame) -> pd.DataFrame:
    """Cases 3/4 averaged over the folds' models: every metric is the mean of the per-fold
    values (so ``abs_corpus_error`` is the mean per-fold error, not |mean aWER − WER|)."""
    wild = cells[cells["case"].isin([3, 4])]
    if wild.empty:
        return pd.DataFrame(columns=CSV_COLUMNS)
    keys = [
        "case",
        "method",
        "train_system",
        "eval_system",
        "dataset",
        "group",
        "features",
        "model",
    ]
    numeric = [*METRICS, "awer_ci_low", "awer_ci_high"]
    means = wild.groupby(keys, sort=True, dropna=False)[numeric].mean().reset_index()
    means["n"] = means["n"].round().astype(int)
    return means.assign(fold=MEAN_FOLD)[CSV_COLUMNS]


def ranking_agreement(cells: pd.DataFrame) -> pd.DataFrame:
    """Per (method, fold, dataset): Spearman and Kendall between systems ranked by aWER and by
    true WER (NaN, with a note, where fewer than 3 systems)."""
    rows = []
    for (method, fold, dataset), group in cells.groupby(["method", "fold", "dataset"], sort=True):
        n_systems = group["eval_system"].nunique()
        row = {
            "method": method,
            "fold": fold,
            "dataset": dataset,
            "cases": ",".join(str(c) for c in sorted(group["case"].unique())),
            "n_systems": n_systems,
            "systems_by_wer": " < ".join(group.sort_values("wer")["eval_system"]),
            "systems_by_awer": " < ".join(group.sort_values("awer")["eval_system"]),
            "spearman": float("nan"),
            "kendall": float("nan"),
            "note": "",
        }
        if n_systems < 3:
            row["note"] = f"only {n_systems} system(s): no rank correlation"
        else:
            wer, awer = group["wer"].to_numpy(), group["awer"].to_numpy()
            row["spearman"] = _correlation(stats.spearmanr, awer, wer)
            row["kendall"] = _correlation(stats.kendalltau, awer, wer)
        rows.append(row)
    return pd.DataFrame(rows)


def evaluation_table(table: pd.DataFrame, protocol: FourCases) -> pd.DataFrame:
    """The rows of B ∪ W, after checking the protocol's names against ``table``."""
    protocol.validate(table)
    keep = [*protocol.benchmark_datasets, *protocol.wild_datasets]
    return table[table["dataset"].isin(keep)].reset_index(drop=True)


def methods_for(
    features: Sequence[str], model: Mapping, ablation: Mapping | None = None
) -> list[Method]:
    """``werest`` (``model`` on ``features``) + the two baselines + the ablation's feature
    sets (``{"feature_sets": {name: columns}, "model": optional other model}``)."""
    methods = [
        Method(WEREST, "model", MAIN, tuple(features), model),
        Method(RAW_PWER, RAW_PWER, BASELINE),
        Method(TRAIN_MEAN, TRAIN_MEAN, BASELINE),
    ]
    if ablation and ablation.get("feature_sets"):
        ablation_model = ablation.get("model") or model
        for name, columns in ablation["feature_sets"].items():
            methods.append(
                Method(f"ablation: {name}", "model", ABLATION, tuple(columns), ablation_model)
            )
    return methods
