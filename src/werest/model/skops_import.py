"""skops, imported cheaply: without torch and without listing the types it trusts by default
(:func:`skops_io`). :mod:`werest.model.audit` reads every werest model through it."""

from __future__ import annotations

import contextlib
import importlib.abc
import sys
from collections.abc import Iterator

import numpy as np


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
def own_trust_only() -> Iterator[None]:
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
