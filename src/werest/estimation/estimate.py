"""``werest estimate``: label-free WER of target systems on a transcripts table.

    werest estimate input=PATH target=SYSTEM [proxy=SYSTEM] [model_path=PATH] output_dir=DIR

For each target row the proxy is the explicit ``proxy``, else the best system of the model's
saved ranking that transcribed the utterance, else (a model without a ranking) the best system
on the input's own references. When the input holds systems the ranking has never seen, a
labelled ranking cannot place them, so all systems are ordered label-free by their agreement
with each other (:func:`werest.features.proxy.consensus_order`) and a warning says so.

The agreement features are computed against the proxy and the other systems, and the model
predicts the utterance WER. Hypotheses are normalised once (each distinct string once), then
utterances are processed in chunks, so features are held for one chunk at a time.

Outputs (written atomically): ``DIR/utterances.csv`` (one row per target utterance: key,
proxy, features, ``predicted_wer`` [and ``predicted_cer``], ``status``), ``DIR/summary.json``
(per dataset and system: ``estimated_wer`` with a bootstrap 95 % CI, counts, and the true WER
when the input has references), ``DIR/resources.json`` (the run's CPU %, memory and GPU use:
:mod:`werest.resources`) and ``DIR/config.yaml``.

A corpus estimate weights utterances by their proxy's length n (``proxy_words``):
Σ(predicted WER · n) / Σ n. With the predictions equal to each utterance's pWER, that is raw
corpus pWER (:func:`werest.estimation.corpus.estimated_sample`).

This module holds the stage's pieces; the pipeline that runs them on a table in memory is
:func:`werest.estimation.pipeline.estimate_frame`, and on each partition of a large input
:func:`werest.partition.estimate.estimate_input`.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Collection
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from werest import logs
from werest.codes import row_codes
from werest.errors import ConfigError, InputError, unknown_name
from werest.estimation.corpus import estimated_sample, true_wer
from werest.estimation.guards import (
    PAIR_ROWS,
    sample_pairs,
)
from werest.estimation.settings import CHUNK_UTTERANCES
from werest.features.agreement import (
    PANEL_SIZE,
    STATUS_NO_PROXY,
    STATUS_OK,
    Panel,
    add_dataset_context,
)
from werest.features.inputs import (
    build_features,
    input_columns,
    require_inputs,
)
from werest.features.proxy import Ranking, choose_proxies, consensus_order, references_ranking
from werest.ingest.table import KEY
from werest.model.files import Models, TrainedModel
from werest.model.intervals import calibrated_interval, pair_interval
from werest.stats import bootstrap_ci, shared_draws
from werest.text import (
    NO_NORMALISATION,
    Normaliser,
    normalised_columns,
)
from werest.text.scoring import dataset_units, scoring_units, utterance_order

log = logging.getLogger(__name__)

STATUS_NO_FEATURE = "missing feature value"


#: the features stage's progress steps: about this many chunks of utterances, so that the bar
#: advances every fraction of a second (experiments/bench_progress.py)
PROGRESS_STEPS = 20
#: the fewest utterances a chunk holds for the progress bar's sake: each chunk costs about
#: 0.1-0.15 s of its own (pandas), so 500 (~0.4 s a step) keeps that under a third of the stage
STEP_UTTERANCES = 500
#: with no bar (``progress=false``, stderr not a terminal), the fewest target rows a chunk
#: holds: a row costs some 50-70 µs, so a chunk's own cost is under a tenth of its rows'
STEP_ROWS = 20_000


def resolve_targets(
    table: pd.DataFrame, target, proxy: str | None, no_hypotheses: Collection[str] = ()
) -> list[str]:
    """The target systems: one name, a list, or null for every system but the proxy.

    ``no_hypotheses`` are the input's systems left out because every hypothesis of theirs is
    null (``Spill.no_hypotheses``): naming one (as target or proxy) says so, not "not in the
    input"."""
    systems = sorted(table["system"].unique())
    if target in (None, "", "all"):
        targets = [s for s in systems if s != proxy]
    else:
        targets = [str(target)] if isinstance(target, str | int) else [str(t) for t in target]
        if not targets:
            raise ConfigError("target=[] names no system: give one, a list, or null for all")
    for role, name in [*(("target", t) for t in targets), ("proxy", proxy)]:
        if name is not None and name not in systems and name in no_hypotheses:
            raise ConfigError(
                f"{role} system {name!r} has no hypotheses: every row of it in the input has "
                "a null hypothesis (not run?)"
            )
    unknown = [t for t in targets if t not in systems]
    if unknown:
        raise unknown_name("target system", unknown[0], systems, "systems")
    if proxy is not None and proxy in targets:
        raise ConfigError(f"proxy {proxy!r} is also the target: choose another proxy")
    if not systems:
        raise InputError("the input holds no hypothesis: every one is null (not run?)")
    if len(systems) < 2:
        raise InputError(
            f"the input holds one system ({systems[0]}): estimating needs at "
            "least one other system's hypotheses for the same utterances"
        )
    return targets


def proxy_ranking(model: TrainedModel, table: pd.DataFrame) -> Ranking:
    """The model's ranking, else a ranking on the input's own references."""
    if model.ranking is not None:
        return model.ranking
    return reference_ranking(model, table)


def reference_ranking(model: TrainedModel, table: pd.DataFrame) -> Ranking:
    """The systems ranked on the input's own references (``ranking=references``)."""
    return references_ranking(
        table,
        Normaliser(model.normaliser),  # the card holds its name
        "leave ranking unset (label-free), or pass system_order=[best,...] or proxy=SYSTEM",
    )


#: ``ranking=`` values that are not a ranking file.
LABEL_FREE, MODEL_RANKING, REFERENCE_RANKING = "label_free", "model", "references"


def choose_ranking(
    models: Models,
    table: pd.DataFrame,
    *,
    ranking: str | Path | None = None,
    system_order: list[str] | None = None,
    pairs: pd.DataFrame | None = None,
) -> Ranking:
    """The order proxies are chosen in (best first).

    By default (``ranking`` null or ``label_free``) the systems' label-free order
    (:func:`werest.features.proxy.consensus_order`): it needs no reference, and it never looks at
    the
    systems' names. The model's saved ranking is *not* used by default: it was measured on
    other domains, and using it only when it knows every name made the estimates change
    when a system was renamed. Users who know their systems choose:

    * ``system_order=[best, ..., worst]``: their own order; systems it does not list come
      after, in label-free order;
    * ``ranking=model``: the model's saved ranking (systems it never saw come after, in
      label-free order);
    * ``ranking=references``: the input's own references (the true order where labelled);
    * ``ranking=PATH``: a ``ranking.json`` written by ``werest score``.

    ``pairs`` (:func:`werest.features.agreement.pairwise_agreement` of a sample) saves
    aligning the sample again.
    """
    if system_order is not None and ranking not in (None, LABEL_FREE):
        raise ConfigError("give ranking= or system_order=, not both")
    consensus = consensus_order(table, normaliser=models.normaliser, pairs=pairs)
    if system_order is None and ranking in (None, LABEL_FREE):
        log.info("proxies follow the systems' label-free order: %s", consensus)
        return Ranking.from_order(consensus)
    if system_order is not None:
        order = [str(name) for name in system_order]
        unknown = [name for name in order if name not in set(table["system"])]
        if unknown:
            raise unknown_name("system_order: system", unknown[0], table["system"], "systems")
        return Ranking.from_order(order + [name for name in consensus if name not in order])
    if ranking == MODEL_RANKING:
        known = proxy_ranking(models.wer, table)
    elif ranking == REFERENCE_RANKING:
        known = reference_ranking(models.wer, table)
    else:
        known = Ranking.load(ranking)
    ranked = [name for name in known.systems if name in set(table["system"])]
    unseen = [name for name in consensus if name not in set(ranked)]
    if unseen:
        log.warning(
            "systems %s are not in the ranking: they follow the ranked ones in label-free order",
            unseen,
        )
    return Ranking.from_order(ranked + unseen)


def estimate_utterances(
    table: pd.DataFrame,
    models: Models,
    targets: list[str],
    *,
    proxy: str | None = None,
    ranking: Ranking | None = None,
    unseen_order: list[str] | None = None,
    chunk_utterances: int = CHUNK_UTTERANCES,
    n_jobs: int = 1,
    panel_size: int | None = PANEL_SIZE,
    helpers: int = 0,
) -> pd.DataFrame:
    """Features and predictions for every target row, utterance chunk by utterance chunk.

    Parameters
    ----------
    models : the WER model and optionally a CER one; the WER model's normaliser is used.
    unseen_order : the order of systems the ranking does not hold (label-free consensus).
    panel_size : each target is compared with its ``panel_size`` best-ranked others, in the
        proxy order (:class:`werest.features.agreement.Panel`), so the cost grows linearly
        with the number of systems; None: with every other system.
    helpers : with ``n_jobs=1``, forked processes that share the normalisation and the
        chunks (:func:`werest.forked.shared_map`), while this process reads the model's
        payload first (a deferred one), and as many more threads for the prediction; the
        result is the same.
    """
    panel = _panel(table, proxy, ranking, unseen_order, panel_size)
    extra = _extra_features(models, table)
    # Each distinct hypothesis is normalised once for the whole table, not once per chunk.
    normalised = normalised_columns(
        table, models.normaliser, ("hypothesis",), n_jobs=n_jobs, helpers=helpers
    )
    columns = input_columns(extra)
    table = table[[*KEY, *columns]].assign(hypothesis=normalised["hypothesis"].to_numpy())
    table, codes, size, bounds = _chunks(table, panel, chunk_utterances)

    def chunk(start: int) -> pd.DataFrame:
        return table[(codes >= start) & (codes < start + size)]

    work = partial(
        _estimate_chunk,
        models=models,
        targets=targets,
        proxy=proxy,
        ranking=ranking,
        unseen_order=unseen_order,
        extra=extra,
        panel=panel,
    )
    results = _chunk_results(work, chunk, bounds, models, n_jobs, helpers)
    parts = list(logs.track(results, total=len(bounds), desc="features", unit="chunk"))
    if not parts:
        raise InputError("the input has no rows")
    # Dataset-level context needs every chunk of a dataset: predict once all are in.
    features = add_dataset_context(pd.concat(parts, ignore_index=True))
    # a helper was given a spare core (werest.forked.helper_count): the prediction takes it too
    return predict_features(features, models, threads=n_jobs + helpers if n_jobs == 1 else n_jobs)


def _chunk_results(work, chunk, bounds: range, models: Models, n_jobs: int, helpers: int):
    """``work(chunk(start))`` for each chunk, in order: here, shared with ``helpers`` forked
    processes (this one reads the model's payload meanwhile), or in ``n_jobs`` workers."""
    if n_jobs == 1 and helpers and len(bounds) >= 2:
        from werest.forked import shared_map

        def payloads() -> None:
            for _, model in models:
                model.estimator  # noqa: B018

        return shared_map(lambda start: work(chunk(start)), bounds, helpers=helpers, first=payloads)
    if n_jobs == 1 or len(bounds) < 2:
        return (work(chunk(start)) for start in bounds)
    from joblib import Parallel, delayed

    return Parallel(n_jobs=n_jobs, return_as="generator")(
        delayed(work)(chunk(start)) for start in bounds
    )


def _panel(table, proxy, ranking, unseen_order, panel_size: int | None) -> Panel | None:
    """The systems each target is compared with (:func:`estimate_utterances`'s)."""
    if panel_size is None:
        return None
    order = (ranking or Ranking.from_order([])).order(set(table["system"]), unseen_order)
    if proxy is not None:
        order = [proxy, *(name for name in order if name != proxy)]
    return Panel(tuple(order), panel_size)


def _chunks(table: pd.DataFrame, panel: Panel | None, chunk_utterances: int):
    """The table in chunks of whole utterances: (the table, ordered block by block; its
    utterance codes; the utterances a chunk holds; each chunk's first code). The result does
    not depend on the chunks."""
    codes = row_codes(table["dataset"], table["utt_id"])[0]
    n_utterances = int(codes.max()) + 1 if len(codes) else 0
    # a chunk holds at most PAIR_ROWS compared pairs, so memory is bounded by the chunk
    # whatever the number of systems (each of S systems compared with ≤ panel + 1 others)
    systems = len(table) / max(n_utterances, 1)
    compared = systems * min(systems, (panel.size + 1) if panel else systems)
    chunk_utterances = max(1, min(chunk_utterances, int(PAIR_ROWS // max(compared, 1))))
    # and the features bar moves: about PROGRESS_STEPS blocks, none under STEP_UTTERANCES;
    # the rows come out block by block, each block's in table order
    block = min(chunk_utterances, max(STEP_UTTERANCES, -(-n_utterances // PROGRESS_STEPS)))
    # a chunk is a block when a bar shows, else as many whole blocks as make STEP_ROWS rows
    # (a chunk has a fixed cost), within the memory bound; the chunks are of equal sizes
    n_blocks = max(1, math.ceil(n_utterances / block))
    wanted = 1 if logs.bars_shown() else math.ceil(STEP_ROWS / (systems * block))
    per_chunk = min(n_blocks, max(1, min(chunk_utterances // block, wanted)))
    per_chunk = math.ceil(n_blocks / math.ceil(n_blocks / per_chunk))
    if per_chunk > 1:  # block by block within a chunk, as chunks of one block would give them
        ordered = np.argsort(codes // block, kind="stable")
        table, codes = table.iloc[ordered], codes[ordered]
    size = per_chunk * block
    return table, codes, size, range(0, n_utterances, size)


def _estimate_chunk(
    chunk: pd.DataFrame,
    *,
    models: Models,
    targets: list[str],
    proxy: str | None,
    ranking: Ranking | None,
    unseen_order: list[str] | None,
    extra: list[str],
    panel: Panel | None = None,
) -> pd.DataFrame:
    """Proxies and features of one chunk of whole utterances (normalised text)."""
    proxies = choose_proxies(
        chunk,
        ranking,
        targets=_present(chunk, targets),
        proxy=proxy,
        unseen_order=unseen_order,
        absent_proxy_ok=True,  # the whole input has it (checked): not this chunk's datasets
    )
    return build_features(
        chunk,
        proxies,
        normaliser=NO_NORMALISATION,
        input_features=extra,
        context=False,
        panel=panel,
    )


def _present(chunk: pd.DataFrame, targets: list[str]) -> list[str]:
    present = set(chunk["system"].unique())
    return [t for t in targets if t in present]


def _extra_features(models: Models, table: pd.DataFrame) -> list[str]:
    """Model features that are not computed from text: they (or, for ``*_vs_proxy``, the
    columns they derive from) must come with the input (:mod:`werest.features.inputs`)."""
    return require_inputs(models.feature_names, table, "werest estimate")


def predict_features(
    features: pd.DataFrame, models: Models, *, threads: int | None = None
) -> pd.DataFrame:
    """``predicted_<target>`` columns for a feature table; rows with a non-finite feature get
    status ``missing feature value``.

    ``threads``: the OpenMP threads a gradient-boosted model predicts with (the run's
    ``n_jobs``; None or -1: every core, scikit-learn's default). Each of its trees is one
    short parallel region, so on a busy machine more threads than the run was given wait on
    each other: one thread predicted 44,000 rows in 0.3 s, two in 0.7-2 s (load 3 on 2
    cores), with the same numbers (each row's trees are summed in one order)."""
    from threadpoolctl import threadpool_limits

    # a deferred payload (model.files.DeferredModel) is read before the limit is set: it
    # applies to the OpenMP runtimes loaded by then, scikit-learn's among them
    for _, model in models:
        model.estimator  # noqa: B018
    limit = None if threads is None or threads < 0 else threads
    with logs.stage("predict"), threadpool_limits(limits=limit, user_api="openmp"):
        return _predict_features(features, models)


def _predict_features(features: pd.DataFrame, models: Models) -> pd.DataFrame:
    names = models.feature_names
    usable = (features["status"] == STATUS_OK).to_numpy()
    values = features[names].astype(float)
    finite = np.isfinite(values.fillna(0).to_numpy()).all(axis=1)
    for target, model in models:
        column = np.full(len(features), np.nan)
        rows = usable & finite
        if rows.any():
            column[rows] = model.predict(features.loc[rows]).to_numpy()
        features[f"predicted_{target}"] = column
    features.loc[usable & ~finite, "status"] = STATUS_NO_FEATURE
    return features


def summarise(
    utterances: pd.DataFrame,
    table: pd.DataFrame,
    *,
    normaliser: Normaliser,
    n_resamples: int = 1000,
    seed: int = 0,
    calibration: dict | None = None,
    scored: pd.DataFrame | None = None,
    truth: pd.DataFrame | None = None,
    units: dict[str, str] | None = None,
) -> list[dict]:
    """One record per dataset and system: the corpus estimate with its CI (and true WER).

    ``ci_low``/``ci_high`` are the bootstrap CI (sampling noise only). With a model's
    ``calibration`` (:mod:`werest.model.intervals`), ``interval_low``/``interval_high`` add the
    model's own error on new domains: the interval to read. Each group's utterances are
    taken in a canonical order (:func:`utterance_order`), so the sums and the bootstrap do
    not depend on row order or on how the input was partitioned. A partitioned run
    (:mod:`werest.partition.estimate`) passes ``table=None`` with ``truth``
    (:func:`werest.estimation.corpus.truth_from_sums`) and ``units`` accumulated over its
    partitions.
    """
    if table is not None:  # else a partitioned run's accumulated truth (None: no reference)
        truth = true_wer(table, utterances, normaliser, scored)
    if units is None:
        units = dataset_units(scoring_units(table, normaliser), table["dataset"])
    groups = utterances.groupby(["dataset", "system"], sort=True)
    cell = partial(
        _cell_record, units=units, n_resamples=n_resamples, seed=seed, calibration=calibration
    )
    with shared_draws():  # every system of a dataset resamples it with the same draws
        records = [
            cell(dataset, system, group)
            for (dataset, system), group in logs.track(groups, desc="bootstrap", unit="cell")
        ]
    if truth is not None:
        for record in records:
            key = (record["dataset"], record["system"])
            if key in truth.index:
                record["wer"] = float(truth.loc[key, "wer"])
                record["n_labelled"] = int(truth.loc[key, "n"])
    return records


def _cell_record(dataset, system, group, *, units, n_resamples, seed, calibration) -> dict:
    """:func:`summarise`'s record of one dataset and system."""
    done = group[group["status"] == STATUS_OK]
    done = done.iloc[np.argsort(utterance_order(done), kind="stable")]
    sample = estimated_sample(done)
    record = {
        "dataset": dataset,
        "system": system,
        "proxy": done["proxy"].mode().iat[0] if len(done) else None,
        "proxies": {str(k): int(v) for k, v in done["proxy"].value_counts().items() if v},
        "unit": units.get(dataset, "word"),
        "estimated_wer": sample.rate() if len(done) else None,
        "ci_low": None,
        "ci_high": None,
        "n_utterances": len(group),
        "n_estimated": len(done),
        "n_estimated_words": float(sample.denominator.sum()),
        "method": "zero_label",  # ppi where labels= made it prediction-powered
    }
    if len(done):
        low, high = bootstrap_ci(
            sample.numerator, sample.denominator, n_resamples=n_resamples, seed=seed
        )
        record["ci_low"], record["ci_high"] = low, high
    if calibration and record["estimated_wer"] is not None:
        interval = calibrated_interval(
            [record["estimated_wer"]], calibration, [record["ci_low"]], [record["ci_high"]]
        )
        record["interval_low"], record["interval_high"] = (float(v[0]) for v in interval)
        record["interval_level"] = calibration["level"]
    if "predicted_cer" in done:
        record["estimated_cer"] = (
            estimated_sample(done, "predicted_cer").rate() if len(done) else None
        )
    return record


#: the columns of a zero-label ``pairs.csv`` (a ``labels=`` run writes the labelled ones)
PAIR_COLUMNS = ["dataset", "system_a", "system_b", "difference", "low", "high", "verdict"]


def zero_label_pairs(records: list[dict], calibration: dict | None) -> pd.DataFrame:
    """WER_A − WER_B for every pair of estimated systems of each dataset (A before B in the
    estimated order), with the model's zero-label interval of differences
    (:func:`werest.model.intervals.pair_interval`, calibrated leave one domain out on
    differences) and its verdict: "A better" or "B better" only where the interval excludes
    0. ``true_difference`` where the records hold the true WER. ``method`` = zero_label."""
    from werest.estimation.ppi import verdict

    estimated = [r for r in records if r.get("estimated_wer") is not None]
    rows = []
    for dataset in sorted({r["dataset"] for r in estimated}):
        mine = sorted(
            (r for r in estimated if r["dataset"] == dataset),
            key=lambda r: (r["estimated_wer"], r["system"]),
        )
        for i, a in enumerate(mine):
            for b in mine[i + 1 :]:
                delta = a["estimated_wer"] - b["estimated_wer"]
                low, high = pair_interval(
                    delta, a["estimated_wer"], b["estimated_wer"], calibration
                )
                row = {
                    "dataset": dataset,
                    "system_a": a["system"],
                    "system_b": b["system"],
                    "difference": delta,
                    "low": float(low),
                    "high": float(high),
                    "verdict": verdict(low, high) if np.isfinite(low) else "no calibration",
                    "method": "zero_label",
                }
                if "wer" in a and "wer" in b:
                    row["true_difference"] = a["wer"] - b["wer"]
                rows.append(row)
    columns = [*PAIR_COLUMNS, "method"]
    return pd.DataFrame(
        rows,
        columns=columns + (["true_difference"] if rows and "true_difference" in rows[0] else []),
    )


def check_normaliser(
    models: Models, requested: Normaliser | None, table: pd.DataFrame
) -> Normaliser:
    """The normaliser of this run: the models' own, which ``requested`` (None: unset) may only
    restate.

    A model learned what agreement rates mean under its own normaliser (``whisper_english``
    counts "twenty five" and "25" as one word, ``none`` does not), so another normaliser would
    give features it never saw. ``auto`` and ``whisper_english`` are the same on a table with
    no non-English row, and are accepted for each other there.

    Raises
    ------
    ConfigError : ``requested`` differs from a model's normaliser on this table.
    """
    if requested is None:
        return models.normaliser
    for _, model in models:
        trained = model.normaliser
        if requested.name == trained:
            continue
        english_only = not _non_english(table)
        if english_only and {requested.name, trained} == {"auto", "whisper_english"}:
            continue
        raise ConfigError(
            f"normaliser={requested} differs from the model's ({trained}): its features would "
            f"not mean what the model learned; leave normaliser unset (the model's) or retrain "
            f"with normaliser={requested}"
        )
    return models.normaliser


def _non_english(table: pd.DataFrame) -> list[str]:
    from werest.text import language_code

    if "language" not in table.columns:
        return []
    codes = {language_code(value) for value in table["language"].dropna().unique()}
    return sorted(code for code in codes if code not in (None, "en"))


def input_features(models: Models) -> tuple[str, ...]:
    """The input's numeric evidence columns, checked as numbers when present: those the
    models need (e.g. ``similarity``, ``wl_mean_logprob``), and every other column ``werest
    embed`` writes (text such as ``similarity=high`` is a user's mistake whichever model
    runs)."""
    from werest.features.settings import LIKELIHOOD_FEATURES

    needed = input_columns(models.feature_names)
    return tuple(dict.fromkeys([*needed, "similarity", "audio_duration", *LIKELIHOOD_FEATURES]))


def nothing_estimated(utterances: pd.DataFrame, path) -> InputError:
    """The one-line error when no target row could be estimated, with the statuses' counts."""
    counts = utterances["status"].value_counts()
    summary = ", ".join(f"{status}: {count}" for status, count in counts.items())
    if set(counts.index) == {STATUS_NO_PROXY}:
        reason = "no target utterance has a proxy hypothesis (the other systems did not "
        reason += "transcribe these utterances)"
    else:
        reason = "no target utterance could be estimated"
    return InputError(f"{reason}: nothing to estimate ({summary})", path=path)


def sample_and_order(
    table: pd.DataFrame,
    models: Models,
    *,
    ranking: str | Path | None,
    system_order: list[str] | None,
    seed: int,
) -> tuple[pd.DataFrame, Ranking]:
    """The guards' sample of pairs of ``table`` (:func:`werest.estimation.guards.
    sample_pairs`) and the proxy order chosen from it (:func:`werest.estimation.estimate.
    choose_ranking`; ``ranking=references`` reads the table's references)."""
    pairs = sample_pairs(table, normaliser=models.normaliser, seed=seed)
    order = choose_ranking(models, table, ranking=ranking, system_order=system_order, pairs=pairs)
    return pairs, order
