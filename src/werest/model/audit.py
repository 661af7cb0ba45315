"""What a werest model file may hold, checked before anything of it is built.

A skops file is a zip of a JSON schema and ``.npy`` arrays; loading it builds only the types
its schema names. :func:`audit_model_file` reads that schema and refuses the file, in one line
naming the type, unless every type and every skops loader in it is in :data:`ALLOWED_TYPES` /
:data:`ALLOWED_LOADERS`; :func:`load_skops` then lets skops build it with those types trusted,
and :func:`check_trees` refuses fitted trees whose node indices point outside their arrays.
The model files and their cards: :mod:`werest.model.files`.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np

from werest.errors import WerestError
from werest.model.skops_import import own_trust_only, skops_io


class ModelError(WerestError):
    """A model file is missing, corrupt, or does not match its card or this installation."""


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


def load_skops(path: str | Path):
    """The object in an audited skops file, built by skops with only its allowed types
    trusted (skops refuses anything else it finds, e.g. a name it derives from the data)."""
    sio = skops_io()
    from skops.io.exceptions import UntrustedTypesFoundException

    data = current_names(Path(path).read_bytes())
    trusted = audit_model_file(path, data=data)
    try:
        with own_trust_only():  # every type it names is audited and passed
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
