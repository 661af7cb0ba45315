"""Model files cannot run code on load (issue 11).

Each hostile file is shipped with a card whose sha256 matches it, as an attacker would ship
it, under every file name a user might pass. Each payload runs ``touch MARKER`` when its
format's own loader opens it: a control (pickle / joblib / skops with the command trusted)
shows the marker does appear then, so the assertion that werest never creates it can fail.
"""

from __future__ import annotations

import json
import os
import pickle
import shlex
import subprocess
import sys
import zipfile
from collections import OrderedDict
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from sklearn.svm import SVR

from tests.helpers import SMALL, assert_one_line_error, run_cli
from werest.features.proxy import Ranking
from werest.model.convert import convert_model
from werest.model.files import (
    ModelError,
    TrainedModel,
    card_path,
    load_model,
    read_card,
    save_model,
    sha256_of,
)
from werest.model.regressor import StackedWerRegressor, linear_model

pytestmark = [pytest.mark.sonar]

TINY_GRIDS = {
    "rf": {"n_estimators": [5], "max_features": [0.5]},
    "gb": {"n_estimators": [5], "subsample": [0.8]},
    "hgb": {"max_iter": [10]},
}
NAMES = ["m.skops", "m.joblib", "m.pkl", "m.pickle"]


def _data(n: int = 120) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.random((n, 3)), columns=["pwer", "pcer", "third"])
    X.loc[::7, "third"] = np.nan
    y = np.clip(0.6 * X["pwer"].to_numpy() + 0.1 * rng.random(n), 0, 1)
    return X, y, np.arange(n) % 10


def _model(estimator) -> TrainedModel:
    X, y, groups = _data()
    if isinstance(estimator, StackedWerRegressor):
        estimator.fit(X, y, groups=groups)
    else:
        estimator.fit(X, y)
    ranking = Ranking(systems=["a", "b"], macro_wer={"a": 0.1, "b": 0.2})
    return TrainedModel(estimator, list(X.columns), "wer", "whisper_english", ranking, {})


@pytest.fixture(scope="module")
def stack_model() -> TrainedModel:
    """RF, GBM and HistGBM under the ridge: every fitted part a shipped model holds."""
    regressor = StackedWerRegressor(
        param_grids=TINY_GRIDS, n_splits=2, monotonic_features=["pwer"], random_state=0
    )
    return _model(regressor)


@pytest.fixture(scope="module")
def saved(stack_model, tmp_path_factory) -> Path:
    return save_model(stack_model, tmp_path_factory.mktemp("model") / "good.skops")


def ship(payload: bytes, folder: Path, name: str, card: dict) -> Path:
    """Write ``payload`` as ``folder/name`` with a copy of ``card`` that matches it."""
    path = folder / name
    path.write_bytes(payload)
    matching = {**card, "file": name, "sha256": sha256_of(path), "size_bytes": len(payload)}
    card_path(path).write_text(json.dumps(matching), encoding="utf-8")
    return path


def estimate(capsys, folder: Path, model: Path, *extra: str) -> tuple[int, str]:
    (folder / "t.csv").write_text(SMALL, encoding="utf-8")
    args = ["estimate", f"input={folder / 't.csv'}", f"model_path={model}"]
    status, _, err = run_cli(capsys, *args, f"output_dir={folder / 'o'}", *extra)
    return status, err


# --------------------------------------------------------------------------- round trip


@pytest.mark.parametrize("kind", ["stack", "linear"])
def test_saved_and_loaded_again_gives_identical_predictions(kind, stack_model, tmp_path):
    model = stack_model if kind == "stack" else _model(linear_model())
    path = save_model(model, tmp_path / "m.skops")
    X, _, _ = _data(200)
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert loaded.feature_names == model.feature_names
    assert loaded.ranking == model.ranking
    card = read_card(path)
    assert card["format"] == "skops" and card["file"] == "m.skops"
    assert card["sha256"] == sha256_of(path) and card["versions"]["skops"]
    assert zipfile.is_zipfile(path)


def test_loading_a_model_does_not_import_torch_and_torch_still_imports_after():
    """skops' import walks every scikit-learn package, torch's array-api wrapper included;
    werest hides torch during that import (``werest.model.skops_import.skops_io``). In a fresh
    process: the shipped model loads and predicts without torch imported, then torch imports."""
    pytest.importorskip("torch", reason="torch is not installed (the sonar extra)")
    script = (
        "import sys\n"
        "from werest.model.files import default_model_path\n"
        "from werest.model.files import load_model\n"
        "model = load_model(default_model_path())\n"
        "assert model.feature_names\n"
        "print('torch' in sys.modules)\n"
        "import torch\n"
        "print(torch.zeros(2).sum().item())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["False", "0.0"]


def test_the_shipped_model_is_skops_and_matches_its_card():
    from werest.model.files import default_model_path

    path = default_model_path()
    assert path.suffix == ".skops" and zipfile.is_zipfile(path)
    card = read_card(path)
    assert card["sha256"] == sha256_of(path) and card["file"] == path.name
    assert "converted_from" in card or "training" in card
    assert load_model(path).feature_names == card["features"]


# --------------------------------------------------------------------------- pickle payloads


class RunsCommand:
    """Unpickling this runs a shell command: the classic pickle attack."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def pickle_payload(marker: Path, writer: str) -> bytes:
    payload = {"estimator": RunsCommand(f"touch {shlex.quote(str(marker))}")}
    if writer == "pickle":
        return pickle.dumps(payload)
    buffer = marker.parent / "buffer.joblib"
    joblib.dump(payload, buffer, compress=3)
    data = buffer.read_bytes()
    buffer.unlink()
    return data


@pytest.mark.parametrize("writer", ["pickle", "joblib"])
@pytest.mark.parametrize("name", NAMES)
def test_a_pickle_that_runs_a_command_never_runs(saved, tmp_path, capsys, name, writer):
    marker = tmp_path / "MARKER"
    path = ship(pickle_payload(marker, writer), tmp_path, name, read_card(saved))
    for extra in ((), ("trust_model=true",)):
        status, err = estimate(capsys, tmp_path, path, *extra)
        line = assert_one_line_error(status, err, "estimate", name, "not a skops model file")
        assert "werest convert-model" in line and "trust_model=true" in line
        assert not marker.exists()
    assert not (tmp_path / "o").exists()
    joblib.load(path)  # control: the payload is live when unpickled
    assert marker.exists()


# --------------------------------------------------------------------------- skops payloads


def edit_schema(path: Path, edit) -> bytes:
    """The bytes of the skops file at ``path`` with ``edit(schema)`` applied."""
    out = path.parent / f"edited-{path.name}"
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(out, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "schema.json":
                schema = json.loads(data)
                edit(schema)
                data = json.dumps(schema).encode()
            target.writestr(item, data)
    data = out.read_bytes()
    out.unlink()
    return data


def calls_os_system(marker: Path):
    """A skops node that calls ``os.system("touch MARKER")`` when it is constructed."""
    command = json.dumps(f"touch {shlex.quote(str(marker))}")
    text = {"__class__": "str", "__module__": "builtins", "__loader__": "JsonNode"}
    return {
        "__class__": "system",
        "__module__": "os",
        "__loader__": "ConstructorFromReduceNode",
        "content": {
            "__class__": "tuple",
            "__module__": "builtins",
            "__loader__": "TupleNode",
            "content": [{**text, "content": command, "is_json": True}],
        },
    }


@pytest.mark.parametrize("name", NAMES)
def test_a_skops_file_that_calls_os_system_never_runs(saved, tmp_path, capsys, name):
    marker = tmp_path / "MARKER"
    original = tmp_path / "original.skops"
    original.write_bytes(saved.read_bytes())

    def inject(schema):
        schema["content"]["target"] = calls_os_system(marker)

    path = ship(edit_schema(original, inject), tmp_path, name, read_card(saved))
    for extra in ((), ("trust_model=true",)):
        status, err = estimate(capsys, tmp_path, path, *extra)
        assert_one_line_error(status, err, "estimate", name, "refusing to load", "os.system")
        assert not marker.exists()
    with pytest.raises(ModelError, match=r"os\.system"):
        load_model(path)
    assert not marker.exists()
    sio.load(path, trusted=sio.get_untrusted_types(file=path))  # control: trusted, it runs
    assert marker.exists()


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (SVR().fit([[0.0], [1.0]], [0.0, 1.0]), "sklearn.svm._classes.SVR"),
        (OrderedDict(a=1), "collections.OrderedDict"),
    ],
)
def test_a_file_holding_an_unexpected_type_is_refused(saved, tmp_path, capsys, extra, named):
    """Types skops itself trusts by default but no werest model is made of."""
    assert named not in sio.get_untrusted_types(data=sio.dumps(extra))  # skops would load it
    payload = sio.load(saved, trusted=sio.get_untrusted_types(file=saved))
    payload["extra"] = extra
    path = tmp_path / "m.skops"
    sio.dump(payload, path)
    path = ship(path.read_bytes(), tmp_path, "m.skops", read_card(saved))
    status, err = estimate(capsys, tmp_path, path)
    assert_one_line_error(status, err, "estimate", "m.skops", "refusing to load", named)


def test_save_model_refuses_an_estimator_werest_would_not_load(tmp_path):
    model = TrainedModel(SVR().fit([[0.0], [1.0]], [0.0, 1.0]), ["pwer"])
    with pytest.raises(ModelError, match=r"sklearn\.svm\._classes\.SVR"):
        save_model(model, tmp_path / "m.skops")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("keep", ["100 bytes", "half", "all but the zip's end record"])
def test_a_truncated_file_with_a_matching_card_is_refused(saved, tmp_path, capsys, keep):
    data = saved.read_bytes()
    cut = {"100 bytes": 100, "half": len(data) // 2}.get(keep, len(data) - 22)
    path = ship(data[:cut], tmp_path, "m.skops", read_card(saved))
    status, err = estimate(capsys, tmp_path, path)
    assert_one_line_error(status, err, "estimate", "m.skops", "cannot load the model")


# --------------------------------------------------------------------------- old joblib models


@pytest.fixture
def old_model(stack_model, tmp_path) -> Path:
    """A model as werest wrote them before skops: a joblib pickle and a version-1 card."""
    saved = save_model(stack_model, tmp_path / "new.skops")
    card = read_card(saved)
    payload = {
        "estimator": stack_model.estimator,
        "feature_names": stack_model.feature_names,
        "target": "wer",
        "normaliser": "whisper_english",
        "ranking": {"systems": ["a", "b"], "macro_wer": {"a": 0.1, "b": 0.2}},
    }
    path = tmp_path / "old.joblib"
    joblib.dump(payload, path, compress=3)
    saved.unlink()
    card_path(saved).unlink()
    card = {**card, "card_version": 1, "training": {"rows": 120}}
    del card["format"]
    return ship(path.read_bytes(), tmp_path, "old.joblib", card)


def test_an_old_joblib_model_is_refused_with_how_to_convert_it(old_model, capsys):
    status, err = estimate(capsys, old_model.parent, old_model)
    line = assert_one_line_error(status, err, "estimate", "old.joblib", "never unpickles")
    assert f"werest convert-model model_path={old_model} trust_model=true" in line


def test_convert_model_needs_trust_and_then_writes_an_identical_skops_model(
    old_model, stack_model, capsys
):
    status, _, err = run_cli(capsys, "convert-model", f"model_path={old_model}")
    assert_one_line_error(status, err, "convert-model", "trust_model=true")
    assert not old_model.with_suffix(".skops").exists()
    status, out, err = run_cli(
        capsys, "convert-model", f"model_path={old_model}", "trust_model=true"
    )
    assert status == 0, err
    new = old_model.with_suffix(".skops")
    assert f"wrote {new}" in out
    loaded = load_model(new)
    X, _, _ = _data(200)
    np.testing.assert_array_equal(loaded.predict(X), stack_model.predict(X))
    card = read_card(new)
    assert card["sha256"] == sha256_of(new) and card["format"] == "skops"
    assert card["training"] == {"rows": 120} and card["converted_from"]["file"] == "old.joblib"


def test_convert_model_refuses_a_pickle_its_card_does_not_describe(old_model, tmp_path):
    marker = tmp_path / "MARKER"
    old_model.write_bytes(pickle_payload(marker, "joblib"))  # card left as it was
    with pytest.raises(ModelError, match="refusing to unpickle"):
        convert_model(old_model)
    assert not marker.exists() and not old_model.with_suffix(".skops").exists()


# --------------------------------------------------------------------------- crafted trees


def _crafted_tree(estimator, case: str) -> None:
    """Point one node of a fitted tree outside its arrays (skops checks types, not this)."""
    rf, gb, hgb = estimator.estimators_
    if case == "hgb: a child that loops back to the root":
        nodes = hgb[-1]._predictors[0][0].nodes  # behind FillEmptyColumns
        nodes["right"][np.flatnonzero(nodes["is_leaf"] == 0)[-1]] = 0
        return
    tree = rf[-1].estimators_[0].tree_ if case.startswith("rf") else gb[-1].estimators_[0, 0].tree_
    state = tree.__getstate__()
    inner = np.flatnonzero(state["nodes"]["left_child"] != -1)[0]
    if case.startswith("rf"):
        state["nodes"]["left_child"][inner] = 10**6
    else:
        state["nodes"]["feature"][inner] = 99
    tree.__setstate__(state)


@pytest.mark.parametrize(
    "case",
    [
        "rf: a child index far past the node array",
        "gb: a split on feature 99 of 3",
        "hgb: a child that loops back to the root",
    ],
)
def test_a_tree_with_out_of_range_indices_is_refused(saved, tmp_path, capsys, case):
    payload = sio.load(saved, trusted=sio.get_untrusted_types(file=saved))
    _crafted_tree(payload["estimator"], case)
    sio.dump(payload, tmp_path / "crafted.skops")
    path = ship((tmp_path / "crafted.skops").read_bytes(), tmp_path, "m.skops", read_card(saved))
    sio.load(path, trusted=sio.get_untrusted_types(file=path))  # skops alone lets it through
    status, err = estimate(capsys, tmp_path, path)
    assert_one_line_error(status, err, "estimate", "m.skops", "indices out of range")
