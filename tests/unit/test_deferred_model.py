"""A model loaded with ``deferred=True`` (the label loop's commands, when their cache may serve
the estimate) is its card until it predicts: the same model once read, its payload checked
as :func:`werest.model.files.load_model` checks it, and never read by a run that does not
predict."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import Ridge

from werest.features.proxy import Ranking
from werest.model.files import (
    DeferredModel,
    ModelError,
    TrainedModel,
    card_path,
    default_model_path,
    load_model,
    load_models,
    save_model,
    sha256_of,
)


@pytest.fixture
def saved(tmp_path):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.random((40, 2)), columns=["pwer", "pcer"])
    estimator = Ridge().fit(X, X["pwer"] * 0.5)
    ranking = Ranking(systems=["a", "b"], macro_wer={"a": 0.1, "b": 0.2})
    model = TrainedModel(estimator, ["pwer", "pcer"], "wer", "whisper_english", ranking, {})
    return save_model(model, tmp_path / "m.skops"), X


def test_a_deferred_model_is_the_loaded_one_once_it_predicts(saved):
    path, X = saved
    eager, deferred = load_model(path), load_model(path, deferred=True)
    assert isinstance(deferred, DeferredModel) and deferred.loaded is None
    for name in ("feature_names", "target", "normaliser", "info"):
        assert getattr(deferred, name) == getattr(eager, name)
    assert deferred.loaded is None  # nothing above reads the payload
    np.testing.assert_array_equal(deferred.predict(X), eager.predict(X))
    assert deferred.ranking == eager.ranking and deferred.loaded is not None


def test_a_file_that_differs_from_its_card_is_read_at_once(saved):
    path, _ = saved
    card = json.loads(card_path(path).read_text())
    card_path(path).write_text(json.dumps({**card, "sha256": "0" * 64}))
    with pytest.raises(ModelError, match="differs from its card"):
        load_model(path, deferred=True)
    assert not isinstance(load_model(path, trust_model=True, deferred=True), DeferredModel)


def test_a_payload_that_says_otherwise_than_its_card_is_refused_when_read(saved):
    path, X = saved
    card = json.loads(card_path(path).read_text())
    card_path(path).write_text(json.dumps({**card, "normaliser": "none"}))
    deferred = load_model(path, deferred=True)
    assert deferred.normaliser == "none"
    with pytest.raises(ModelError, match="differs from its card"):
        deferred.predict(X)
    assert card["sha256"] == sha256_of(path)


def test_a_run_that_does_not_predict_imports_neither_skops_nor_scikit_learn():
    script = (
        "import sys\n"
        "from werest.model.files import load_models\n"
        "models = load_models(deferred=True)\n"
        "assert models.feature_names and models.normaliser and models.wer.info['sha256']\n"
        "print(sorted(m for m in ('skops', 'sklearn') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["[]"]
    assert load_models(deferred=True).wer.info == load_model(default_model_path()).info


LISTS = ("SKLEARN_ESTIMATOR_TYPE_NAMES", "SCIPY_UFUNC_TYPE_NAMES", "NUMPY_UFUNC_TYPE_NAMES")


def test_reading_a_payload_lists_no_default_trust_and_leaves_skops_trust_as_it_was():
    """skops lists its default trusted types when first imported: scikit-learn's estimators
    (which imports every scikit-learn package) and the ufuncs of numpy and scipy (each
    searched for in every loaded module); werest imports it without those lists
    (:func:`werest.model.skops_import.skops_io`) and its model loads as before. skops's own default
    trust is listed when another use of skops reads it: an SVR and the ufuncs are trusted as
    they were, by lists as long as skops's own."""
    script = textwrap.dedent(
        f"""
        import sys
        from werest.model.files import default_model_path, load_model
        assert load_model(default_model_path()).feature_names
        import skops.io as sio
        from skops.io import _trusted_types as trusted
        lists = [getattr(trusted, name) for name in {LISTS!r}]
        walked = "sklearn.gaussian_process" in sys.modules  # only the walk imports it
        print(all(names.listing is not None for names in lists), walked)
        import numpy as np, scipy.special
        from sklearn.svm import SVR
        svr = SVR().fit([[0.0], [1.0]], [0.0, 1.0])
        objects = (svr, np.add, scipy.special.expit)
        untrusted = [sio.get_untrusted_types(data=sio.dumps(o)) for o in objects]
        print(untrusted == [[], [], []], "sklearn.gaussian_process" in sys.modules)
        print([len(names) for names in lists])
        """
    )
    reference = textwrap.dedent(
        f"""
        from skops.io import _trusted_types as trusted
        print([len(getattr(trusted, name)) for name in {LISTS!r}])
        """
    )
    done, plain = (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        for code in (script, reference)
    )
    lines = done.stdout.splitlines()
    assert lines[:2] == ["True False", "True True"], done.stdout
    assert lines[2] == plain.stdout.strip()  # as many names as skops lists itself
