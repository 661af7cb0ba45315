"""The stacked regressor (scikit-learn contract, determinism) and model files with cards."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

from werest.errors import ConfigError
from werest.features.proxy import Ranking
from werest.model.files import ModelError, Models, TrainedModel, load_model, save_model
from werest.model.regressor import StackedWerRegressor
from werest.text import Normaliser

pytestmark = [pytest.mark.slow]

TINY_GRIDS = {
    "rf": {"n_estimators": [10], "min_samples_leaf": [2]},
    "gb": {"n_estimators": [20], "max_depth": [2]},
    "hgb": {"max_iter": [20], "learning_rate": [0.1, 0.3]},
}


def _data(n=300, seed=0):
    """pWER-like feature with a known link to the target, plus noise columns and NaNs."""
    rng = np.random.default_rng(seed)
    pwer = rng.uniform(0, 1, n)
    X = pd.DataFrame({"pwer": pwer, "noise": rng.normal(size=n), "third": rng.uniform(size=n)})
    X.loc[X.index % 7 == 0, "third"] = np.nan  # e.g. no third system
    y = np.clip(0.8 * pwer + rng.normal(0, 0.05, n), 0, None)
    groups = np.arange(n) // 3  # three systems per utterance
    return X, y, groups


def test_passes_scikit_learns_estimator_checks():
    """All checks, with clipping off: the default clip to [0, 1] is WER's range, and the
    regression checks fit standardised targets (negative values) on purpose."""
    estimator = StackedWerRegressor(param_grids=TINY_GRIDS, n_splits=3, clip_max=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(estimator, on_fail=None)
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert failed == []


def test_learns_the_link_and_blends_non_negatively():
    X, y, groups = _data()
    model = StackedWerRegressor(param_grids=TINY_GRIDS, n_splits=4).fit(X, y, groups=groups)
    prediction = model.predict(X)
    assert np.mean(np.abs(prediction - y)) < 0.06
    assert (model.final_estimator_.coef_ >= 0).all()
    assert prediction.min() >= 0 and prediction.max() <= 1
    assert set(model.cv_results_) == {"rf", "gb", "hgb", "stack"}


def test_a_feature_missing_in_a_whole_training_fold_is_ignored_not_fatal():
    """Grouped folds can leave a feature without a single value in a fold's training rows
    (an audio score missing in one domain); HistGradientBoosting alone cannot bin such a
    column. The stack fits, and a column empty in all training rows changes nothing: the
    predictions equal those of the same model fitted without it."""
    X, y, groups = _data()
    domains = (groups % 2).astype(int)
    with_audio = X.assign(audio=np.where(domains == 0, np.nan, X["pwer"]))
    grids = {"hgb": TINY_GRIDS["hgb"]}
    model = StackedWerRegressor(models=["hgb"], param_grids=grids, n_splits=2, random_state=0)
    fitted = clone(model).fit(with_audio, y, groups=domains)  # fold 1 trains on domain 0 only
    assert fitted.cv_results_["hgb"]["cv_mae"] < 0.2
    empty = X.assign(audio=np.nan)
    probe = X.assign(audio=X["pwer"])  # values at prediction time it never saw in training
    expected = clone(model).fit(X, y, groups=domains).predict(X)
    assert clone(model).fit(empty, y, groups=domains).predict(probe) == pytest.approx(expected)


def test_seeded_fit_is_deterministic_and_clone_refits_the_same():
    X, y, groups = _data()
    first = StackedWerRegressor(param_grids=TINY_GRIDS, n_splits=4, random_state=3)
    first.fit(X, y, groups=groups)
    second = clone(first).fit(X, y, groups=groups)
    np.testing.assert_array_equal(first.predict(X), second.predict(X))


def test_grouped_folds_keep_each_group_on_one_side():
    X, y, groups = _data(60)
    folds = StackedWerRegressor(n_splits=4)._folds(X.to_numpy(), y, groups)
    for train, test in folds:
        assert not set(groups[train]) & set(groups[test])


def test_monotonic_feature_never_lowers_the_prediction():
    X, y, groups = _data()
    model = StackedWerRegressor(
        models=["hgb", "rf"], param_grids=TINY_GRIDS, n_splits=3, monotonic_features=["pwer"]
    ).fit(X, y, groups=groups)
    grid = pd.DataFrame({"pwer": np.linspace(0, 1, 50), "noise": 0.3, "third": 0.5})
    assert (np.diff(model.predict(grid)) >= -1e-12).all()


def test_works_inside_a_pipeline():
    X, y, _ = _data(120)
    pipeline = make_pipeline(
        StandardScaler(), StackedWerRegressor(models=["hgb"], param_grids=TINY_GRIDS)
    )
    assert pipeline.fit(X.fillna(0), y).predict(X.fillna(0)).shape == (120,)


# --------------------------------------------------------------------------- model files


@pytest.fixture
def saved(tmp_path):
    X, y, groups = _data(90)
    estimator = StackedWerRegressor(models=["hgb"], param_grids=TINY_GRIDS, n_splits=3)
    estimator.fit(X, y, groups=groups)
    ranking = Ranking(systems=["a", "b"], macro_wer={"a": 0.1, "b": 0.2})
    model = TrainedModel(
        estimator, list(X.columns), "wer", "whisper_english", ranking, {"training": {"rows": 90}}
    )
    return save_model(model, tmp_path / "m.skops"), X


def test_save_and_load_round_trip(saved):
    path, X = saved
    card = json.loads(path.with_suffix(".json").read_text())
    assert card["features"] == ["pwer", "noise", "third"] and card["target"] == "wer"
    assert len(card["sha256"]) == 64 and card["versions"]["scikit-learn"]
    loaded = load_model(path)
    assert loaded.ranking.systems == ["a", "b"]
    np.testing.assert_allclose(loaded.predict(X), loaded.estimator.predict(X))


def test_a_changed_file_is_refused_before_it_is_opened(saved):
    path, _ = saved
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ModelError, match="differs from its card"):
        load_model(path)


def test_missing_card_other_version_and_other_features_are_refused(saved):
    path, _ = saved
    card_file = path.with_suffix(".json")
    card = json.loads(card_file.read_text())
    card_file.write_text(json.dumps({**card, "versions": {"scikit-learn": "0.1"}}))
    with pytest.raises(ModelError, match=r"scikit-learn 0\.1"):
        load_model(path)
    card_file.write_text(json.dumps({**card, "features": ["pwer"]}))
    with pytest.raises(ModelError, match="features differ"):
        load_model(path)
    card_file.unlink()
    with pytest.raises(ModelError, match="no model card"):
        load_model(path)


def test_a_feature_table_without_the_models_features_is_refused(saved):
    path, X = saved
    with pytest.raises(ModelError, match="lacks the model's feature"):
        load_model(path).predict(X.drop(columns="third"))


def test_models_pair_targets_share_the_wer_models_normaliser_and_refuse_a_swapped_model():
    wer = TrainedModel(None, ["pwer", "similarity"], "wer", "auto", None, {"calibration": {"q": 1}})
    cer = TrainedModel(None, ["cer_pwer", "pwer"], "cer", "none")
    models = Models(wer, cer)
    assert [target for target, _ in models] == models.targets == ["wer", "cer"]
    assert models.feature_names == ["cer_pwer", "pwer", "similarity"]
    assert models.normaliser == Normaliser("auto") and models.calibration == {"q": 1}
    assert Models(wer).targets == ["wer"]
    with pytest.raises(ConfigError, match="the wer model was trained for cer"):
        Models(cer)
    with pytest.raises(ConfigError, match="the cer model was trained for wer"):
        Models(wer, wer)


def test_a_parameter_scikit_learn_rejects_is_a_config_error_and_bad_data_is_not():
    from sklearn.linear_model import Ridge

    from werest.model.training import fit_model

    frame = pd.DataFrame({"pwer": [0.1, 0.2, 0.3], "wer": [0.1, 0.25, 0.3]})
    with pytest.raises(ConfigError, match=r"model: The 'alpha' parameter of Ridge"):
        fit_model(frame, ["pwer"], Ridge(alpha=-1.0))
    with pytest.raises(ValueError, match="NaN") as raised:
        fit_model(frame.assign(pwer=[0.1, np.nan, 0.3]), ["pwer"], Ridge())
    assert not isinstance(raised.value, ConfigError)
