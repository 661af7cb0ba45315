"""Fairness audit: the ASR-FAIRBENCH score (Rai et al., Interspeech 2025) from true or
estimated WER.

Per demographic *category* (gender, age, accent, ...) with groups g:

1. a Poisson regression of each utterance's error count E_i with log link and offset log N_i
   (N_i = reference words): log E[E_i] = log N_i + β₀ + β_g(i) + θᵀx_i, with covariates x_i
   (``log(duration)`` where the table has durations);
2. the predicted WER of each group, standardised over the audited utterances:
   WER_g = Σ_i μ̂_i(g) / Σ_i N_i with μ̂_i(g) the fitted count of utterance i had it been in
   group g (without covariates this is exactly the group's corpus WER Σ E / Σ N);
3. raw score_g = 100·(1 − (WER_g − min WER)/(max WER − min WER)); **100 for every group when
   max = min** (no disparity: nothing to penalise);
4. category score = Σ_g p_g · raw score_g, p_g = the group's share of the audited utterances;
5. a test of the model with vs without the category; if p < α (0.05): adjusted score =
   category score · p/α, else the category score;
6. overall score = Σ_c w_c · adjusted_c / Σ_c w_c (weights from the config, default 1);
7. **FAAS = 10·log10(overall score / WER)** with WER the system's corpus WER *as a fraction*
   (Σ E / Σ N over the audited utterances). The leaderboard's formula is
   10·log10(Overall_Fairness_Score / WER); its published implementation divides by the mean of
   jiwer's per-utterance WERs, a fraction, so FAAS ≈ 20–30 for usual systems. werest uses the
   corpus WER (its convention everywhere); the unit is the same.

The estimator, and why
----------------------
The published model is a *mixed-effects* Poisson regression with a random intercept per
speaker, compared by a likelihood-ratio test (LRT). statsmodels has no maximum-likelihood
mixed Poisson model: ``PoissonBayesMixedGLM`` is fitted by variational Bayes and has no
likelihood, so no LRT. werest therefore uses the Poisson GLM (``statsmodels.api.GLM``, log
link, offset) for the point estimates, which is the same mean model and gives consistent
population-averaged group rates, and chooses the test by the data:

* **no speaker column** (every utterance its own speaker, e.g. dighr/Common Voice): the LRT
  of the nested GLMs, **scaled by the Pearson dispersion** φ̂ = max(1, X²/df) of the full
  model (the quasi-likelihood ratio test, McCullagh & Nelder §9.3). Utterance error counts
  are overdispersed (φ̂ ≈ 1.9–2.7 on dighr 190301); an unscaled Poisson LRT then treats the audit as
  several times more data than it is and turns small differences into p ≈ 0, which the
  penalty p/α turns into a score of ≈ 0. ``dispersion: none`` gives the plain LRT;
* **a speaker column**: the group effect is tested by a cluster-robust (sandwich, speakers as
  clusters) Wald χ² test: GEE with an independence working correlation, which is this GLM
  with cluster-robust covariance. Repeated utterances of a speaker are not independent, and a
  likelihood-ratio statistic of a model that ignores that is not χ²; the robust Wald test
  asks the same question (β_g = 0 for every group) with valid clustering.

Without references (the label-free audit), E_i is the **estimated error count**
predicted WER_i · n̂_i and N_i the estimated length n̂_i (:mod:`werest.estimation.estimate`). The
counts
are kept as *quasi-counts* (not rounded): the Poisson score equations and the
dispersion-scaled deviance only need E[E_i] = μ_i and Var ∝ μ_i, not integers, and rounding
would turn every short utterance's 0.4 predicted errors into 0 and bias the group rates down.

Groups and edge cases
---------------------
* rows without a value for the category are left out of that category's audit;
* groups with fewer than ``min_group_size`` utterances are pooled into one ``other (pooled)``
  group (``small_groups: pool``; the pool is dropped too if it is still below the minimum) or
  dropped (``small_groups: drop``);
* a category with one group left is reported (raw score 100, test not run) but *not* audited:
  it is left out of the overall score, since a single group says nothing about disparity;
* a category with values but no group left (none reaches ``min_group_size``, nor does their
  pool) is skipped: not among the audit's categories, named in its ``skipped`` with its
  largest group's size (:func:`skipped_message` says so; ``werest leaderboard`` warns);
* a group with zero errors has predicted WER 0 and raw score 100 (its GLM coefficient runs to
  −∞; the fit converges with a very negative coefficient and the rate is ~1e-10);
* when every utterance has zero errors, every WER is 0, scores are 100 and p = 1;
* FAAS is +inf at WER 0 and −inf at overall score 0 (kept, not clipped).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from werest.errors import InputError
from werest.evaluation.settings import FairnessSettings

log = logging.getLogger(__name__)

POOLED = "other (pooled)"
COUNT_COLUMNS = ("errors", "words")


@dataclass
class CategoryAudit:
    """One category's result: the group table and the category-level scores."""

    category: str
    groups: pd.DataFrame  # group, n, share, observed_wer, predicted_wer, raw_score
    category_score: float
    test: str
    statistic: float
    df: int
    p_value: float
    adjusted_score: float
    audited: bool
    note: str = ""


@dataclass
class FairnessAudit:
    """A system's audit: per category, the overall score, the corpus WER and FAAS."""

    categories: list[CategoryAudit]
    overall_score: float
    wer: float
    faas: float
    n_utterances: int
    #: categories with values but no group reaching ``min_group_size``: their largest group
    skipped: dict[str, int] = field(default_factory=dict)


# --------------------------------------------------------------------------- groups


def prepare_groups(values: pd.Series, min_size: int, policy: str = "pool") -> pd.Series:
    """Group labels with small groups pooled or dropped (NaN = not audited).

    Parameters
    ----------
    values : the category's raw values (NaN/blank = unknown).
    min_size : the least number of utterances a group keeps its own label with.
    policy : ``pool`` or ``drop``.
    """
    labels = values.astype("string").str.strip().replace("", pd.NA)
    counts = labels.value_counts()
    small = counts.index[counts < min_size]
    if len(small) == 0:
        return labels
    is_small = labels.isin(small)
    if policy == "pool" and counts[small].sum() >= min_size:
        return labels.mask(is_small, POOLED)
    return labels.mask(is_small, pd.NA)


def raw_scores(rates: pd.Series) -> pd.Series:
    """100·(1 − (WER_g − min)/(max − min)); 100 for every group when max = min (to 1e-9)."""
    low, high = rates.min(), rates.max()
    # equal up to floating-point noise of the fit (1e-9 relative): no disparity
    if not np.isfinite(high - low) or high - low <= 1e-9 * max(abs(high), 1e-12):
        return pd.Series(100.0, index=rates.index)
    return 100.0 * (1.0 - (rates - low) / (high - low))


def penalised(score: float, p_value: float, alpha: float = 0.05) -> float:
    """The category score times p/α when p < α (a significant disparity), else unchanged."""
    return score * p_value / alpha if p_value < alpha else score


def faas(overall_score: float, wer: float) -> float:
    """10·log10(overall score / WER), WER a fraction (±inf at the edges, NaN if undefined)."""
    if not (np.isfinite(overall_score) and np.isfinite(wer)):
        return float("nan")
    with np.errstate(divide="ignore"):
        return float(10 * np.log10(np.float64(overall_score) / np.float64(wer)))


# --------------------------------------------------------------------------- models


def _design(rows: pd.DataFrame, labels: pd.Series, covariates: list[str]):
    """Intercept + group dummies (reference = the largest group) + centred log covariates."""
    levels = list(labels.value_counts().index)
    dummies = pd.DataFrame(
        {f"g[{level}]": (labels == level).astype(float).to_numpy() for level in levels[1:]},
        index=rows.index,
    )
    base = pd.DataFrame({"const": np.ones(len(rows))}, index=rows.index)
    for name in covariates:
        logged = np.log(rows[name].astype(float))
        base[f"log_{name}"] = logged - logged.mean()
    return base, dummies, levels


def _fit(y: np.ndarray, x: pd.DataFrame, offset: np.ndarray, clusters=None):
    from statsmodels.genmod.families import Poisson
    from statsmodels.genmod.generalized_linear_model import GLM

    model = GLM(y, x, family=Poisson(), offset=offset)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # divergent coefficients of zero-error groups
        if clusters is None:
            return model.fit(maxiter=200)
        return model.fit(maxiter=200, cov_type="cluster", cov_kwds={"groups": clusters})


def _standardised_rates(fit, base, dummies, levels, words: np.ndarray) -> pd.Series:
    """WER_g = Σ_i exp(x_i(g)ᵀβ)·N_i / Σ_i N_i over all audited rows, for each group g."""
    rates = {}
    for level in levels:
        switched = dummies * 0.0
        if f"g[{level}]" in switched:
            switched[f"g[{level}]"] = 1.0
        linear = pd.concat([base, switched], axis=1).to_numpy() @ fit.params.to_numpy()
        rates[level] = float(np.sum(np.exp(linear) * words) / words.sum())
    return pd.Series(rates)


def _test(full, reduced, dummies, settings: FairnessSettings, clustered: bool):
    """(test name, statistic, df, p) for the group terms."""
    k = dummies.shape[1]
    if clustered:
        names = list(full.params.index)
        restriction = np.zeros((k, len(names)))
        for row, column in enumerate(dummies.columns):
            restriction[row, names.index(column)] = 1.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            wald = full.wald_test(restriction, scalar=True)
        return "Wald χ² (cluster-robust, speakers)", float(wald.statistic), k, float(wald.pvalue)
    ratio = max(0.0, 2.0 * (full.llf - reduced.llf))
    name = "LRT"
    if settings.dispersion == "pearson":
        phi = max(1.0, float(full.pearson_chi2 / full.df_resid)) if full.df_resid > 0 else 1.0
        ratio /= phi
        name = f"LRT / φ̂ (φ̂ = {phi:.2f})"
    return name, ratio, k, float(scipy_stats.chi2.sf(ratio, k))


# --------------------------------------------------------------------------- audits


def audit_category(
    rows: pd.DataFrame, category: str, settings: FairnessSettings
) -> CategoryAudit | None:
    """Audit one category on rows with ``errors``, ``words`` (> 0) and the category column.

    Returns None when no row has a value for the category.
    """
    labels = prepare_groups(rows[category], settings.min_group_size, settings.small_groups)
    keep = labels.notna().to_numpy() & (rows["words"].to_numpy() > 0)
    rows, labels = rows[keep], labels[keep]
    if rows.empty:
        return None
    words = rows["words"].to_numpy(dtype=float)
    errors = rows["errors"].to_numpy(dtype=float)
    counts = labels.value_counts()
    table = pd.DataFrame({"group": counts.index, "n": counts.to_numpy()})
    table["share"] = table["n"] / table["n"].sum()
    observed = rows.groupby(labels.to_numpy())[["errors", "words"]].sum()
    table["observed_wer"] = table["group"].map(observed["errors"] / observed["words"])
    if len(counts) < 2:
        return _single_group(category, table)
    covariates = _usable_covariates(rows, settings.covariates)
    base, dummies, levels = _design(rows, labels, covariates)
    clusters = _clusters(rows, settings.speaker)
    if errors.sum() <= 0:
        predicted = pd.Series(0.0, index=levels)
        test, statistic, df, p_value = "none (no errors)", 0.0, len(levels) - 1, 1.0
    elif settings.model == "glmm" and clusters is not None:
        predicted, (test, statistic, df, p_value) = _glmm_audit(
            errors, words, base, dummies, levels, clusters, settings.quadrature_nodes
        )
    else:
        offset = np.log(words)
        full = _fit(errors, pd.concat([base, dummies], axis=1), offset, clusters)
        reduced = _fit(errors, base, offset) if clusters is None else None
        predicted = _standardised_rates(full, base, dummies, levels, words)
        test, statistic, df, p_value = _test(full, reduced, dummies, settings, clusters is not None)
    table["predicted_wer"] = table["group"].map(predicted)
    table["raw_score"] = table["group"].map(raw_scores(predicted))
    score = float(np.sum(table["share"] * table["raw_score"]))
    notes = [f"covariates: {', '.join(covariates)}"] if covariates else []
    if settings.model == "glmm" and clusters is None:
        notes.append("no speaker values: GLM instead of the GLMM")
    note = "; ".join(notes)
    return CategoryAudit(
        category,
        table,
        score,
        test,
        statistic,
        df,
        p_value,
        penalised(score, p_value, settings.alpha),
        True,
        note,
    )


def _glmm_audit(errors, words, base, dummies, levels, clusters, n_nodes: int):
    """Group rates and the LRT of the group terms from the Poisson random-intercept GLMM.

    The rates are marginal (population-averaged) means: the conditional rate at u = 0 times
    E[eᵘ] = exp(σ²/2), so they are on the scale of the observed WER (the factor is common to
    every group and leaves the raw scores unchanged).
    """
    from werest.evaluation.glmm import fit_poisson_glmm

    offset = np.log(words)
    full = fit_poisson_glmm(
        errors, pd.concat([base, dummies], axis=1), offset, clusters, n_nodes=n_nodes
    )
    reduced = fit_poisson_glmm(errors, base, offset, clusters, n_nodes=n_nodes)
    rates = _standardised_rates(full, base, dummies, levels, words) * np.exp(full.sigma**2 / 2)
    k = dummies.shape[1]
    ratio = max(0.0, 2.0 * (full.llf - reduced.llf))
    name = f"LRT (Poisson GLMM, speaker random intercept, σ̂ = {full.sigma:.2f})"
    return rates, (name, ratio, k, float(scipy_stats.chi2.sf(ratio, k)))


def _single_group(category: str, table: pd.DataFrame) -> CategoryAudit:
    table["predicted_wer"] = table["observed_wer"]
    table["raw_score"] = 100.0
    return CategoryAudit(
        category,
        table,
        100.0,
        "none",
        float("nan"),
        0,
        float("nan"),
        100.0,
        False,
        "one group only: not audited, left out of the overall score",
    )


def _usable_covariates(rows: pd.DataFrame, wanted: Sequence[str]) -> list[str]:
    usable = []
    for name in wanted:
        if name in rows.columns:
            values = pd.to_numeric(rows[name], errors="coerce")
            if values.notna().all() and (values > 0).all():
                if values.nunique() > 1:  # a constant is the intercept already
                    usable.append(name)
            elif values.notna().any():
                log.warning("covariate %s is missing or ≤ 0 for some rows: not used", name)
    return usable


def _clusters(rows: pd.DataFrame, speaker: str | None):
    if not speaker or speaker not in rows.columns or rows[speaker].isna().any():
        return None
    codes, uniques = pd.factorize(rows[speaker])
    return codes if 1 < len(uniques) < len(rows) else None


def audit(rows: pd.DataFrame, settings: FairnessSettings) -> FairnessAudit:
    """The full audit of one system's utterances.

    Parameters
    ----------
    rows : one row per utterance with ``errors`` (count or quasi-count), ``words`` (reference
        or estimated length), the category columns and optional covariates / speaker.
    settings : categories, weights, group handling and the test.

    Returns
    -------
    The per-category audits, overall score, corpus WER (fraction) and FAAS.
    """
    missing = [c for c in COUNT_COLUMNS if c not in rows.columns]
    if missing:
        raise InputError(f"the audit needs columns {', '.join(missing)}", column=missing[0])
    present = [c for c in settings.categories if c in rows.columns]
    if not present:
        raise InputError(
            f"no demographic column to audit (looked for {', '.join(settings.categories)})"
        )
    results, skipped = [], {}
    for category in present:
        result = audit_category(rows, category, settings)
        if result is not None:
            results.append(result)
        elif (largest := _largest_group(rows, category)) is not None:
            skipped[category] = largest
    audited = [r for r in results if r.audited]
    weights = np.array([float(settings.weights.get(r.category, 1.0)) for r in audited])
    overall = (
        float(np.sum(weights * [r.adjusted_score for r in audited]) / weights.sum())
        if audited and weights.sum() > 0
        else float("nan")
    )
    in_audit = rows[present].notna().any(axis=1) & (rows["words"] > 0)
    total = float(rows.loc[in_audit, "words"].sum())
    wer = float(rows.loc[in_audit, "errors"].sum()) / total if total > 0 else float("nan")
    return FairnessAudit(results, overall, wer, faas(overall, wer), int(in_audit.sum()), skipped)


def _largest_group(rows: pd.DataFrame, category: str) -> int | None:
    """The utterances of the category's largest group (as :func:`prepare_groups` counts them)
    when a row with words has a value for it; None when none has (nothing to audit)."""
    labels = rows[category].astype("string").str.strip().replace("", pd.NA)
    if not (labels.notna() & (rows["words"] > 0)).any():
        return None
    return int(labels.value_counts().max())


def skipped_message(category: str, largest: int, settings: FairnessSettings) -> str:
    """Why a category of :attr:`FairnessAudit.skipped` was not audited, naming the setting."""
    return (
        f"the fairness audit of {category!r} is skipped: no group reached "
        f"fairness.min_group_size ({settings.min_group_size} utterances; the largest has "
        f"{largest}); lower fairness.min_group_size to audit smaller groups"
    )


# --------------------------------------------------------------------------- reports


#: the columns of :func:`audit_frames`' tables (an audit without categories gives them empty)
GROUP_COLUMNS = ("group", "n", "share", "observed_wer", "predicted_wer", "raw_score", "category")
CATEGORY_COLUMNS = (
    "category",
    "groups",
    "category_score",
    "test",
    "statistic",
    "df",
    "p_value",
    "adjusted_score",
    "audited",
    "note",
)


def audit_frames(audit_result: FairnessAudit, label: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(groups, categories) tables of one audit, each with a ``source`` column = label."""
    groups = (
        pd.concat(
            [r.groups.assign(category=r.category) for r in audit_result.categories],
            ignore_index=True,
        )
        if audit_result.categories
        else pd.DataFrame(columns=list(GROUP_COLUMNS))
    )
    categories = pd.DataFrame(
        [
            {
                "category": r.category,
                "groups": len(r.groups),
                "category_score": r.category_score,
                "test": r.test,
                "statistic": r.statistic,
                "df": r.df,
                "p_value": r.p_value,
                "adjusted_score": r.adjusted_score,
                "audited": r.audited,
                "note": r.note,
            }
            for r in audit_result.categories
        ],
        columns=list(CATEGORY_COLUMNS),
    )
    return groups.assign(source=label), categories.assign(source=label)


def compare_audits(true: FairnessAudit, estimated: FairnessAudit, alpha: float = 0.05):
    """Side by side per category, with where the label-free audit's conclusions differ.

    Returns
    -------
    One row per category: true and estimated category score, p, adjusted score, best and
    worst group, and ``disagreement`` naming what differs (significance at α, best group,
    worst group; empty when they agree).
    """
    est_by_name = {r.category: r for r in estimated.categories}
    rows = []
    for t in true.categories:
        e = est_by_name.get(t.category)
        if e is None:
            continue
        row = {"category": t.category}
        for tag, r in (("true", t), ("est", e)):
            ordered = r.groups.sort_values("predicted_wer")
            row |= {
                f"{tag}_score": r.category_score,
                f"{tag}_p": r.p_value,
                f"{tag}_adjusted": r.adjusted_score,
                f"{tag}_best": ordered["group"].iat[0],
                f"{tag}_worst": ordered["group"].iat[-1],
            }
        row["group_kendall"] = _group_order_tau(t.groups, e.groups)
        row["disagreement"] = "; ".join(_differences(row, alpha))
        rows.append(row)
    return pd.DataFrame(rows)


def _group_order_tau(true_groups: pd.DataFrame, est_groups: pd.DataFrame) -> float:
    both = (
        true_groups.set_index("group")["predicted_wer"]
        .to_frame("t")
        .join(est_groups.set_index("group")["predicted_wer"].rename("e"), how="inner")
    )
    if len(both) < 3:
        return float("nan")
    return float(scipy_stats.kendalltau(both["t"], both["e"]).statistic)


def _differences(row: dict, alpha: float) -> list[str]:
    found = []
    sig_true = bool(row["true_p"] < alpha) if np.isfinite(row["true_p"]) else None
    sig_est = bool(row["est_p"] < alpha) if np.isfinite(row["est_p"]) else None
    if sig_true != sig_est:
        found.append(f"significance (true p={row['true_p']:.3g}, est p={row['est_p']:.3g})")
    if row["true_worst"] != row["est_worst"]:
        found.append(f"worst group ({row['true_worst']} vs {row['est_worst']})")
    if row["true_best"] != row["est_best"]:
        found.append(f"best group ({row['true_best']} vs {row['est_best']})")
    return found
