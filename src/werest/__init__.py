"""werest: label-free estimation of ASR word and character error rates.

The Python API (:mod:`werest.api`)::

    import werest

    result = werest.estimate(table, model=werest.load_model(), targets=["my-asr"])
    result.summary, result.utterances          # DataFrames
    werest.score(table)                        # true corpus WER/CER where labelled
    draw = werest.sample(table, 20)            # the label loop: the next sheet to fill
    werest.decide(table, [sheet0, sheet1])     # which system is best, from the sheets
    werest.leaderboard(table).board            # every system ranked label-free
    werest.write_leaderboard(board, "out/")    # its CSVs, report, chart and web page
    werest.text.wer("the cat sat", "the cat sat down")

``werest.estimate`` and ``werest.leaderboard`` are :func:`werest.api.estimate` and
:func:`werest.api.leaderboard` (the stages themselves live in :mod:`werest.estimation` and
:mod:`werest.report`). Everything is imported on first use, so ``import werest`` stays cheap.
"""

from __future__ import annotations

import importlib

from werest.errors import ConfigError, InputError, WerestError
from werest.version import __version__

_API = (
    "Estimates",
    "decide",
    "estimate",
    "leaderboard",
    "load_model",
    "sample",
    "score",
    "write_leaderboard",
)
_MODULES = ("text", "api")
#: the transcripts table's functions (werest.ingest.table imports pandas: on first use too)
_TABLE = ("read_table", "validate_table", "write_table")

__all__ = [
    "ConfigError",
    "Estimates",
    "InputError",
    "WerestError",
    "__version__",
    "decide",
    "estimate",
    "leaderboard",
    "load_model",
    "read_table",
    "sample",
    "score",
    "text",
    "validate_table",
    "write_leaderboard",
    "write_table",
]


def __getattr__(name: str):
    """The API's functions, the table's and the modules, imported on first use (PEP 562):
    ``import werest`` imports neither pandas nor numpy nor scikit-learn."""
    if name in _API:
        return getattr(importlib.import_module("werest.api"), name)
    if name in _TABLE:
        return getattr(importlib.import_module("werest.ingest.table"), name)
    if name in _MODULES:
        return importlib.import_module(f"werest.{name}")
    raise AttributeError(f"module 'werest' has no attribute {name!r}")
