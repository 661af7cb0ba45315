"""Trained models on disk: ``<name>.joblib`` plus a JSON model card beside it.

The card records what a user needs to trust and reuse a model: the feature names and their
order, the target (WER or CER), the normaliser, the proxy ranking, the training datasets and
systems, the cross-validation scores, the package versions, a fingerprint of the training data
and the sha256 of the joblib file.

joblib files are pickles, and unpickling runs code. :func:`load_model` therefore loads a file
only when its sha256 equals the one in its card (a corrupt, truncated or swapped file is
refused before it is unpickled) and when it was written by the same scikit-learn version
(pickled estimators are not portable across versions). ``trust_model=True`` skips the hash
check, for a file you made yourself and whose card you lost or edited.
"""

from __future__ import annotations

import hashlib
import json
import logging
import platform
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import joblib
import numpy as np
import pandas as pd

from werest.config import json_default
from werest.errors import WerestError
from werest.proxy import Ranking
from werest.table import atomic_path

log = logging.getLogger(__name__)

CARD_VERSION = 1
PACKAGES = ("werest", "scikit-learn", "numpy", "pandas", "scipy", "joblib")


class ModelError(WerestError):
    """A model file is missing, corrupt, or does not match its card or this installation."""


@dataclass
class TrainedModel:
    """A fitted estimator with everything needed to apply it to new feature tables."""

    estimator: object
    feature_names: list[str]
    target: str = "wer"
    normaliser: str = "whisper_english"
    ranking: Ranking | None = None
    info: dict = field(default_factory=dict)

    def predict(self, features: pd.DataFrame) -> pd.Series:
        """Predicted utterance WER/CER for a feature table holding :attr:`feature_names`;
        never negative (a linear model's intercept could otherwise go below 0)."""
        missing = [name for name in self.feature_names if name not in features.columns]
        if missing:
            raise ModelError(
                f"the feature table lacks the model's feature(s) {', '.join(missing)}; the "
                f"model was trained on {', '.join(self.feature_names)}"
            )
        values = features[self.feature_names].astype(float)
        predicted = np.clip(np.asarray(self.estimator.predict(values), dtype=float), 0.0, None)
        return pd.Series(predicted, index=features.index)


def sha256_of(path: str | Path) -> str:
    """Hex sha256 of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fingerprint(frame: pd.DataFrame) -> str:
    """A sha256 over a table's rows (order-independent), to identify training data."""
    hashed = pd.util.hash_pandas_object(frame, index=False).sort_values().to_numpy()
    return hashlib.sha256(hashed.tobytes()).hexdigest()


def package_versions() -> dict[str, str]:
    """Versions of Python and the packages a pickled model depends on."""
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


def card_path(model_path: str | Path) -> Path:
    """``models/default.joblib`` -> ``models/default.json``."""
    return Path(model_path).with_suffix(".json")


def save_model(model: TrainedModel, path: str | Path) -> Path:
    """Write ``model`` as ``path`` (joblib) and its card beside it, both atomically."""
    path = Path(path)
    payload = {
        "estimator": model.estimator,
        "feature_names": list(model.feature_names),
        "target": model.target,
        "normaliser": model.normaliser,
        "ranking": asdict(model.ranking) if model.ranking else None,
    }
    with atomic_path(path) as tmp:
        joblib.dump(payload, tmp, compress=3)
        digest, size = sha256_of(tmp), tmp.stat().st_size
    card = {
        "card_version": CARD_VERSION,
        "name": path.stem,
        "file": path.name,
        "sha256": digest,
        "size_bytes": size,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "target": model.target,
        "features": list(model.feature_names),
        "normaliser": model.normaliser,
        "ranking": asdict(model.ranking) if model.ranking else None,
        "versions": package_versions(),
        **model.info,
    }
    with atomic_path(card_path(path)) as tmp:
        tmp.write_text(json.dumps(card, indent=2, default=json_default), encoding="utf-8")
    log.info("wrote %s (%.1f MB) and its card", path, size / 1e6)
    return path


def read_card(path: str | Path) -> dict:
    """The card of a model file; ModelError when it is missing or unreadable."""
    card_file = card_path(path)
    if not card_file.is_file():
        raise ModelError(f"no model card {card_file.name} beside the model", path=path)
    try:
        card = json.loads(card_file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, OSError) as error:
        message = " ".join(str(error).split())
        raise ModelError(f"unreadable model card: {message}", path=card_file) from None
    if not isinstance(card, dict):
        raise ModelError("model card is not a JSON object", path=card_file)
    for key, kind in (("sha256", str), ("features", list), ("target", str), ("versions", dict)):
        if key not in card:
            raise ModelError(f"model card lacks {key!r}", path=card_file)
        if not isinstance(card[key], kind):
            raise ModelError(f"model card's {key!r} is not a {kind.__name__}", path=card_file)
    return card


def load_model(path: str | Path, *, trust_model: bool = False) -> TrainedModel:
    """Load a model saved by :func:`save_model`, after checking it against its card.

    Raises
    ------
    ModelError : no such file, no card, a sha256 that differs from the card's (unless
        ``trust_model``), another scikit-learn version, or a payload whose features differ
        from the card's.
    """
    path = Path(path)
    if not path.is_file():
        raise ModelError("no such model file", path=path)
    card = read_card(path)
    digest = sha256_of(path)
    if digest != card["sha256"] and not trust_model:
        raise ModelError(
            f"sha256 {digest[:12]}… differs from its card's {card['sha256'][:12]}…: the "
            "file is corrupt or was replaced; refusing to unpickle it (pass trust_model=true "
            "only for a file you made yourself)",
            path=path,
        )
    ours = metadata.version("scikit-learn")
    theirs = card["versions"].get("scikit-learn")
    if theirs != ours:
        raise ModelError(
            f"trained with scikit-learn {theirs}, this is {ours}: pickled estimators do not "
            f"carry across versions; install scikit-learn=={theirs} or retrain (werest train)",
            path=path,
        )
    try:
        payload = joblib.load(path)
    except Exception as error:  # a pickle can fail in many ways; all mean "unusable file"
        message = " ".join(str(error).split())
        raise ModelError(
            f"cannot load the model: {type(error).__name__}: {message}", path=path
        ) from None
    if digest != card["sha256"]:
        log.warning("%s: sha256 differs from its card; loaded because trust_model=true", path)
    if not isinstance(payload, dict) or not {"estimator", "feature_names"} <= set(payload):
        raise ModelError("not a werest model file (save_model writes them)", path=path)
    if payload.get("feature_names") != card["features"]:
        raise ModelError("the model's features differ from its card's", path=path)
    ranking = Ranking(**payload["ranking"]) if payload.get("ranking") else None
    info = {k: v for k, v in card.items() if k not in ("features", "target", "normaliser")}
    return TrainedModel(
        estimator=payload["estimator"],
        feature_names=payload["feature_names"],
        target=payload.get("target", card["target"]),
        normaliser=payload.get("normaliser", card.get("normaliser", "whisper_english")),
        ranking=ranking,
        info=info,
    )
