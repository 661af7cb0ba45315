"""``werest leaderboard``: rank ASR systems by label-free WER, with CIs, paired tests, RTFx,
descriptive statistics and a fairness audit.

    werest leaderboard input=PATH output_dir=DIR [datasets=[..]] [model_path=M]

Every system of the input is a target. Each system's proxy is chosen as in
``werest estimate`` (the model's saved ranking; all systems ordered label-free by their
agreement when the input holds systems the ranking never saw), the model predicts each
utterance's WER, and the corpus estimate per dataset is Σ(pred·n)/Σn (n: proxy words)
(:func:`werest.estimation.estimate.summarise`).

The leaderboard ranks systems by the **macro average** of their per-dataset estimates (every
dataset weighs the same; a system is averaged over the datasets it has, and the ``datasets``
column says how many). The 95 % CI of the macro average resamples each dataset's utterances
independently (:func:`werest.resampling.macro_bootstrap`). For each pair of neighbours in the
ranking (A above B), a paired bootstrap resamples the utterances both transcribed, the same
draw for both systems, and reports ``p_value`` = the share of resamples where A's estimate is
not lower than B's (one-sided; small = A reliably better) and Cohen's d of their utterance WERs
(pooled SD; positive = A's utterance WERs lower). With references, the true macro WER and the
same test on true WER stand beside the estimates, and Spearman's ρ / Kendall's τ compare the
estimated with the true ranking. RTFx (Σ audio s / Σ processing s) and latency mean/p95 per
utterance come from the ``duration`` and ``processing_seconds`` columns ``werest transcribe``
writes. With demographic columns (``fairness.categories``), :mod:`werest.evaluation.fairness`
audits each
system from true and from estimated WER, side by side.

RTFx, latency p50/p95/mean, the share of utterances faster than real time and throughput come
from ``processing_seconds``, or from the round-trip ``latency_ms`` of imported results
(mu-bench). FAAS label-free and true per system is the mean over its audited datasets.

Every table is computed from one compact row per transcript row (:func:`utterance_rows`) by
:func:`assemble`, which first puts the rows in a canonical order (dataset, system, utterance
hash): the tables do not depend on the input's row order, and a partitioned run
(:mod:`werest.partition.leaderboard`), which builds the same rows partition by partition,
gives the same tables.

Outputs (atomic): ``leaderboard.{md,csv,png,html}`` (the page: :mod:`werest.report.webpage`),
``datasets.csv``, ``pairs.csv``,
``descriptive.csv``, ``fairness_{summary,categories,groups,comparison}.csv`` (when audited),
``lid_{accuracy,confusion,thresholds,confidence}.csv`` (when the table has ``language`` and
``detected_language``: :mod:`werest.text.lid`),
``config.yaml``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from werest import logs
from werest.columns import KEY
from werest.errors import InputError, unknown_name
from werest.estimation.corpus import rate_sample
from werest.estimation.estimate import CHUNK_UTTERANCES, estimate_utterances
from werest.estimation.guards import warnings_from_counts
from werest.evaluation.fairness import FairnessSettings
from werest.features.settings import relative_to_proxy
from werest.model.files import Models
from werest.model.intervals import calibrated_interval
from werest.ranking.board import Leaderboard
from werest.ranking.fairness_audits import (
    SkippedCategories,
    add_faas,
    audit_rows,
    fairness_audits,
)
from werest.ranking.pairs import add_pair_intervals, neighbour_tests
from werest.ranking.rows import (
    ORDER,
    ROW_ORDER,
    UTT,
    canonical,
    estimated,
    labelled,
    row_categories,
)
from werest.resampling import macro_bootstrap
from werest.stats import Bootstrap, describe, latency, rank_agreement
from werest.text.lid import CONFIDENCE, DETECTED, TRUE, has_lid, lid_report
from werest.text.normalise import Normaliser
from werest.text.scoring import utterance_order

if TYPE_CHECKING:
    from werest.features.proxy import Ranking

# the per-row frame (werest.ranking.rows), the neighbour tests (werest.ranking.pairs) and the
# fairness audits (werest.ranking.fairness_audits) are importable from here too, as before
__all__ = [
    "ESTIMATE_COLUMNS",
    "KEY_CATEGORIES",
    "LOG_FLOOR",
    "ORDER",
    "ROW_ORDER",
    "TIMING_COLUMNS",
    "TRUTH_COLUMNS",
    "UTT",
    "Leaderboard",
    "RowSettings",
    "SkippedCategories",
    "add_faas",
    "add_intervals",
    "add_pair_intervals",
    "add_timings",
    "assemble",
    "audit_rows",
    "canonical",
    "carried_columns",
    "check_selection",
    "common_ground",
    "descriptive_table",
    "estimated",
    "fairness_audits",
    "filled_macro",
    "keep_datasets",
    "labelled",
    "neighbour_tests",
    "rank_systems",
    "rate_sample",
    "require_two_systems",
    "row_categories",
    "select_datasets",
    "timed",
    "true_scores",
    "utterance_rows",
]

log = logging.getLogger(__name__)


#: What each row keeps of its estimate and of its true score.
ESTIMATE_COLUMNS = ["status", "proxy", "est_ref_words", "proxy_words"]
TRUTH_COLUMNS = ["word_errors", "ref_words", "wer", "cer"]
#: Columns kept as categories (one Python string per row would not fit at 10M rows).
KEY_CATEGORIES = ("dataset", "system", "status", "proxy")


# --------------------------------------------------------------------------- inputs


def select_datasets(table: pd.DataFrame, keep, exclude) -> pd.DataFrame:
    """The table restricted to ``keep`` (null: all) minus ``exclude``; refuses unknown names."""
    check_selection(table["dataset"].unique(), keep, exclude)
    table = keep_datasets(table, keep, exclude)
    require_two_systems(table["system"].unique())
    return table


def _names(value) -> list[str]:
    return [value] if isinstance(value, str) else list(value or [])


def check_selection(present, keep, exclude) -> None:
    """A ConfigError, with the closest names, when ``keep`` (``datasets=``) or ``exclude``
    (``exclude_datasets=``) names a dataset that is not ``present``: a misspelt exclusion would
    otherwise keep the dataset it meant to drop, silently."""
    present = set(present)
    for what, names in (("dataset", keep), ("exclude_datasets: dataset", exclude)):
        unknown = [name for name in _names(names) if name not in present]
        if unknown:
            raise unknown_name(what, unknown[0], present, "datasets")


def keep_datasets(table: pd.DataFrame, keep, exclude) -> pd.DataFrame:
    """The rows of the datasets in ``keep`` (null: all) and not in ``exclude``: applied to
    the whole table, or to each chunk of a partitioned run as it is read."""
    wanted, dropped = _names(keep), _names(exclude)
    if wanted:
        table = table[table["dataset"].isin(wanted)]
    return table[~table["dataset"].isin(dropped)]


def require_two_systems(systems) -> None:
    if len(set(systems)) < 2:
        raise InputError("a leaderboard needs at least two systems on the selected datasets")


def true_scores(
    table: pd.DataFrame, normaliser: Normaliser, n_jobs: int = 1
) -> pd.DataFrame | None:
    """Per-utterance true errors where the input has references, else None."""
    if "reference" not in table.columns or table["reference"].isna().all():
        return None
    from werest.text.scoring import score_utterances

    scored = score_utterances(table, normaliser, n_jobs=n_jobs)
    return scored[scored["ref_words"] > 0]


def carried_columns(table: pd.DataFrame, fairness: FairnessSettings | None) -> tuple[list, list]:
    """(labels, numbers): the table's columns the tables need besides the estimates and the
    truth: timings (RTFx, latency), language identification and, with an audit, its
    categories, speaker and covariates. Labels are kept as categories."""
    labels = [TRUE, DETECTED]
    numbers = ["duration", "processing_seconds", CONFIDENCE]
    if fairness is not None:
        labels += [*fairness.categories, *([fairness.speaker] if fairness.speaker else [])]
        numbers += list(fairness.covariates)
    present = [c for c in dict.fromkeys(labels) if c in table.columns and c not in KEY]
    numbers = [c for c in dict.fromkeys(numbers) if c in table.columns]
    return present, [c for c in numbers if c not in present and c not in KEY]


@dataclass(frozen=True)
class RowSettings:
    """What :func:`utterance_rows` needs besides the table: the ``models``, the ``systems``
    estimated, the proxy order (``ranking``: a :class:`~werest.features.proxy.Ranking` or the
    systems' order), the fairness audit's settings (None: no audit, no demographic columns)
    and the estimate's chunking and workers."""

    models: Models
    systems: list[str]
    ranking: Ranking | list[str] | None
    fairness: FairnessSettings | None
    chunk_utterances: int = CHUNK_UTTERANCES
    n_jobs: int = 1


def utterance_rows(table: pd.DataFrame, settings: RowSettings) -> pd.DataFrame:
    """One compact row per row of ``table``: everything the leaderboard's tables need of it.

    The row's estimate (:func:`werest.estimation.estimate.estimate_utterances`: status, proxy, n̂,
    the
    proxy's length, ``predicted_*`` and the columns that say which side of a disagreement is
    wrong), its true counts and WER/CER where it has a reference (:func:`true_scores`), the
    :func:`carried_columns`, and a 64-bit hash of its ``utt_id`` (``_order``) instead of the
    id. Strings are categories. The in-memory run computes it on the whole table, a
    partitioned run on each partition (:mod:`werest.partition.leaderboard`), and both hand
    it to :func:`assemble`: one code path, rows that do not depend on the partitioning.
    """
    models, n_jobs = settings.models, settings.n_jobs
    utterances = estimate_utterances(
        table,
        models,
        settings.systems,
        ranking=settings.ranking,
        chunk_utterances=settings.chunk_utterances,
        n_jobs=n_jobs,
    )
    kept = [
        *ESTIMATE_COLUMNS,
        *(c for c in utterances.columns if c.startswith("predicted_") or relative_to_proxy(c)),
    ]
    source = timed(table)
    labels, numbers = carried_columns(source, settings.fairness)
    rows = source[[*KEY, *labels, *numbers]]
    rows = rows.assign(**{c: pd.to_numeric(rows[c], errors="coerce") for c in numbers})
    rows = rows.merge(utterances[[*KEY, *kept]], on=KEY, how="left")
    scored = true_scores(table, models.normaliser, n_jobs)
    if scored is not None:
        rows = rows.merge(scored[[*KEY, *TRUTH_COLUMNS]], on=KEY, how="left")
    rows[ORDER] = utterance_order(rows)
    # one string type for every category, whatever the input's (a numeric speaker id, an
    # all-missing column): partitions' categories can only be joined when their types agree
    strings = dict.fromkeys([*KEY_CATEGORIES, *labels], "string")
    rows = rows.drop(columns="utt_id").astype(strings)
    return rows.astype(dict.fromkeys(strings, "category"))


# --------------------------------------------------------------------------- ranking


def rank_systems(
    done: pd.DataFrame, scored: pd.DataFrame | None, boot: Bootstrap
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per-system leaderboard, per-dataset table), best estimated macro WER first.

    Parameters
    ----------
    done : estimated utterances with status ok (``predicted_wer``, ``proxy_words``).
    scored : true per-utterance errors (or None).
    """
    per_dataset = _per_dataset(done, scored)
    rows = []
    for system, part in logs.track(per_dataset.groupby("system"), desc="bootstrap", unit="system"):
        est = [rate_sample(g, "est") for _, g in done[done["system"] == system].groupby("dataset")]
        low, high = macro_bootstrap(
            est, n_resamples=boot.n_resamples, seed=boot.seed, confidence=boot.confidence
        )
        row = {
            "system": system,
            "datasets": len(part),
            "utterances": int(part["n"].sum()),
            "est_wer": part["est_wer"].mean(),
            "est_ci_low": low,
            "est_ci_high": high,
        }
        if scored is not None:
            row |= _true_macro(scored[scored["system"] == system], boot)
        rows.append(row)
    board = pd.DataFrame(rows)
    board.insert(0, "rank", 0)
    return common_ground(board, per_dataset), per_dataset


#: The floor added to a WER before its logarithm in :func:`filled_macro` (0.5 points).
LOG_FLOOR = 0.005


def common_ground(board: pd.DataFrame, per_dataset: pd.DataFrame) -> pd.DataFrame:
    """Rank on common ground. ``est_wer_all`` (and ``true_wer_all``) is each system's macro
    WER over *every* dataset of the table, each cell it lacks (a dataset it was not run on)
    filled by :func:`filled_macro`; the ranking (``rank``, ``true_rank``) follows it, so a
    system run only on easy data is not put ahead of systems run on all of it. Where every
    system has every dataset it equals ``est_wer`` (the macro over its own datasets).
    ``filled_cells`` counts the cells filled."""
    board = board.copy()
    for column in ("est_wer", "true_wer"):
        if column in board and column in per_dataset:
            filled = filled_macro(per_dataset, column)
            board[f"{column}_all"] = board["system"].map(filled["macro"])
            if column == "est_wer":
                board["filled_cells"] = board["system"].map(filled["filled"]).astype(int)
    if (board["filled_cells"] > 0).any():
        log.warning(
            "systems cover different datasets: ranked by their macro WER over every dataset, "
            "a missing cell filled by a multiplicative fit (dataset × system) of the cells that "
            "exist (see the datasets and filled_cells columns)"
        )
    board = board.sort_values(["est_wer_all", "system"]).reset_index(drop=True)
    board["rank"] = np.arange(1, len(board) + 1)
    if "true_wer_all" in board:
        board["true_rank"] = board["true_wer_all"].rank(method="min").astype("Int64")
    return board


def filled_macro(per_dataset: pd.DataFrame, column: str) -> pd.DataFrame:
    """Per system: ``macro``, the mean over every dataset of its ``column`` WER, a cell it
    lacks taken from log(WER + :data:`LOG_FLOOR`) = dataset effect + system effect, fitted by
    least squares on the cells that exist (a system twice as good on one dataset is twice as
    good on another), and ``filled``, the number of cells so taken. Systems not linked to the
    others through shared datasets keep the mean over their own datasets, with none filled
    (nothing compares them)."""
    cells = per_dataset[["dataset", "system", column]].dropna()
    datasets, systems = sorted(cells["dataset"].unique()), sorted(cells["system"].unique())
    d_index = cells["dataset"].map({d: i for i, d in enumerate(datasets)}).to_numpy()
    s_index = cells["system"].map({s: i for i, s in enumerate(systems)}).to_numpy()
    design = np.zeros((len(cells), len(datasets) + len(systems)))
    design[np.arange(len(cells)), d_index] = 1.0
    design[np.arange(len(cells)), len(datasets) + s_index] = 1.0
    target = np.log(cells[column].to_numpy(dtype=float) + LOG_FLOOR)
    coef = np.linalg.lstsq(design, target, rcond=None)[0]
    observed = cells.pivot_table(index="system", columns="dataset", values=column, aggfunc="first")
    observed = observed.reindex(index=systems, columns=datasets)
    fitted = np.exp(coef[: len(datasets)][None, :] + coef[len(datasets) :][:, None]) - LOG_FLOOR
    filled = observed.where(observed.notna(), np.clip(fitted, 0, None))
    linked = pd.Series(_linked(d_index, s_index, len(datasets), len(systems)), index=systems)
    # the datasets of the linked systems: a dataset only an unlinked system has is not theirs
    common = observed.loc[linked.to_numpy()].notna().any(axis=0).to_numpy()
    return pd.DataFrame(
        {
            "macro": filled.loc[:, common].mean(axis=1).where(linked, observed.mean(axis=1)),
            "filled": observed.loc[:, common].isna().sum(axis=1).where(linked, 0),
        }
    )


def _linked(d_index: np.ndarray, s_index: np.ndarray, n_datasets: int, n_systems: int):
    """Whether each system is connected, through shared datasets, to the largest group of
    systems (a fit compares only connected systems): connected components of the graph of
    datasets and systems whose edges are the cells (``scipy.sparse.csgraph``)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    size = n_datasets + n_systems
    edges = coo_matrix((np.ones(len(d_index)), (d_index, n_datasets + s_index)), shape=(size, size))
    _, component = connected_components(edges, directed=False)
    systems = component[n_datasets:]
    return systems == np.bincount(systems).argmax()


def _per_dataset(done: pd.DataFrame, scored: pd.DataFrame | None) -> pd.DataFrame:
    rows = []
    for (dataset, system), g in done.groupby(["dataset", "system"], sort=True):
        rows.append(
            {
                "dataset": dataset,
                "system": system,
                "n": len(g),
                "est_wer": rate_sample(g, "est").rate(),
            }
        )
    frame = pd.DataFrame(rows)
    if scored is not None:
        truth = (
            scored.groupby(["dataset", "system"])
            .apply(lambda g: rate_sample(g, "true").rate(), include_groups=False)
            .rename("true_wer")
        )
        frame = frame.join(truth, on=["dataset", "system"])
    return frame


def _true_macro(rows: pd.DataFrame, boot: Bootstrap) -> dict[str, float]:
    samples = [rate_sample(g, "true") for _, g in rows.groupby("dataset")]
    if not samples:
        return {"true_wer": float("nan"), "true_ci_low": float("nan"), "true_ci_high": float("nan")}
    low, high = macro_bootstrap(
        samples, n_resamples=boot.n_resamples, seed=boot.seed, confidence=boot.confidence
    )
    return {
        "true_wer": float(np.mean([s.rate() for s in samples])),
        "true_ci_low": low,
        "true_ci_high": high,
    }


# --------------------------------------------------------------------------- descriptive


def descriptive_table(
    done: pd.DataFrame, scored: pd.DataFrame | None, table: pd.DataFrame, order: list[str]
) -> pd.DataFrame:
    """Per system (all its datasets pooled): utterance WER/CER statistics and timings
    (``table``: every row, with its timings, e.g. :func:`utterance_rows`)."""
    rows = []
    for system in order:
        measures = {"est_wer": done.loc[done["system"] == system, "predicted_wer"]}
        if "predicted_cer" in done:
            measures["est_cer"] = done.loc[done["system"] == system, "predicted_cer"]
        if scored is not None:
            mine = scored[scored["system"] == system]
            measures |= {"true_wer": mine["wer"], "true_cer": mine["cer"]}
        for measure, values in measures.items():
            rows.append({"system": system, "measure": measure, **describe(values)})
        timing = latency(timed(table[table["system"] == system]))
        if timing["n_timed"]:
            rows.append(
                {
                    "system": system,
                    "measure": "latency_s",
                    **describe(timed(table[table["system"] == system])["processing_seconds"]),
                    "p50": timing["latency_p50"],
                    "p95": timing["latency_p95"],
                    "rtfx": timing["rtfx"],
                    "rtf_le_1": timing["rtf_le_1"],
                    "throughput": timing["throughput"],
                }
            )
    return pd.DataFrame(rows)


TIMING_COLUMNS = ["rtfx", "latency_mean", "latency_p50", "latency_p95", "rtf_le_1", "throughput"]


def timed(table: pd.DataFrame) -> pd.DataFrame:
    """The table with ``processing_seconds`` from imported round-trip ``latency_ms`` (mu-bench)
    where ``werest transcribe``'s own timings are absent."""
    if "latency_ms" not in table.columns:
        return table
    from_latency = pd.to_numeric(table["latency_ms"], errors="coerce") / 1000.0
    if "processing_seconds" not in table.columns:
        return table.assign(processing_seconds=from_latency)
    return table.assign(processing_seconds=table["processing_seconds"].fillna(from_latency))


def add_timings(board: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """RTFx, latency and real-time columns where the table records transcription times."""
    table = timed(table)
    if not {"duration", "processing_seconds"} <= set(table.columns):
        return board
    timings = pd.DataFrame(
        [{"system": s, **latency(table[table["system"] == s])} for s in board["system"]]
    )
    return board.merge(timings[["system", *TIMING_COLUMNS]], on="system", how="left")


# --------------------------------------------------------------------------- the command


def add_intervals(
    board: pd.DataFrame, per_dataset: pd.DataFrame, calibration: dict | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``interval_low``/``interval_high``: the 95 % interval that includes the model's own
    error on new domains (:func:`werest.model.intervals.calibrated_interval`, as ``werest
    estimate`` gives it), per dataset, and per system the mean of its datasets' bounds (the
    model's error is shared by a system's datasets, so their bounds move together), never
    narrower than the sampling CI. Without a calibration (an old model): the sampling CI."""
    per_dataset, board = per_dataset.copy(), board.copy()
    if calibration:
        low, high = calibrated_interval(per_dataset["est_wer"].to_numpy(dtype=float), calibration)
        per_dataset["interval_low"], per_dataset["interval_high"] = low, high
        means = per_dataset.groupby("system")[["interval_low", "interval_high"]].mean()
        board["interval_low"] = np.fmin(
            board["system"].map(means["interval_low"]), board["est_ci_low"]
        )
        board["interval_high"] = np.fmax(
            board["system"].map(means["interval_high"]), board["est_ci_high"]
        )
    else:
        board["interval_low"], board["interval_high"] = board["est_ci_low"], board["est_ci_high"]
    return board, per_dataset


def assemble(
    rows: pd.DataFrame,
    counts: pd.DataFrame,
    pairs_sample: pd.DataFrame,
    *,
    boot: Bootstrap,
    fairness: FairnessSettings | None,
    calibration: dict | None = None,
) -> Leaderboard:
    """Every table of the leaderboard from :func:`utterance_rows` of the whole input (in any
    row order: they are put in the canonical order first), the guards' utterance counts
    (:func:`werest.estimation.guards.utterance_counts`) and their sample of pairs."""
    rows = canonical(rows)
    # the truth beside an estimate is measured on exactly the rows estimated
    done = estimated(rows)
    scored = labelled(done) if labelled(rows) is not None else None
    if done.empty:
        raise InputError("no utterance was transcribed by two systems: nothing to estimate")
    board, per_dataset = rank_systems(done, scored, boot)
    board, per_dataset = add_intervals(board, per_dataset, calibration)
    board = add_timings(board, rows)
    agreement = (
        rank_agreement(
            board.set_index("system")["est_wer_all"], board.set_index("system")["true_wer_all"]
        )
        if scored is not None
        else {}
    )
    pairs = add_pair_intervals(neighbour_tests(board, done, scored, boot), per_dataset, calibration)
    descriptive = descriptive_table(done, scored, rows, list(board["system"]))
    skipped: list[dict] = []  # fairness categories without a group of min_group_size
    audits = fairness_audits(done, scored, fairness, skipped) if fairness else {}
    board = add_faas(board, audits)
    lid = lid_report(rows) if has_lid(rows) else None
    warnings = [*warnings_from_counts(counts, rows, pairs_sample), *skipped]
    return Leaderboard(
        board, per_dataset, pairs, descriptive, agreement, audits, lid, rows, warnings
    )
