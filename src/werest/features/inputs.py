"""Features that come with the input, and their differences from the proxy's.

werest computes the agreement features from text. Others need the audio and arrive as columns
of the transcripts table, one value per (dataset, utt_id, system): SONAR ``similarity``
(``werest embed``), the Whisper likelihood ``wl_*`` (``werest embed
embedder=whisper_likelihood`` on the transcripts table). Such a column is proxy-independent,
so it is stored once per system row and a feature ``<column>_vs_proxy`` is derived here, after
the proxy is chosen: the row's value minus its proxy's on the same utterance. That difference
is what tells the two sides of a disagreement apart (pWER is one number seen from either
side), and deriving it here keeps it right whichever proxy train, evaluate or estimate picks.

The Whisper likelihood also says *how much* of the disagreement is the row's own:
``wl_attributed_pwer`` (and ``_pcer``) is pWER times the probability that the row, not its
proxy, is the wrong side, ``σ(T_proxy − T_row)`` with ``T`` a hypothesis's total token
log-probability under the audio (``wl_mean_logprob × wl_tokens``). That is the posterior of
"the row is wrong" when exactly one of the two is right and both are a priori equally likely:
a fixed formula, nothing fitted. Whisper's end-of-text probability is not part of ``T``
(CTranslate2's forced alignment does not score it), so a hypothesis that leaves words out is
favoured somewhat; an empty hypothesis has no ``T`` and the feature is NaN.

One function, :func:`join_input_features`, serves ``werest train``, ``evaluate`` and
``estimate`` alike.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from scipy.special import expit

from werest.columns import KEY, UTTERANCE
from werest.errors import ConfigError, InputError
from werest.features.agreement import (
    AGREEMENT_FEATURES,
    CONTEXT_FEATURES,
    Panel,
    add_dataset_context,
    agreement_features,
)
from werest.features.settings import ATTRIBUTED, VS_PROXY, relative_to_proxy
from werest.text.normalise import Normaliser

#: the input columns a hypothesis's total log-probability is made of
TOTAL_LOGPROB = ("wl_mean_logprob", "wl_tokens")
#: What werest computes from text (agreement and dataset context): never an input column.
COMPUTED: frozenset[str] = frozenset((*AGREEMENT_FEATURES, *CONTEXT_FEATURES))


def input_columns(feature_names: Iterable[str]) -> list[str]:
    """The table columns that features not computed from text need: the feature itself, or
    for ``<column>_vs_proxy`` the ``<column>`` it is derived from."""
    columns = []
    for name in feature_names:
        if name in COMPUTED:
            continue
        bases = TOTAL_LOGPROB if name in ATTRIBUTED else (name.removesuffix(VS_PROXY),)
        columns.extend(base for base in bases if base not in columns)
    return columns


def missing_input_error(missing: list[str], command: str) -> ConfigError:
    """The one-line error for features the input does not carry, with how to add them."""
    hints = []
    if any(m.startswith("wl_") for m in missing):
        hints.append("werest embed embedder=whisper_likelihood input=<transcripts>")
    if any(not m.startswith("wl_") for m in missing):
        hints.append("werest embed (SONAR similarity)")
    return ConfigError(
        f"the model needs feature(s) {', '.join(missing)} that {command} does not compute from "
        f"text and the input does not hold: add them with {' or '.join(hints)}, "
        "or use a text-only model"
    )


def require_inputs(feature_names: Iterable[str], table: pd.DataFrame, command: str) -> list[str]:
    """The features of ``feature_names`` that come with the input (not computed from text),
    in order; the one-line error of :func:`missing_input_error` when ``table`` lacks a column
    they need."""
    names = [name for name in feature_names if name not in COMPUTED]
    missing = [c for c in input_columns(names) if c not in table.columns]
    if missing:
        raise missing_input_error(missing, command)
    return names


def join_input_features(
    features: pd.DataFrame, table: pd.DataFrame, feature_names: Iterable[str]
) -> pd.DataFrame:
    """``features`` with the input-borne ``feature_names``: plain columns joined from
    ``table`` by key; ``<column>_vs_proxy`` the row's value minus its proxy's and
    ``wl_attributed_*`` (module docstring) from the row's and its proxy's total log-probability:
    NaN when either is missing, or when ``features`` has no ``proxy`` column. Base columns are
    kept."""
    names = [n for n in feature_names if n not in features.columns]
    if not names:
        return features
    bases = input_columns(names)
    values = table[[*KEY, *bases]].drop_duplicates(KEY)
    values = values.astype({"system": str}).astype(dict.fromkeys(bases, float))
    out = features.drop(columns=bases, errors="ignore").reset_index(drop=True)
    out = out.merge(values, on=KEY, how="left", validate="many_to_one")
    derived = [n for n in names if relative_to_proxy(n)]
    if derived and "proxy" not in out.columns:  # rows without a proxy: no difference
        out[derived] = float("nan")
    elif derived:
        proxy = values.rename(columns={"system": "proxy"})
        joined = out[[*UTTERANCE, "proxy"]].merge(proxy, on=[*UTTERANCE, "proxy"], how="left")
        if any(name in ATTRIBUTED for name in derived):  # P(the row is the wrong side)
            wrong = expit(_total_logprob(joined) - _total_logprob(out))
        for name in derived:
            if name in ATTRIBUTED:
                out[name] = out[ATTRIBUTED[name]].to_numpy(dtype=float) * wrong
            else:
                base = name.removesuffix(VS_PROXY)
                out[name] = out[base].to_numpy(dtype=float) - joined[base].to_numpy(dtype=float)
    return out


def _total_logprob(frame: pd.DataFrame) -> np.ndarray:
    """A hypothesis's total token log-probability (NaN for an empty one: no tokens)."""
    mean, tokens = (frame[c].to_numpy(dtype=float) for c in TOTAL_LOGPROB)
    return mean * tokens


def build_features(
    table: pd.DataFrame,
    proxies: pd.DataFrame,
    *,
    normaliser: Normaliser,
    input_features: Iterable[str] = (),
    context: bool = True,
    pairs: pd.DataFrame | None = None,
    n_jobs: int = 1,
    panel: Panel | None = None,
) -> pd.DataFrame:
    """The feature table of ``proxies``' target rows, built the same way for train, evaluate
    and estimate: the agreement features (:func:`werest.features.agreement.agreement_features`;
    ``panel``: compared with a bounded panel of systems, at estimate time),
    the dataset context (``context``: False for a chunk of a dataset, whose context needs all
    of it) and the ``input_features`` that come with the input, columns of ``table``
    (:func:`join_input_features`; :func:`with_feature_table` adds them from a feature table)."""
    features = agreement_features(
        table, proxies, normaliser=normaliser, n_jobs=n_jobs, pairs=pairs, panel=panel
    )
    if context:
        features = add_dataset_context(features)
    return join_input_features(features, table, input_features)


def with_feature_table(
    table: pd.DataFrame,
    feature_table: pd.DataFrame,
    feature_names: Iterable[str],
    *,
    source: object = None,
) -> pd.DataFrame:
    """``table`` (labelled transcripts) with the input-borne columns that ``feature_names``
    need, joined by key from ``feature_table`` (written by ``werest features`` and ``werest
    embed``): the hand-off that lets ``werest train`` and ``evaluate`` learn from features
    computed from the audio, such as SONAR ``similarity`` (``features=paper``/``full``).

    A row the feature table lacks gets NaN (its features are missing, as at estimate time);
    a needed column it lacks is a one-line InputError naming ``source`` and the column.
    """
    columns = input_columns(feature_names)
    missing = [c for c in columns if c not in feature_table.columns]
    if missing:
        hint = (
            "werest embed embedder=whisper_likelihood"
            if missing[0].startswith("wl_")
            else ("werest embed")
        )
        raise InputError(
            f"the feature table lacks {', '.join(missing)}, which the features need: add it "
            f"with {hint}",
            path=source,
            column=missing[0],
        )
    values = feature_table[[*KEY, *columns]].drop_duplicates(KEY)
    values = values.astype({"dataset": str, "utt_id": str, "system": str})
    out = table.drop(columns=columns, errors="ignore")
    return out.merge(values, on=KEY, how="left", validate="many_to_one")
