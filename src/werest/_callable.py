"""Modules that can be called: ``werest.estimate(table, ...)`` and ``werest.leaderboard(...)``.

The package attribute ``werest.estimate`` is the module of that stage (the import system binds
it on every first import, so a function of that name in ``werest/__init__.py`` would be
replaced), and the Python API promises ``werest.estimate(table, ...)``. The module's class is
swapped for one whose call runs the API function, looked up in :mod:`werest.api` only when
called, so the stage module does not import the API that imports it.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from types import ModuleType


class _CallableModule(ModuleType):
    """A stage's module that can also be called as its API function."""

    def __call__(self, *args, **kwargs):
        return self._api_function()(*args, **kwargs)

    def _api_function(self):
        return getattr(importlib.import_module("werest.api"), self.__api_name__)

    @property
    def __signature__(self) -> inspect.Signature:
        return inspect.signature(self._api_function())


def make_callable(module_name: str, api_name: str) -> None:
    """Let ``werest.<module>(...)`` call :mod:`werest.api`'s ``api_name``; the module keeps
    its name and attributes."""
    module = sys.modules[module_name]
    module.__class__ = _CallableModule
    module.__api_name__ = api_name
