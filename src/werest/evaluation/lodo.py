"""``werest evaluate experiment=lodo``: leave one *domain* out, estimated as a user would.

For each held-out domain (a group of datasets: ``data.domains``), the model is trained on every
other domain exactly as ``werest train`` trains (ranking, features, balanced sample, fit), and
every system of the held-out domain is then estimated exactly as ``werest estimate`` estimates
for a user (:func:`werest.estimation.estimate.choose_ranking`: by default the systems' label-free
order,
whatever their names; then
:func:`werest.estimation.estimate.estimate_utterances` and
:func:`werest.estimation.estimate.summarise`).

Per (domain, dataset, system) cell it records the true corpus WER, werest's estimate with its
bootstrap CI, raw pWER against the same proxies (the corpus pWER), the utterance MAE of both,
and a conformal interval (:mod:`werest.model.intervals`: Mondrian bins of the estimate, signed
quantiles of (WER − aWER) / (aWER + offset)) calibrated on the cells of the *other* domains only
(each domain weighing the same), so the coverage measured is that of a new domain
(cross-conformal). :func:`calibration_from_cells` turns all cells into the calibration a
shipped model carries (``werest train calibration=…``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from werest import logs
from werest.columns import KEY
from werest.errors import ConfigError
from werest.estimation.estimate import (
    STATUS_OK,
    choose_ranking,
    estimate_utterances,
    predict_features,
    summarise,
)
from werest.evaluation.lodo_settings import LodoSettings
from werest.evaluation.lodo_summary import (
    ORDER_MARGIN,
    VERDICT_MARGIN,
    bin_summary,
    cross_conformal,
    cross_conformal_pairs,
    domain_summary,
    overall_summary,
    pairwise_order,
    winner_overall,
    winner_summary,
)
from werest.features.agreement import PANEL_SIZE, pairwise_agreement
from werest.features.inputs import build_features
from werest.features.proxy import Ranking, choose_proxies, rank_on
from werest.model.files import Models
from werest.model.intervals import (
    DEFAULT_INTERVAL,
    ConformalInterval,
)
from werest.model.training import (
    TrainingOptions,
    build_regressor,
    domain_of,
    fit_model,
    prepare_training_rows,
    training_frame,
)
from werest.text.normalise import Normaliser
from werest.text.scoring import utterance_labels

# the cells' measures (werest.evaluation.lodo_summary) are importable from here too, as
# before they moved
__all__ = [
    "HELD_OUT_COLUMNS",
    "ORDER_MARGIN",
    "VERDICT_MARGIN",
    "LodoResult",
    "LodoSettings",
    "bin_summary",
    "cross_conformal",
    "cross_conformal_pairs",
    "domain_summary",
    "evaluate_lodo",
    "fold_training_rows",
    "held_out_domains",
    "overall_summary",
    "pairwise_order",
    "winner_overall",
    "winner_summary",
]

log = logging.getLogger(__name__)


@dataclass
class LodoResult:
    """What a leave-one-domain-out run measured.

    Attributes
    ----------
    cells : one row per (domain, dataset, system): ``wer``, ``awer``, ``pwer`` (raw corpus
        pWER), their absolute errors, utterance MAEs, bootstrap CI, conformal interval.
    domains : one row per held-out domain: mean/max corpus errors, Spearman, MAE, coverage.
    overall : the same figures over every cell.
    timings : per fold: training rows and seconds.
    interval : the interval the cells were given (its Mondrian bins).
    utterances : every held-out labelled target row (key, ``domain``, ``proxy``,
        ``predicted_wer``, ``pwer``, ``proxy_words``, ``word_errors``, ``ref_words``): the
        model's predictions on a domain it never saw, with the truth
        (``werest evaluate experiment=few_labels`` draws labelled samples from them).
    """

    cells: pd.DataFrame
    domains: pd.DataFrame
    overall: dict
    timings: pd.DataFrame
    seconds: dict[str, float] = field(default_factory=dict)
    interval: ConformalInterval = DEFAULT_INTERVAL
    utterances: pd.DataFrame | None = None


def evaluate_lodo(
    table: pd.DataFrame,
    data: Mapping,
    features: list[str],
    model: Mapping,
    options: TrainingOptions = TrainingOptions(),
    lodo: LodoSettings = LodoSettings(),
    *,
    n_resamples: int = 200,
    labels: pd.DataFrame | None = None,
    pairs: pd.DataFrame | None = None,
    as_user: bool = True,
) -> LodoResult:
    """Leave each domain of ``table`` out in turn; see the module docstring.

    Parameters
    ----------
    table : labelled transcripts of several domains.
    data : the data config (``domains``, ``max_rows_per_domain``) training uses.
    features, model : the feature columns and the ``conf/model`` config to fit.
    options : how each fold's training rows are built and fitted, as ``werest train`` does
        (normaliser, two-system views, the proxies, seed, workers); the seed also seeds the
        cells' bootstrap of ``n_resamples`` resamples.
    lodo : the domains held out (default: every domain with two or more systems), the
        conformal interval and the held-out systems' panel (:class:`LodoSettings`).
    labels, pairs : :func:`werest.model.training.utterance_labels` and
        :func:`werest.features.agreement.pairwise_agreement` of ``table``, when already
        computed (ablations reuse them).
    as_user : estimate the held-out domain with ``werest estimate``'s own code
        (:func:`werest.estimation.estimate.estimate_utterances`, which aligns the held-out
        hypotheses again); False builds the same features from ``pairs`` (same functions,
        faster; for ablations).
    """
    table, labels, pairs = _with_domains(table, data, options, labels, pairs)
    domains = held_out_domains(table, lodo)
    folds = [
        _lodo_fold(
            table,
            domain,
            data,
            features,
            model,
            options,
            lodo,
            labels=labels,
            pairs=pairs,
            n_resamples=n_resamples,
            as_user=as_user,
        )
        for domain in logs.track(domains, desc="evaluate (held-out domains)", unit="domain")
    ]
    cells = cross_conformal(pd.concat([f[0] for f in folds], ignore_index=True), lodo.interval)
    return LodoResult(
        cells=cells,
        domains=domain_summary(cells),
        overall=overall_summary(cells),
        timings=pd.DataFrame([f[2] for f in folds]),
        interval=lodo.interval,
        utterances=pd.concat([f[1] for f in folds], ignore_index=True),
    )


def _lodo_fold(
    table: pd.DataFrame,
    domain: str,
    data: Mapping,
    features: list[str],
    model: Mapping,
    options: TrainingOptions,
    lodo: LodoSettings,
    *,
    labels: pd.DataFrame,
    pairs: pd.DataFrame,
    n_resamples: int,
    as_user: bool,
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """The fold that holds ``domain`` out (:func:`evaluate_lodo`): trained on the others,
    its systems estimated and scored: (its cells, its labelled rows, with their ``domain``,
    and its timing)."""
    fold_start = time.perf_counter()
    ranking, frame = fold_training_rows(
        table,
        domain,
        options,
        labels=labels,
        pairs=pairs,
        input_features=features,
        domains=data.get("domains"),
    )
    frame = prepare_training_rows(frame, data, seed=options.seed)
    fitted = fit_model(
        frame, features, build_regressor(model), normaliser=options.normaliser, ranking=ranking
    )
    fit_seconds = time.perf_counter() - fold_start
    held_cells, held_rows = _held_out_cells(
        table[table["domain"] == domain].drop(columns="domain"),
        fitted,
        labels,
        pairs=None if as_user else pairs[pairs["domain"] == domain],
        panel=lodo.panel,
        normaliser=options.normaliser,
        n_resamples=n_resamples,
        seed=options.seed,
        n_jobs=options.n_jobs,
    )
    timing = {
        "domain": domain,
        "train_rows": len(frame),
        "fit_seconds": round(fit_seconds, 1),
        "seconds": round(time.perf_counter() - fold_start, 1),
    }
    log.info("fold %s: %s", domain, timing)
    rows = held_rows[HELD_OUT_COLUMNS].assign(domain=domain)
    return held_cells.assign(domain=domain), rows, timing


def _with_domains(
    table: pd.DataFrame,
    data: Mapping,
    options: TrainingOptions,
    labels: pd.DataFrame | None,
    pairs: pd.DataFrame | None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``table`` with each row's ``domain`` (``data.domains``), its labels and its aligned
    system pairs (computed when None), the pairs with their dataset's ``domain`` too."""
    table = table.assign(domain=domain_of(table["dataset"], data.get("domains")).to_numpy())
    if labels is None:
        labels = utterance_labels(table, options.normaliser, options.n_jobs)
    if pairs is None:
        start = time.perf_counter()
        pairs = pairwise_agreement(table, normaliser=options.normaliser, n_jobs=options.n_jobs)
        log.info("aligned %d system pairs in %.0f s", len(pairs), time.perf_counter() - start)
    dataset_domain = table.drop_duplicates("dataset").set_index("dataset")["domain"]
    return table, labels, pairs.assign(domain=pairs["dataset"].map(dataset_domain).to_numpy())


def held_out_domains(table: pd.DataFrame, lodo: LodoSettings) -> list[str]:
    """The domains ``lodo`` holds out (default: every domain of ``table`` with two or more
    systems); ConfigError naming one that is not such a domain."""
    candidates = [name for name, rows in table.groupby("domain") if rows["system"].nunique() >= 2]
    folds = lodo.held_out or candidates
    unknown = sorted(set(folds) - set(candidates))
    if unknown:
        raise ConfigError(f"held-out domain {unknown[0]!r} is not a multi-system domain here")
    return list(folds)


def fold_training_rows(
    table: pd.DataFrame,
    domain: str,
    options: TrainingOptions = TrainingOptions(),
    *,
    labels: pd.DataFrame,
    pairs: pd.DataFrame,
    input_features: Sequence[str] = (),
    domains: Mapping | None = None,
) -> tuple[Ranking, pd.DataFrame]:
    """The fold that holds ``domain`` out: the systems ranked on the other domains' labels, and
    those domains' training rows (:func:`werest.model.training.training_frame` as ``options``
    say, aligned pairs taken from ``pairs``). ``table`` and ``pairs`` have a ``domain``
    column."""
    train_table = table[table["domain"] != domain]
    ranking = rank_on(train_table, options.normaliser, labels=labels)
    frame = training_frame(
        train_table,
        ranking,
        normaliser=options.normaliser,
        labels=labels,
        two_system_views=options.two_system_views,
        pairs=pairs[pairs["domain"] != domain],
        input_features=input_features,
        proxy_choice=options.proxies,
        domains=domains,
    )
    return ranking, frame


#: The columns of :attr:`LodoResult.utterances` (besides ``domain``).
HELD_OUT_COLUMNS = [
    *KEY, "proxy", "predicted_wer", "pwer", "proxy_words", "word_errors", "ref_words"
]  # fmt: skip


def _held_out_cells(
    table: pd.DataFrame,
    fitted,
    labels: pd.DataFrame,
    *,
    pairs: pd.DataFrame | None,
    normaliser: Normaliser,
    n_resamples: int,
    seed: int,
    n_jobs: int,
    panel: int | None = PANEL_SIZE,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Estimate every system of a held-out domain as ``werest estimate`` would (with
    ``panel``); score it: (its cells, its labelled estimated rows)."""
    models = Models(fitted)
    utterances = _held_out_utterances(table, models, pairs, normaliser, panel, n_jobs)
    records = pd.DataFrame(
        summarise(
            utterances,
            table,
            normaliser=normaliser,
            n_resamples=n_resamples,
            seed=seed,
        )
    )
    done = utterances[utterances["status"] == STATUS_OK].merge(
        labels[[*KEY, "wer", "word_errors", "ref_words"]], on=KEY, how="inner"
    )
    done = done[done["wer"].notna()]
    cells = records.merge(_cell_scores(done), on=["dataset", "system"], how="inner")
    cells = cells.rename(columns={"estimated_wer": "awer"})
    cells["error"] = cells["awer"] - cells["wer"]
    cells["abs_error"] = cells["error"].abs()
    cells["abs_error_raw"] = (cells["pwer"] - cells["wer"]).abs()
    return cells[cells["wer"].notna()], done


def _held_out_utterances(
    table: pd.DataFrame,
    models: Models,
    pairs: pd.DataFrame | None,
    normaliser: Normaliser,
    panel: int | None,
    n_jobs: int,
) -> pd.DataFrame:
    """The held-out domain's utterances estimated as ``werest estimate`` estimates them
    (with ``panel``), or, given its aligned ``pairs``, from features built of them."""
    ranking = choose_ranking(models, table)
    if pairs is None:
        return estimate_utterances(
            table,
            models,
            sorted(table["system"].unique()),
            ranking=ranking,
            n_jobs=n_jobs,
            panel_size=panel,
        )
    proxies = choose_proxies(table, ranking)
    features = build_features(
        table, proxies, normaliser=normaliser, input_features=models.wer.feature_names, pairs=pairs
    )
    return predict_features(features, models)


def _cell_scores(done: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, system) of the labelled estimated rows ``done``: the corpus pWER
    against the same proxies, the utterance MAE of the estimate and of pWER, the rows."""
    raw = done.assign(
        proxy_errors=done[["pwer_sub", "pwer_del", "pwer_ins"]].sum(axis=1),
        abs_err=(done["predicted_wer"] - done["wer"]).abs(),
        abs_err_raw=(done["pwer"] - done["wer"]).abs(),
    )
    grouped = raw.groupby(["dataset", "system"])
    return pd.DataFrame(
        {
            "pwer": grouped["proxy_errors"].sum() / grouped["proxy_words"].sum().clip(lower=1),
            "mae": grouped["abs_err"].mean(),
            "mae_raw": grouped["abs_err_raw"].mean(),
            "n_scored": grouped.size(),
        }
    ).reset_index()
