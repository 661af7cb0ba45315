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
:data:`ALLOWED_TYPES` / :data:`ALLOWED_LOADERS`: the scikit-learn, numpy and werest types a
werest model is made of. Nothing is imported or built before that check passes. Old pickle
models (``.joblib``) are never unpickled here; ``werest convert-model`` converts one you trust.

The sha256 in the card must still match (a corrupt, truncated or swapped file is refused
before it is opened; ``trust_model=True`` skips only that check, never the type check), and so
must the scikit-learn version: skops rebuilds estimators from their attributes, which are not
portable across scikit-learn versions any more than pickles are.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.abc
import io
import json
import logging
import platform
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

from werest.errors import ConfigError, WerestError
from werest.features.proxy import Ranking
from werest.io import atomic_path, json_default, shipped
from werest.text import Normaliser

log = logging.getLogger(__name__)

CARD_VERSION = 2
FORMAT = "skops"
SUFFIX = ".skops"
PACKAGES = ("werest", "scikit-learn", "numpy", "pandas", "scipy", "skops")

#: The skops loaders (node kinds) a werest model needs. Absent on purpose: FunctionNode,
#: PartialNode, MethodNode, OperatorFuncNode and ConstructorFromReduceNode, which call or
#: return functions named by the file.
ALLOWED_LOADERS = frozenset(
    {
        "DictNode",
        "ListNode",
        "TupleNode",
        "JsonNode",
        "TypeNode",
        "NdArrayNode",
        "DTypeNode",
        "ObjectNode",
        "TreeNode",
        "LossNode",
        "RandomStateNode",
        "RandomGeneratorNode",
    }
)

_REGRESSION_LOSSES = ("HalfSquaredError", "AbsoluteError", "PinballLoss", "HuberLoss")
_LOG_LOSSES = ("HalfPoissonLoss", "HalfGammaLoss")

#: Every type a werest model file may name: the estimators of ``conf/model/`` (the stack of
#: RF/GBM/HistGBM under a ridge, HistGBM alone, the linear ridge) with their fitted parts, the
#: numpy arrays and scalars they hold, and the plain containers of the card-like fields.
ALLOWED_TYPES = frozenset(
    {
        "builtins.dict",
        "builtins.list",
        "builtins.tuple",
        "builtins.str",
        "builtins.int",
        "builtins.float",
        "builtins.bool",
        "numpy.ndarray",
        "numpy.dtype",
        *(
            f"numpy.{name}"
            for name in (
                "float64",
                "float32",
                "int64",
                "int32",
                "int8",
                "uint64",
                "uint32",
                "uint8",
                "bool_",
            )
        ),
        "numpy.random.mtrand.RandomState",
        "numpy.random._generator.Generator",
        "werest.model.regressor.StackedWerRegressor",
        "werest.model.regressor.FillEmptyColumns",
        "werest.model.regressor.AnchoredWerRegressor",
        "sklearn.pipeline.Pipeline",
        "sklearn.impute._base.SimpleImputer",
        "sklearn.linear_model._ridge.Ridge",
        "sklearn.dummy.DummyRegressor",
        "sklearn.ensemble._forest.RandomForestRegressor",
        "sklearn.tree._classes.DecisionTreeRegressor",
        "sklearn.tree._tree.Tree",
        "sklearn.ensemble._gb.GradientBoostingRegressor",
        "sklearn.ensemble._hist_gradient_boosting.gradient_boosting.HistGradientBoostingRegressor",
        "sklearn.ensemble._hist_gradient_boosting.binning._BinMapper",
        "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
        "sklearn._loss.link.IdentityLink",
        "sklearn._loss.link.LogLink",
        "sklearn._loss.link.Interval",
        *(f"sklearn._loss.loss.{name}" for name in _REGRESSION_LOSSES + _LOG_LOSSES),
        *(f"sklearn._loss._loss.Cy{name}" for name in _REGRESSION_LOSSES + _LOG_LOSSES),
    }
)


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


def schema_types(schema) -> tuple[set[str], set[str]]:
    """The ``module.Class`` names and the loaders a skops schema names, at any depth.

    Every JSON object holding ``__module__`` and ``__class__`` counts, whatever key it sits
    under, so a type hidden in an unusual place is still listed (over-listing only refuses).
    """
    types: set[str] = set()
    loaders: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "__module__" in node or "__class__" in node or "__loader__" in node:
                types.add(f"{node.get('__module__')}.{node.get('__class__')}")
                loaders.add(str(node.get("__loader__")))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return types, loaders


#: modules that held werest's model types when older files were written: a file naming one
#: loads as if it named the current module (the bytes on disk, and so their sha256, unchanged)
LEGACY_MODULES = {"werest.regressor": "werest.model.regressor"}


def current_names(data: bytes) -> bytes:
    """A skops file's bytes with its schema naming werest's current modules
    (:data:`LEGACY_MODULES`); the same bytes when it names none of the old ones, or when it
    is not a readable zip (the audit then says why)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            schema = archive.read("schema.json").decode("utf-8")
            renamed = schema
            for old, new in LEGACY_MODULES.items():
                renamed = renamed.replace(f'"{old}"', f'"{new}"')
            if renamed == schema:
                return data
            out = io.BytesIO()
            with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as rewritten:
                for item in archive.infolist():
                    body = renamed.encode("utf-8") if item.filename == "schema.json" else None
                    rewritten.writestr(item, body if body is not None else archive.read(item))
            return out.getvalue()
    except (zipfile.BadZipFile, KeyError, OSError, ValueError, EOFError, UnicodeDecodeError):
        return data


def audit_model_file(
    path: str | Path, *, shown_as: str | Path | None = None, data: bytes | None = None
) -> list[str]:
    """Refuse a skops file naming any type or loader werest does not allow; nothing of it
    is imported or built. Returns the (allowed) types it names, sorted: what
    ``skops.io.load(trusted=...)`` may build, whose own audit is then a second check.

    Raises
    ------
    ModelError : not a readable skops file, or a type or loader outside the allow-lists
        (the message names the first few, sorted).
    """
    shown = shown_as if shown_as is not None else path
    try:
        source = io.BytesIO(data) if data is not None else path
        with zipfile.ZipFile(source) as archive:
            schema = json.loads(archive.read("schema.json"))
    except KeyError:
        raise ModelError(
            "not a skops model file: a zip archive without skops's schema.json (another "
            "format's archive, such as a PyTorch checkpoint or a .npz); werest models are "
            ".skops files with a .json card (werest train)",
            path=shown,
        ) from None
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, RecursionError) as error:
        message = " ".join(str(error).split())
        raise ModelError(
            f"cannot load the model: damaged skops file ({type(error).__name__}: {message})",
            path=shown,
        ) from None
    types, loaders = schema_types(schema)
    _refuse_unknown(sorted(types - ALLOWED_TYPES), "type", shown)
    _refuse_unknown(sorted(loaders - ALLOWED_LOADERS), "skops loader", shown)
    return sorted(types)


def skops_io():
    """:mod:`skops.io`, imported without torch and without listing its default trusted types.

    At import, skops lists the types it trusts by default: scikit-learn's estimators
    (``sklearn.utils.all_estimators``, which imports every scikit-learn package, about 0.6 s,
    array-api-compat's torch wrapper included: with torch installed, the ``sonar`` extra,
    another 1.4 s and 600 MB of resident memory, ``experiments/bench_systems.py``'s start-up)
    and the ufuncs of numpy and scipy (each found by a search of every loaded module: 0.3-0.8
    s in a werest run, which has loaded pandas, pyarrow and werest by then). No werest model
    holds any of them. So skops is first imported with those lists empty (and torch hidden,
    unless something has imported it already; afterwards ``import torch`` works as before),
    and the lists are then made lazy (:class:`_LazyNames`): skops's default trust is what it
    was for any other use of skops in the process, listed only if one reads it. A werest
    model is loaded with its own audited types trusted, not skops's defaults
    (:func:`load_skops`)."""
    if "skops.io" not in sys.modules:
        finders = [_Unlisted()]
        if "torch" not in sys.modules:
            finders.append(_Hidden("torch"))
        sys.meta_path[:0] = finders
        try:
            with _estimators_unlisted():
                import skops.io
        finally:
            for finder in finders:
                sys.meta_path.remove(finder)
            finders[0].restore()
        _lazy_default_trust()
    import skops.io

    return skops.io


@contextlib.contextmanager
def _estimators_unlisted() -> Iterator[None]:
    """``sklearn.utils.all_estimators`` returns nothing while the block runs."""
    import sklearn.utils

    listed = sklearn.utils.all_estimators
    sklearn.utils.all_estimators = lambda type_filter=None: []
    try:
        yield
    finally:
        sklearn.utils.all_estimators = listed


class _Unlisted(importlib.abc.MetaPathFinder):
    """A finder under which ``skops.io._utils``, once executed, lists no public type
    (``get_public_type_names``: the ufuncs skops trusts) until :meth:`restore`."""

    name = "skops.io._utils"

    def __init__(self) -> None:
        self.module = self.listed = None

    def find_spec(self, name, path=None, target=None):
        if name != self.name:
            return None
        for finder in sys.meta_path:
            found = None if finder is self else getattr(finder, "find_spec", None)
            spec = found(name, path, target) if found is not None else None
            if spec is not None and spec.loader is not None:
                spec.loader = _Patching(spec.loader, self._unlist)
                return spec
        return None

    def _unlist(self, module) -> None:
        self.module, self.listed = module, module.get_public_type_names
        module.get_public_type_names = lambda module, oftype: []

    def restore(self) -> None:
        if self.module is not None:
            self.module.get_public_type_names = self.listed


class _Patching(importlib.abc.Loader):
    """A module's own loader, then ``patch(module)`` before anything imports from it."""

    def __init__(self, loader, patch) -> None:
        self.loader, self.patch = loader, patch

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        self.loader.exec_module(module)
        self.patch(module)

    def __getattr__(self, name: str):  # get_source, get_filename, ...: the module's loader's
        return getattr(self.loader, name)


def _estimator_names() -> list[str]:
    """skops's ``SKLEARN_ESTIMATOR_TYPE_NAMES``, listed as skops lists them (torch hidden,
    as in :func:`skops_io`)."""
    from sklearn.utils import all_estimators
    from skops.io._utils import get_type_name

    hidden = _Hidden("torch") if "torch" not in sys.modules else None
    if hidden is not None:
        sys.meta_path.insert(0, hidden)
    try:
        names = [get_type_name(estimator) for _, estimator in all_estimators()]
    finally:
        if hidden is not None:
            sys.meta_path.remove(hidden)
    return [name for name in names if name.startswith("sklearn.")]


def _scipy_ufunc_names() -> list[str]:
    """skops's ``SCIPY_UFUNC_TYPE_NAMES``, listed as skops lists them."""
    import warnings

    import scipy.special
    from skops.io._utils import get_public_type_names
    from skops.utils._fixes import get_scipy_ufunc_wrapper_type

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=DeprecationWarning)
        names = get_public_type_names(module=scipy.special, oftype=np.ufunc)
        wrapper = get_scipy_ufunc_wrapper_type()
        if wrapper is not None:
            wrapped = get_public_type_names(module=scipy.special, oftype=wrapper)
            names = sorted(set(names) | set(wrapped))
    return names


def _numpy_ufunc_names() -> list[str]:
    """skops's ``NUMPY_UFUNC_TYPE_NAMES``, listed as skops lists them."""
    from skops.io._utils import get_public_type_names

    return get_public_type_names(module=np, oftype=np.ufunc)


#: the default trusted types skops lists at import, and the modules that hold each list
_SKOPS_DEFAULTS = {
    "SKLEARN_ESTIMATOR_TYPE_NAMES": _estimator_names,
    "SCIPY_UFUNC_TYPE_NAMES": _scipy_ufunc_names,
    "NUMPY_UFUNC_TYPE_NAMES": _numpy_ufunc_names,
}
_SKOPS_TRUST_MODULES = ("skops.io._trusted_types", "skops.io._general")
_SKOPS_NAMES = "SKLEARN_ESTIMATOR_TYPE_NAMES"


def _lazy_default_trust() -> None:
    """Put a lazy :class:`_LazyNames` where skops keeps each (here empty) list."""
    for attribute, listing in _SKOPS_DEFAULTS.items():
        names = _LazyNames(listing)
        for module in _SKOPS_TRUST_MODULES:
            if hasattr(sys.modules.get(module), attribute):
                setattr(sys.modules[module], attribute, names)


class _LazyNames(list):
    """A list of type names skops trusts by default, listed (by ``listing``) the first time
    it is read."""

    def __init__(self, listing) -> None:
        super().__init__()
        self.listing = listing

    def _list(self) -> _LazyNames:
        if self.listing is not None:
            list.extend(self, self.listing())
            self.listing = None
        return self

    def __iter__(self):
        return list.__iter__(self._list())

    def __len__(self) -> int:
        return list.__len__(self._list())

    def __contains__(self, item) -> bool:
        return list.__contains__(self._list(), item)

    def __getitem__(self, index):
        return list.__getitem__(self._list(), index)

    def __add__(self, other):
        return list(self._list()) + list(other)

    def __radd__(self, other):
        return list(other) + list(self._list())

    def __eq__(self, other) -> bool:
        return list.__eq__(self._list(), other)

    __hash__ = None  # a list's

    def __repr__(self) -> str:
        return list.__repr__(self._list())


@contextlib.contextmanager
def _own_trust_only() -> Iterator[None]:
    """While the block runs, skops trusts no scikit-learn estimator by default: the caller
    passes every type it trusts (:func:`load_skops`: the audited types of the file), and
    the lazy list is not read."""
    general = sys.modules.get("skops.io._general")
    if general is None or not isinstance(getattr(general, _SKOPS_NAMES, None), _LazyNames):
        yield
        return
    names = getattr(general, _SKOPS_NAMES)
    setattr(general, _SKOPS_NAMES, [])
    try:
        yield
    finally:
        setattr(general, _SKOPS_NAMES, names)


class _Hidden(importlib.abc.MetaPathFinder):
    """A finder under which one top-level package (and its submodules) cannot be imported."""

    def __init__(self, package: str) -> None:
        self.package = package

    def find_spec(self, name, path=None, target=None):
        if name == self.package or name.startswith(self.package + "."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def load_skops(path: str | Path):
    """The object in an audited skops file, built by skops with only its allowed types
    trusted (skops refuses anything else it finds, e.g. a name it derives from the data)."""
    sio = skops_io()
    from skops.io.exceptions import UntrustedTypesFoundException

    data = current_names(Path(path).read_bytes())
    trusted = audit_model_file(path, data=data)
    try:
        with _own_trust_only():  # every type it names is audited and passed
            return sio.loads(data, trusted=trusted)
    except UntrustedTypesFoundException:
        found = set(sio.get_untrusted_types(data=data)) - set(trusted)
        _refuse_unknown(sorted(found) or ["(unnamed by skops)"], "type", path)
        raise  # pragma: no cover - _refuse_unknown raised
    except Exception as error:  # audited: what fails now is a damaged or odd file
        message = " ".join(str(error).split())
        raise ModelError(
            f"cannot load the model: {type(error).__name__}: {message}", path=path
        ) from None


def _refuse_unknown(names: list[str], what: str, path: str | Path) -> None:
    if not names:
        return
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    raise ModelError(
        f"refusing to load: the file holds {what}{'s' if len(names) > 1 else ''} {shown}, "
        "which no werest model is made of (nothing of it was run)",
        path=path,
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


def check_trees(estimator, n_features: int, path: str | Path) -> None:
    """Refuse fitted trees whose node indices point outside their arrays.

    scikit-learn's tree code (``Tree`` of RF/GBM, ``TreePredictor`` of HistGBM) follows the
    stored child and feature indices without bounds checks: a file with allowed types but
    crafted indices would read out of bounds or crash on ``predict``. Trees are built parent
    first, so every child index must lie after its parent's and inside the node array (which
    also rules out cycles), and every split feature inside the model's features. HistGBM
    categorical splits (which index further bitsets) never occur in werest's numeric models.
    """
    for tree in _fitted_trees(estimator):
        if not _tree_is_sound(tree, n_features):
            raise ModelError(
                f"refusing to load: a {type(tree).__name__} in the model has node or feature "
                "indices out of range (a damaged or crafted file)",
                path=path,
            )


def _fitted_trees(estimator):
    """Every sklearn ``Tree`` and HistGBM ``TreePredictor`` reachable from ``estimator``."""
    from sklearn.ensemble._hist_gradient_boosting.predictor import TreePredictor
    from sklearn.tree._tree import Tree

    seen: set[int] = set()
    stack = [estimator]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, Tree | TreePredictor):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
        elif isinstance(item, np.ndarray):
            if item.dtype == object:
                stack.extend(item.ravel())
        elif hasattr(item, "__dict__"):
            stack.extend(vars(item).values())


def _tree_is_sound(tree, n_features: int) -> bool:
    if hasattr(tree, "nodes"):  # HistGBM TreePredictor
        nodes = tree.nodes
        if nodes.ndim != 1 or len(nodes) == 0:
            return False
        left, right = nodes["left"].astype(np.int64), nodes["right"].astype(np.int64)
        feature, inner = nodes["feature_idx"].astype(np.int64), nodes["is_leaf"] == 0
        if nodes["is_categorical"][inner].any():
            return False
    else:  # sklearn.tree._tree.Tree; leaves have both children -1 (TREE_LEAF)
        left, right = np.asarray(tree.children_left), np.asarray(tree.children_right)
        feature = np.asarray(tree.feature)
        if not len(left) == len(right) == len(feature) == tree.node_count > 0:
            return False
        if np.asarray(tree.value).shape[0] != tree.node_count:
            return False
        inner = (left != -1) | (right != -1)
    ids = np.arange(len(left))[inner]
    left, right, feature = left[inner], right[inner], feature[inner]
    return bool(
        ((left > ids) & (left < len(inner)) & (right > ids) & (right < len(inner))).all()
        and ((feature >= 0) & (feature < n_features)).all()
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
