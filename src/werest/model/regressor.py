"""The aWER regressor: RF, GBM and HistGBM tuned by grid search, stacked under an NNLS ridge.

:class:`StackedWerRegressor` is a scikit-learn estimator (``fit``/``predict``, parameters only
stored in ``__init__``, ``clone``-able, usable in a ``Pipeline``):

1. each base model (``rf``: RandomForest, ``gb``: GradientBoosting, ``hgb``:
   HistGradientBoosting) is tuned by ``GridSearchCV`` on grouped folds, selecting by mean
   absolute error;
2. out-of-fold predictions of the tuned models (same folds) train a ``Ridge(positive=True)``:
   the output is a non-negative blend of the base models;
3. predictions are clipped to ``[0, clip_max]``.

Folds are ``GroupKFold`` over ``groups`` (give the utterance, or the dataset when there are
several, so the rows of one utterance, i.e. its several systems, never sit on both sides of a
split). Without groups, shuffled ``KFold``. Missing feature values (e.g. features that need a
third system) are imputed with -1 for RF/GBM (which do not take NaN) and left to HistGBM.

The base models are fitted with squared error by default: the corpus WER is a length-weighted
*mean* of utterance errors, and a median-seeking (absolute-error) fit under-estimates it on
skewed WER distributions. Model selection (grid search) and reporting use MAE, as the paper.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, TransformerMixin, clone
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)
from sklearn.impute import SimpleImputer
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, GroupKFold, KFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.utils.validation import check_is_fitted, validate_data

BASE_MODELS: tuple[str, ...] = ("rf", "gb", "hgb")

# Small default grids: fast enough for tests and check_estimator; conf/model/stack.yaml
# holds the grids used for the shipped model.
DEFAULT_GRIDS: dict[str, dict[str, list]] = {
    "rf": {"n_estimators": [100], "min_samples_leaf": [5, 20]},
    "gb": {"n_estimators": [100], "max_depth": [3], "learning_rate": [0.1]},
    "hgb": {"max_iter": [200], "learning_rate": [0.05, 0.1]},
}


class FillEmptyColumns(TransformerMixin, BaseEstimator):
    """Sets the columns that hold no value at all in the training data to 0, leaves every other
    value (NaN included) alone.

    HistGradientBoosting takes NaN natively but cannot bin a column without a single value
    (scikit-learn 1.9 raises "window shape cannot be larger than input array shape"). That
    happens whenever a feature is missing in every row of a training fold: an audio score
    missing in one domain, a ``*_vs_proxy`` difference whose proxy was never scored. A column
    empty at fit time is constant afterwards, so no tree splits on it.
    """

    def fit(self, X, y=None):
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan")
        self.empty_ = np.isnan(X).all(axis=0)
        return self

    def transform(self, X):
        check_is_fitted(self, "empty_")
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan", reset=False)
        X = X.copy()
        X[:, self.empty_] = 0.0
        return X


def base_estimator(name: str, random_state: int | None, monotonic: Sequence[int] | None):
    """A fresh base model; RF and GBM get a -1 imputer in front (they take no NaN), HistGBM
    a :class:`FillEmptyColumns`."""
    if name == "rf":
        model = RandomForestRegressor(random_state=random_state, n_jobs=1, monotonic_cst=monotonic)
        return make_pipeline(SimpleImputer(strategy="constant", fill_value=-1.0), model)
    if name == "gb":
        model = GradientBoostingRegressor(random_state=random_state)
        return make_pipeline(SimpleImputer(strategy="constant", fill_value=-1.0), model)
    if name == "hgb":
        model = HistGradientBoostingRegressor(random_state=random_state, monotonic_cst=monotonic)
        return make_pipeline(FillEmptyColumns(), model)
    raise ValueError(f"unknown base model {name!r}; choose from {', '.join(BASE_MODELS)}")


def _step_name(estimator) -> str:
    """Grid keys address the model inside the imputer pipeline."""
    return f"{estimator.steps[-1][0]}__" if hasattr(estimator, "steps") else ""


class TakesNaN:
    """An estimator whose ``fit`` and ``predict`` take NaN (tagged so for scikit-learn)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


# The regressors' parameters are dataclass fields: the generated ``__init__`` stores each as
# given, as scikit-learn asks of an estimator (``get_params`` reads its signature); no
# ``__eq__`` or ``__repr__`` of the dataclass's (scikit-learn's repr shows the parameters set).
@dataclass(eq=False, repr=False)
class StackedWerRegressor(TakesNaN, RegressorMixin, BaseEstimator):
    """Stacked RF/GBM/HistGBM regressor of utterance WER (or CER) with an NNLS ridge on top.

    Parameters
    ----------
    models : base models to stack, from ``rf``, ``gb``, ``hgb``.
    param_grids : ``{model: {parameter: [values]}}`` searched by ``GridSearchCV`` (missing
        models use :data:`DEFAULT_GRIDS`).
    n_splits : folds (at most the number of groups).
    scoring : the grid search's scorer (mean absolute error by default).
    ridge_alpha : the L2 penalty of the non-negative ridge.
    clip_max : upper bound of targets and predictions (lower bound 0); None: no clipping
        (only for general regression tests: utterance WER is never negative).
    monotonic_features : names of features the prediction may only increase with (used by
        RF and HistGBM; needs ``fit`` on a DataFrame with those column names).
    n_jobs : parallel jobs for grid search and out-of-fold predictions.
    random_state : seed of the base models and of the un-grouped fold shuffle.
    """

    models: Sequence[str] = BASE_MODELS
    param_grids: Mapping[str, Mapping[str, Sequence]] | None = None
    n_splits: int = 5
    scoring: str = "neg_mean_absolute_error"
    ridge_alpha: float = 1.0
    clip_max: float | None = 1.0
    monotonic_features: Sequence[str] = ()
    n_jobs: int | None = None
    random_state: int | None = 0

    def fit(self, X, y, groups=None):
        """Tune and fit the base models, then the non-negative ridge on their OOF predictions.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features); NaN allowed.
        y : utterance WER (or CER); clipped to ``[0, clip_max]``.
        groups : group labels for ``GroupKFold`` (e.g. utterance or dataset ids).
        """
        X, y = validate_data(
            self, X, y, dtype=np.float64, ensure_all_finite="allow-nan", y_numeric=True
        )
        if len(y) < 2:
            raise ValueError(f"n_samples={len(y)}: cross-validation needs at least 2 samples")
        unknown = [m for m in self.models if m not in BASE_MODELS]
        if unknown or not self.models:
            raise ValueError(f"models must be chosen from {BASE_MODELS}, got {self.models!r}")
        y = self._clip(y.astype(float))
        folds = self._folds(X, y, groups)
        monotonic = self._monotonic(X.shape[1])
        grids = {**DEFAULT_GRIDS, **dict(self.param_grids or {})}
        self.estimators_, self.cv_results_ = [], {}
        oof = np.empty((len(y), len(self.models)))
        for column, name in enumerate(self.models):
            estimator = base_estimator(name, self.random_state, monotonic)
            prefix = _step_name(estimator)
            grid = {f"{prefix}{key}": list(values) for key, values in grids[name].items()}
            search = GridSearchCV(
                estimator, grid, scoring=self.scoring, cv=folds, n_jobs=self.n_jobs, refit=True
            )
            search.fit(X, y)
            oof[:, column] = cross_val_predict(
                clone(search.best_estimator_), X, y, cv=folds, n_jobs=self.n_jobs
            )
            self.estimators_.append(search.best_estimator_)
            self.cv_results_[name] = {
                "best_params": {
                    k.split("__")[-1]: _plain(v) for k, v in search.best_params_.items()
                },
                "cv_mae": float(-search.best_score_)
                if "absolute" in self.scoring
                else float(search.best_score_),
                "oof_mae": float(np.mean(np.abs(oof[:, column] - y))),
            }
        self.final_estimator_ = Ridge(alpha=self.ridge_alpha, positive=True).fit(oof, y)
        stacked = self._clip(self.final_estimator_.predict(oof))
        self.cv_results_["stack"] = {
            "weights": [float(w) for w in self.final_estimator_.coef_],
            "intercept": float(self.final_estimator_.intercept_),
            "oof_mae": float(np.mean(np.abs(stacked - y))),
        }
        return self

    def predict(self, X):
        """Predicted utterance WER (or CER), clipped to ``[0, clip_max]``."""
        check_is_fitted(self, "final_estimator_")
        X = validate_data(self, X, reset=False, dtype=np.float64, ensure_all_finite="allow-nan")
        # A base model the non-negative ridge gave weight 0 cannot change the blend: skip it.
        weights = self.final_estimator_.coef_
        blend = np.column_stack(
            [
                estimator.predict(X) if weight != 0 else np.zeros(len(X))
                for estimator, weight in zip(self.estimators_, weights, strict=True)
            ]
        )
        return self._clip(self.final_estimator_.predict(blend))

    def _clip(self, values: np.ndarray) -> np.ndarray:
        return values if self.clip_max is None else np.clip(values, 0.0, self.clip_max)

    def _folds(self, X, y, groups) -> list[tuple[np.ndarray, np.ndarray]]:
        if groups is not None:
            groups = np.asarray(groups)
            n_groups = len(np.unique(groups))
            if n_groups < 2:
                raise ValueError("groups must hold at least two distinct values")
            splitter = GroupKFold(n_splits=min(self.n_splits, n_groups))
            return list(splitter.split(X, y, groups))
        splitter = KFold(
            n_splits=min(self.n_splits, len(y)), shuffle=True, random_state=self.random_state
        )
        return list(splitter.split(X, y))

    def _monotonic(self, n_features: int) -> list[int] | None:
        if not self.monotonic_features:
            return None
        names = list(getattr(self, "feature_names_in_", []))
        missing = [f for f in self.monotonic_features if f not in names]
        if missing:
            raise ValueError(f"monotonic features {missing} are not among the fitted columns")
        return [1 if name in self.monotonic_features else 0 for name in names]


def _plain(value):
    """numpy scalars to Python, for JSON cards."""
    return value.item() if hasattr(value, "item") else value


def linear_model(alpha: float = 1.0):
    """A cheap baseline: -1 imputation and a non-negative ridge (``conf/model/ridge.yaml``)."""
    return make_pipeline(
        SimpleImputer(strategy="constant", fill_value=-1.0), Ridge(alpha=alpha, positive=True)
    )


#: The correction model of :class:`AnchoredWerRegressor` when none is given: a shallow,
#: strongly regularised HistGradientBoosting (a correction must be backed by many utterances).
DEFAULT_CORRECTION = {
    "max_iter": 200,
    "learning_rate": 0.05,
    "max_leaf_nodes": 15,
    "min_samples_leaf": 200,
    "l2_regularization": 1.0,
}


@dataclass(eq=False, repr=False)  # parameters as fields, as StackedWerRegressor's
class AnchoredWerRegressor(TakesNaN, RegressorMixin, BaseEstimator):
    """Agreement, corrected only where evidence supports it: werest's zero-label estimator.

    The prediction for an utterance is its agreement-based rate (``anchor``: pWER against the
    proxy, unbounded: a looping hypothesis has many insertions) plus a learned correction::

        predicted = max(0, anchor + shrinkage * in_support(X) * clip(correction(X), ±bound))

    * ``correction`` is fitted on ``y - anchor`` (the true rate minus agreement's), weighted
      by ``weight`` (the proxy's length: a corpus estimate is a length-weighted mean, so the
      weighted mean correction is the corpus correction);
    * ``in_support`` is 1 where every feature (and every ``support_only`` column, such as the
      number of other systems) lies inside the range it had in training (NaN aside) and 0
      elsewhere: on rows unlike the training data, the estimate *is* the anchor;
    * ``bound`` is ``max_correction``, the largest change of one utterance's rate, and, with
      ``evidence`` set, at most ``evidence_scale`` times that column (the utterance's
      disagreement between systems): where every system agrees there is no evidence against
      agreement, and the estimate stays at it;
    * ``shrinkage`` (in [0, 1]) scales every correction, chosen by corpus error leave one
      domain out (``werest evaluate experiment=lodo``).

    Nothing caps the prediction at 1: insertions are unbounded, and so is a corpus WER. With
    ``anchor="pwer"`` and ``weight="proxy_words"``, a corpus estimate whose corrections are
    all 0 equals raw corpus pWER (:func:`werest.estimation.corpus.estimated_sample`).

    Parameters
    ----------
    estimator : the correction's regressor (default: :data:`DEFAULT_CORRECTION` HistGBM);
        its ``fit`` must take ``sample_weight``.
    anchor : the feature column holding the agreement rate (``pwer``, or ``pcer`` for CER).
    weight : the column weighing each utterance (``proxy_words``, or ``proxy_chars``); a
        weight only, never a feature of the correction.
    shrinkage : the share of the learned correction applied, in [0, 1] (0: raw agreement).
    max_correction : the largest correction of one utterance's rate, either way.
    support_quantiles : the training quantiles bounding each feature's range (0, 1: min/max).
    support_only : columns checked for support but not features of the correction (e.g.
        ``n_others``: agreement with 50 systems means something else than with 5).
    evidence : a column bounding each correction (None: no such bound); NaN there: no bound.
    evidence_scale : the bound is ``evidence_scale`` times the ``evidence`` column.
    """

    estimator: Any = None
    anchor: str = "pwer"
    weight: str = "proxy_words"
    shrinkage: float = 1.0
    max_correction: float = 1.0
    support_quantiles: tuple[float, float] = (0.0, 1.0)
    support_only: tuple[str, ...] = ()
    evidence: str | None = None
    evidence_scale: float = 1.0

    def _frame(self, X):
        import pandas as pd

        if not isinstance(X, pd.DataFrame):
            raise ValueError(
                f"AnchoredWerRegressor needs a DataFrame holding {self.anchor!r} and "
                f"{self.weight!r}"
            )
        needed = [self.anchor, self.weight, *self.support_only]
        needed += [self.evidence] if self.evidence else []
        missing = [c for c in needed if c not in X.columns]
        if missing:
            raise ValueError(f"AnchoredWerRegressor: X lacks column(s) {missing}")
        return X

    def _inner_columns(self, X) -> list[str]:
        return [c for c in X.columns if c != self.weight and c not in self.support_only]

    def _support_columns(self) -> list[str]:
        return [*self.inner_features_, *self.support_only]

    def fit(self, X, y, groups=None):
        """Fit the correction on ``y - anchor`` (clipped to ±``max_correction``), weighted by
        ``weight``; record each feature's training range."""
        if not 0.0 <= self.shrinkage <= 1.0:
            raise ValueError(f"shrinkage must be in [0, 1], got {self.shrinkage!r}")
        X = self._frame(X)
        y = np.asarray(y, dtype=float)
        self.feature_names_in_ = np.asarray(X.columns, dtype=object)
        self.n_features_in_ = X.shape[1]
        self.inner_features_ = np.asarray(self._inner_columns(X), dtype=object)
        inner = X[list(self.inner_features_)].to_numpy(dtype=float)
        anchor = X[self.anchor].to_numpy(dtype=float)
        residual = np.clip(y - anchor, -self.max_correction, self.max_correction)
        weight = np.clip(X[self.weight].to_numpy(dtype=float), 1.0, None)
        low, high = self.support_quantiles
        checked = X[self._support_columns()].to_numpy(dtype=float)
        with np.errstate(all="ignore"):
            self.support_low_ = np.nanquantile(checked, low, axis=0)
            self.support_high_ = np.nanquantile(checked, high, axis=0)
        self.estimator_ = (
            clone(self.estimator)
            if self.estimator is not None
            else HistGradientBoostingRegressor(random_state=0, **DEFAULT_CORRECTION)
        )
        self.estimator_.fit(inner, residual, sample_weight=weight)
        return self

    def in_support(self, X) -> np.ndarray:
        """Whether each row's features all lie in their training range (NaN counts as in)."""
        check_is_fitted(self, "estimator_")
        values = self._frame(X)[self._support_columns()].to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):
            outside = (values < self.support_low_) | (values > self.support_high_)
        return ~outside.any(axis=1)

    def correction(self, X) -> np.ndarray:
        """The correction applied to each row's anchor (0 outside the training range)."""
        check_is_fitted(self, "estimator_")
        X = self._frame(X)
        learned = self.estimator_.predict(X[list(self.inner_features_)].to_numpy(dtype=float))
        bound = np.full(len(X), float(self.max_correction))
        if self.evidence:
            evidence = self.evidence_scale * X[self.evidence].to_numpy(dtype=float)
            bound = np.fmin(bound, np.clip(evidence, 0.0, None))  # fmin: NaN evidence, no bound
        bounded = np.clip(learned, -bound, bound)
        return self.shrinkage * np.where(self.in_support(X), bounded, 0.0)

    def predict(self, X):
        """``anchor + correction``, never below 0 and never capped above."""
        X = self._frame(X)
        anchor = np.nan_to_num(X[self.anchor].to_numpy(dtype=float), nan=0.0)
        return np.clip(anchor + self.correction(X), 0.0, None)
