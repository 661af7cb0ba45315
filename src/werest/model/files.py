"""Trained models on disk: ``<name>.skops`` plus a JSON model card beside it.

The card records what a user needs to trust and reuse a model: the feature names and their
order, the target (WER or CER), the normaliser, the proxy ranking, the training datasets and
systems, the cross-validation scores, the package versions, a fingerprint of the training data
and the sha256 of the model file.

Models are written with :mod:`skops.io`, not pickle: unpickling runs whatever code the file
names, and a card beside a file proves integrity, not origin (whoever hands a user a model can
hand them its card). A skops file is a zip of a JSON schema and ``.npy`` arrays; loading it
builds only the types its schema names. :func:`load_model` reads that schema first and refuses
the file, in one line naming the type, unless every type and every skops loader in it is in
:data:`~werest.model.audit.ALLOWED_TYPES` / :data:`~werest.model.audit.ALLOWED_LOADERS`
(:mod:`werest.model.audit`): the scikit-learn, numpy and werest types a werest model is made of.
Nothing is imported or built before that check passes. Old pickle
models (``.joblib``) are never unpickled here; ``werest convert-model`` converts one you trust.

The sha256 in the card must still match (a corrupt, truncated or swapped file is refused
before it is opened; ``trust_model=True`` skips only that check, never the type check), and so
must the scikit-learn version: skops rebuilds estimators from their attributes, which are not
portable across scikit-learn versions any more than pickles are.
"""

from __future__ import annotations

import hashlib
import json
import logging
import platform
import zipfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

from werest.errors import ConfigError
from werest.features.proxy_ranking import Ranking
from werest.io import atomic_path, json_default, shipped
from werest.model.audit import (
    ModelError,
    audit_model_file,
    check_trees,
    load_skops,
)
from werest.model.skops_import import skops_io
from werest.text.normalise import Normaliser

log = logging.getLogger(__name__)

CARD_VERSION = 2
FORMAT = "skops"
SUFFIX = ".skops"
PACKAGES = ("werest", "scikit-learn", "numpy", "pandas", "scipy", "skops")


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


@dataclass(frozen=True)
class Models:
    """The models one run applies: the WER model and, optionally, a CER one.

    They share one set of features, so the WER model decides what both are computed with
    (its normaliser) and what the corpus intervals are calibrated with. Iterating yields
    ``(target, model)`` pairs; a model trained for another target is refused on creation,
    so a CER model cannot silently stand in for the WER one.
    """

    wer: TrainedModel
    cer: TrainedModel | None = None

    def __post_init__(self) -> None:
        for target, model in self:
            if model.target != target:
                raise ConfigError(f"the {target} model was trained for {model.target}")

    def __iter__(self) -> Iterator[tuple[str, TrainedModel]]:
        yield "wer", self.wer
        if self.cer is not None:
            yield "cer", self.cer

    @property
    def targets(self) -> list[str]:
        """``["wer"]`` or ``["wer", "cer"]``: the ``predicted_<target>`` columns."""
        return [target for target, _ in self]

    @property
    def normaliser(self) -> Normaliser:
        """The normaliser the features are computed with (the WER model's), resolved once
        from the name on its card."""
        return Normaliser(self.wer.normaliser)

    @property
    def feature_names(self) -> list[str]:
        """Every feature some model needs, sorted."""
        return sorted({name for _, model in self for name in model.feature_names})

    @property
    def calibration(self) -> dict | None:
        """The WER model's conformal calibration (:mod:`werest.model.intervals`), if it has one."""
        return self.wer.info.get("calibration")


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
    """Versions of Python and the packages a saved model depends on."""
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


def shipped_models() -> list[str]:
    """The names of the shipped models (``default``, ``audio``: ``models/``)."""
    return sorted(path.stem for path in shipped("models").glob("*.skops"))


def model_file(path: str | Path) -> Path:
    """The model file ``path`` names: the file itself, or, for a bare name that is no file here
    (``model_path=audio``), the shipped model of that name (``models/audio.skops``)."""
    path = Path(path)
    if path.exists() or len(path.parts) != 1 or path.suffix:
        return path
    named = shipped("models") / f"{path.name}.skops"
    return named if named.is_file() else path


def card_path(model_path: str | Path) -> Path:
    """``models/default.skops`` -> ``models/default.json``."""
    return Path(model_path).with_suffix(".json")


def convert_hint(path: str | Path) -> str:
    """How to turn an old pickle model the user trusts into a skops one."""
    return f"werest convert-model model_path={path} trust_model=true"


def save_model(model: TrainedModel, path: str | Path) -> Path:
    """Write ``model`` as ``path`` (skops) and its card beside it, both atomically.

    The written file is audited as :func:`load_model` would audit it, so a model holding a
    type werest does not load (e.g. a ``conf/model`` estimator outside :data:`ALLOWED_TYPES`)
    is refused here rather than written and refused later.
    """
    sio = skops_io()
    path = Path(path)
    payload = {
        "estimator": model.estimator,
        "feature_names": list(model.feature_names),
        "target": model.target,
        "normaliser": model.normaliser,
        "ranking": asdict(model.ranking) if model.ranking else None,
    }
    with atomic_path(path) as tmp:
        sio.dump(payload, tmp, compression=zipfile.ZIP_DEFLATED, compresslevel=6)
        audit_model_file(tmp, shown_as=path)
        digest, size = sha256_of(tmp), tmp.stat().st_size
    card = {
        "card_version": CARD_VERSION,
        "name": path.stem,
        "file": path.name,
        "format": FORMAT,
        "sha256": digest,
        "size_bytes": size,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "target": model.target,
        "features": list(model.feature_names),
        "normaliser": model.normaliser,
        "ranking": asdict(model.ranking) if model.ranking else None,
        "versions": package_versions(),
    }
    # provenance from model.info (training, cv, config, ...) never overrides what was measured
    card.update({key: value for key, value in model.info.items() if key not in card})
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


ZIP_MAGIC = b"PK\x03\x04"
#: what a file that is neither skops nor a pickle may be, by its first bytes
_FOREIGN = (
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"%PDF", "a PDF document"),
    (b"\x89HDF", "an HDF5 file (a Keras .h5 model?)"),
    (b"\x93NUMPY", "a numpy .npy array"),
    (b"RIFF", "a RIFF (WAV) file"),
    (b"PAR1", "a Parquet table"),
    (b"\x1f\x8b", "a gzip file without a pickle inside"),
)


@dataclass(frozen=True)
class FileKind:
    """What a model file's first bytes say it is (:func:`file_kind`).

    ``kind`` is ``skops`` (a zip archive: skops's format; whether it holds a skops schema is
    checked when it is audited), ``pickle`` (a pickle of protocol 2 or later, bare or in a
    joblib compressor's zlib, gzip, bz2 or lzma stream: an old ``.joblib`` model),
    ``foreign`` (a format werest recognises and does not load: ``what`` names it) or
    ``corrupt`` (bytes of no format werest knows)."""

    kind: str
    what: str = ""


def file_kind(path: str | Path) -> FileKind:
    """The :class:`FileKind` of a file, from its first bytes (never unpickled or unzipped
    beyond the first decompressed bytes of a compressed stream), whatever its name."""
    with open(path, "rb") as handle:
        head = handle.read(4096)
    if head.startswith(ZIP_MAGIC):
        return FileKind("skops")
    if _is_pickle(head) or head.startswith(b"ZF0x"):  # ZF0x: joblib < 0.10's zlib files
        return FileKind("pickle", "a pickle")
    inner = _decompressed_head(head)
    if inner is not None and _is_pickle(inner):
        return FileKind("pickle", "a compressed pickle (joblib)")
    for magic, what in _FOREIGN:
        if head.startswith(magic):
            return FileKind("foreign", what)
    if not head:
        return FileKind("corrupt", "an empty file")
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and all(c.isprintable() or c.isspace() for c in text):
        if text.lstrip().startswith(("{", "[")):
            return FileKind("foreign", "JSON text (a model card? the model is the file beside it)")
        return FileKind("foreign", "a text file")
    return FileKind("corrupt", f"bytes of no known format (it begins {head[:8].hex(' ')})")


def _is_pickle(head: bytes) -> bool:
    """A pickle of protocol 2 to 5 begins with the PROTO opcode and its protocol number."""
    return len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5


def _decompressed_head(head: bytes) -> bytes | None:
    """The first bytes of a zlib, gzip, bz2 or xz/lzma stream (joblib's compressors), or None
    for bytes that are none of them."""
    import bz2
    import lzma
    import zlib

    if head[:1] == b"\x78":
        opener = zlib.decompressobj()
    elif head[:2] == b"\x1f\x8b":
        opener = zlib.decompressobj(wbits=31)
    elif head[:3] == b"BZh":
        opener = bz2.BZ2Decompressor()
    elif head[:6] == b"\xfd7zXZ\x00" or head[:1] == b"\x5d":
        opener = lzma.LZMADecompressor()
    else:
        return None
    try:
        return opener.decompress(head)[:16]
    except (zlib.error, OSError, lzma.LZMAError, EOFError, ValueError):
        return None


def not_skops_message(path: str | Path, found: FileKind, *, card: bool) -> str:
    """The one line for a model file that is no skops file: an old pickle gets the command
    that converts one (which needs its card), anything else is never called a pickle."""
    if found.kind == "pickle":
        message = (
            f"not a skops model file: an old pickle-based (joblib) model ({found.what}), which "
            "werest never unpickles (that would run any code it holds); to convert one you "
            f"trust: {convert_hint(path)}"
        )
        if not card:
            message += f" (it needs the model's card {card_path(path).name} beside it)"
        return message
    if found.kind == "foreign":
        return (
            f"not a model file: {found.what}, neither a skops model (a zip archive) nor an "
            "old pickle one; werest models are .skops files with a .json card (werest train)"
        )
    return (
        f"corrupt model file: {found.what}, neither a skops model (a zip archive) nor an old "
        "pickle one; copy the file again or retrain it (werest train)"
    )


def load_model(
    path: str | Path, *, trust_model: bool = False, deferred: bool = False
) -> TrainedModel:
    """Load a model saved by :func:`save_model`, after checking it against its card and
    auditing the types it names. ``path`` is a file or the name of a shipped model
    (:func:`model_file`: ``default``, ``audio``). ``deferred``: the payload (the fitted
    estimator and ranking) is read when first used (:class:`DeferredModel`), once every check
    that needs no payload has passed; a file that differs from its card is read now.

    Raises
    ------
    ModelError : no such file, a pickle (old ``.joblib``) file, another format's file or
        corrupt bytes (:func:`file_kind`, each with its own message), no card, a sha256 that
        differs from the card's (unless ``trust_model``), another scikit-learn version, a
        type outside :data:`ALLOWED_TYPES`, a tree whose node indices are out of range, or a
        payload whose features differ from the card's.
    """
    path = model_file(path)
    if not path.is_file():
        shipped_names = ", ".join(shipped_models())
        raise ModelError(f"no such model file (or shipped model: {shipped_names})", path=path)
    found = file_kind(path)
    if found.kind != "skops":  # a pickle is named and never opened; nothing else is a pickle
        raise ModelError(not_skops_message(path, found, card=card_path(path).is_file()), path=path)
    card = read_card(path)
    digest = sha256_of(path)
    if digest != card["sha256"] and not trust_model:
        raise ModelError(
            f"sha256 {digest[:12]}… differs from its card's {card['sha256'][:12]}…: the "
            "file is corrupt or was replaced; refusing to load it (pass trust_model=true "
            "only for a file you made yourself)",
            path=path,
        )
    check_versions(card, path)
    if deferred and digest == card["sha256"]:
        return DeferredModel(path, card)
    payload = _read_payload(path)
    if digest != card["sha256"]:
        log.warning("%s: sha256 differs from its card; loaded because trust_model=true", path)
    return model_from_payload(payload, card, path)


def _read_payload(path: Path):
    from werest import logs

    with logs.stage(f"load model ({path.name})"):
        return load_skops(path)


class DeferredModel(TrainedModel):
    """A :class:`TrainedModel` built from its card, its payload read when first used.

    The file has passed every check that needs no payload (its kind, its card, the card's
    sha256 and scikit-learn version); the fitted estimator and the ranking are read, audited
    and checked (:func:`load_skops`, :func:`model_from_payload`) on first access, and the
    payload must say what the card says (features, target, normaliser). A run that never
    predicts, such as ``werest estimate labels=`` served by its cache, then never imports
    skops and scikit-learn (about 1 s)."""

    def __init__(self, path: Path, card: dict) -> None:
        self.path, self.card, self.loaded = path, card, None
        self.feature_names = list(card["features"])
        self.target = card["target"]
        self.normaliser = card.get("normaliser", "whisper_english")
        self.info = _card_info(card)

    @property
    def estimator(self):
        return self.payload().estimator

    @property
    def ranking(self) -> Ranking | None:
        return self.payload().ranking

    def payload(self) -> TrainedModel:
        """The model as :func:`load_model` reads it now (read once)."""
        if self.loaded is None:
            loaded = model_from_payload(_read_payload(self.path), self.card, self.path)
            said = (self.feature_names, self.target, self.normaliser)
            if (loaded.feature_names, loaded.target, loaded.normaliser) != said:
                raise ModelError(
                    "the model's target or normaliser differs from its card's", path=self.path
                )
            self.loaded = loaded
        return self.loaded


def _card_info(card: dict) -> dict:
    """What a :class:`TrainedModel` keeps of its card besides its own fields."""
    return {k: v for k, v in card.items() if k not in ("features", "target", "normaliser")}


def check_versions(card: dict, path: str | Path) -> None:
    """Refuse a model written by another scikit-learn version than this one."""
    ours = metadata.version("scikit-learn")
    theirs = card["versions"].get("scikit-learn")
    if theirs != ours:
        raise ModelError(
            f"trained with scikit-learn {theirs}, this is {ours}: fitted estimators do not "
            f"carry across versions; install scikit-learn=={theirs} or retrain (werest train)",
            path=path,
        )


def model_from_payload(payload, card: dict, path: str | Path) -> TrainedModel:
    """The :class:`TrainedModel` in a loaded payload, checked against its card."""
    if not isinstance(payload, dict) or not {"estimator", "feature_names"} <= set(payload):
        raise ModelError("not a werest model file (save_model writes them)", path=path)
    if payload.get("feature_names") != card["features"]:
        raise ModelError("the model's features differ from its card's", path=path)
    check_trees(payload["estimator"], len(card["features"]), path)
    ranking = Ranking(**payload["ranking"]) if payload.get("ranking") else None
    info = _card_info(card)
    return TrainedModel(
        estimator=payload["estimator"],
        feature_names=payload["feature_names"],
        target=payload.get("target", card["target"]),
        normaliser=payload.get("normaliser", card.get("normaliser", "whisper_english")),
        ranking=ranking,
        info=info,
    )


def default_model_path() -> Path:
    """The shipped default model, ``models/default.skops`` (:func:`werest.io.shipped`)."""
    return shipped("models") / "default.skops"


def load_models(
    model_path: str | Path | None = None,
    cer_model_path: str | Path | None = None,
    *,
    trust_model: bool = False,
    deferred: bool = False,
) -> Models:
    """The WER model (``model_path``: a file or a shipped model's name; default: the shipped
    ``default``) and an optional CER one; ``deferred``: their payloads read when first used
    (:func:`load_model`)."""
    checks = {"trust_model": trust_model, "deferred": deferred}
    return Models(
        load_model(model_path or default_model_path(), **checks),
        load_model(cer_model_path, **checks) if cer_model_path else None,
    )
