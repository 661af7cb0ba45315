"""Intervals that hold on new domains: Mondrian conformal calibration of corpus estimates.

A bootstrap over utterances measures only sampling noise: on a new domain the model's own
error is far larger (issue 10: a ±0.15-point CI held the truth for 0 of 7 systems). werest's
interval is split-conformal over *domains*: the signed score of a held-out (dataset, system)
cell is (WER − aWER) / (aWER + offset), errors growing with the estimate; its lower and upper
quantiles over the cells of leave-one-domain-out runs (each domain weighing the same: a new
domain is one draw) give the interval [aWER + q_low·(aWER + offset), aWER + q_high·(aWER +
offset)], floored at 0, never capped at 1 (insertions make a WER above 100 % real), and widened
to hold the bootstrap CI.

The quantiles are *Mondrian*: computed separately in bins of the estimate (``bins``: edges on
aWER). Agreement's blind spot, the errors every system shares, is small where systems agree at
a low WER (read LibriSpeech) and large where they all do badly (phone calls, accented speech),
so one quantile for all would give a 2 % estimate the width a 50 % one needs. A bin holding
fewer than ``min_cells`` calibration cells uses every cell instead, and an
estimate above every calibration cell's (a looping system at 400 %) the widest quantiles of all
bins. Signed quantiles make the
interval asymmetric where the errors are: agreement misses shared errors, so the truth lies
more often above the estimate than below it. :func:`calibration_from_cells` computes the
calibration a trained model carries in its card (``werest train calibration=…``);
:func:`calibrated_interval` applies it (old cards with one symmetric ``quantile`` too).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from werest.model.settings import ConformalInterval

DEFAULT_INTERVAL = ConformalInterval()
"""95 % coverage, offset 0.5, one bin (see the module docstring)."""


def signed_score(wer, awer, offset: float) -> np.ndarray:
    """(WER − aWER) / (aWER + offset): where the truth lies from the estimate, in its scale."""
    awer = np.asarray(awer, dtype=float)
    return (np.asarray(wer, dtype=float) - awer) / (awer + offset)


def conformal_interval(awer, q, offset: float, ci_low=None, ci_high=None):
    """aWER ± q·(aWER + offset) (q: one symmetric quantile, as old model cards hold it)."""
    q = np.asarray(q, dtype=float)
    return _interval(awer, -q, q, offset, ci_low, ci_high)


def _interval(awer, q_low, q_high, offset: float, ci_low=None, ci_high=None):
    """[aWER + q_low·s, aWER + q_high·s] with s = aWER + offset, floored at 0 (never capped
    above: a WER beyond 100 % is real), widened to hold the bootstrap CI."""
    awer = np.asarray(awer, dtype=float)
    scale = awer + offset
    low = np.clip(awer + np.asarray(q_low, dtype=float) * scale, 0, None)
    high = np.clip(awer + np.asarray(q_high, dtype=float) * scale, 0, None)
    if ci_low is not None:
        low = np.fmin(low, np.asarray(ci_low, dtype=float))
        high = np.fmax(high, np.asarray(ci_high, dtype=float))
    return low, high


def bin_of(awer, bins) -> np.ndarray:
    """The Mondrian bin of each estimate: 0 below the first edge, len(bins) from the last."""
    return np.searchsorted(
        np.asarray(list(bins), dtype=float), np.asarray(awer, dtype=float), "right"
    )


def calibrated_interval(awer, calibration: dict, ci_low=None, ci_high=None):
    """The interval of each estimate under a model card's ``calibration``: per-bin signed
    quantiles (:func:`calibration_from_cells`), or an old card's one symmetric ``quantile``."""
    if "quantile" in calibration:
        q = np.full(np.shape(awer), calibration["quantile"], dtype=float)
        return conformal_interval(awer, q, calibration["offset"], ci_low, ci_high)
    which = bin_of(awer, calibration.get("bins", ()))
    lows = np.asarray(calibration["low"], dtype=float)
    highs = np.asarray(calibration["high"], dtype=float)
    q_low, q_high = lows[which], highs[which]
    # beyond every calibration cell (a looping system at 400 %): the widest quantiles of all bins
    beyond = np.asarray(awer, dtype=float) > calibration.get("max_awer", np.inf)
    q_low, q_high = np.where(beyond, lows.min(), q_low), np.where(beyond, highs.max(), q_high)
    return _interval(awer, q_low, q_high, calibration["offset"], ci_low, ci_high)


def domain_weights(domains: pd.Series) -> np.ndarray:
    """1 / (cells of the domain): every domain weighs the same in a quantile."""
    counts = domains.map(domains.value_counts())
    return (1.0 / counts).to_numpy(dtype=float)


def weighted_quantile(values: np.ndarray, weights: np.ndarray, level: float) -> float:
    """The smallest value whose weighted share of values at or below it reaches ``level``,
    with the finite-sample correction of split conformal prediction (level·(n+1)/n)."""
    if len(values) == 0:
        return float("nan")
    order = np.argsort(values)
    values, weights = values[order], weights[order]
    share = np.cumsum(weights) / weights.sum()
    target = min(1.0, level * (len(values) + 1) / len(values))
    return float(values[min(np.searchsorted(share, target - 1e-12), len(values) - 1)])


def calibration_from_cells(
    cells: pd.DataFrame, interval: ConformalInterval = DEFAULT_INTERVAL
) -> dict:
    """The calibration a model carries: per Mondrian bin of aWER, the weighted lower and upper
    quantiles of the signed score over LODO cells (``domain, wer, awer``), every domain
    weighing the same; a bin with fewer than ``interval.min_cells`` cells takes every cell's."""
    scores = signed_score(cells["wer"], cells["awer"], interval.offset)
    weights = domain_weights(cells["domain"])
    which = bin_of(cells["awer"], interval.bins)
    upper = (1 + interval.level) / 2
    lows, highs, counts = [], [], []
    for index in range(len(interval.bins) + 1):
        member = which == index
        if member.sum() < interval.min_cells:
            member = np.ones(len(scores), dtype=bool)
        values, w = scores[member], weights[member]
        lows.append(-weighted_quantile(-values, w, upper))
        highs.append(weighted_quantile(values, w, upper))
        counts.append(int((which == index).sum()))
    return {
        "method": "Mondrian conformal (bins of aWER), leave-one-domain-out residuals",
        "level": interval.level,
        "offset": interval.offset,
        "bins": list(interval.bins),
        "low": lows,
        "high": highs,
        "bin_cells": counts,
        "max_awer": float(cells["awer"].max()),
        "cells": len(cells),
        "domains": sorted(cells["domain"].unique()),
        "pair": pair_calibration(cells, interval.level),
    }


# --------------------------------------------------------------------------- differences

#: The pair interval's scale is aWER_A + aWER_B + PAIR_OFFSET (two perfect systems: 1 point).
PAIR_OFFSET = 0.01


def pair_scale(awer_a, awer_b, offset: float = PAIR_OFFSET) -> np.ndarray:
    """The scale of a difference's error: the two estimates' sum plus ``offset``. Two systems
    cannot differ by more than their distance, which is at most the sum of their WERs, and
    a model's error on one dataset moves both estimates together."""
    return np.asarray(awer_a, dtype=float) + np.asarray(awer_b, dtype=float) + offset


def cell_pairs(cells: pd.DataFrame) -> pd.DataFrame:
    """Every pair of systems of each dataset of LODO ``cells`` (``domain, dataset, system,
    wer, awer``), A before B by name: ``true_delta`` = WER_A − WER_B, ``est_delta`` =
    aWER_A − aWER_B, ``scale`` (:func:`pair_scale`) and ``score`` = |true − est| / scale."""
    columns = ["domain", "dataset", "system", "wer", "awer"]
    if not set(columns) <= set(cells.columns):  # cells without their systems: no pairs
        cells = pd.DataFrame(columns=columns)
    cells = cells[columns].dropna()
    pairs = cells.merge(cells, on=["domain", "dataset"], suffixes=("_a", "_b"))
    pairs = pairs[pairs["system_a"] < pairs["system_b"]].reset_index(drop=True)
    pairs["true_delta"] = pairs["wer_a"] - pairs["wer_b"]
    pairs["est_delta"] = pairs["awer_a"] - pairs["awer_b"]
    pairs["scale"] = pair_scale(pairs["awer_a"], pairs["awer_b"])
    pairs["score"] = (pairs["true_delta"] - pairs["est_delta"]).abs() / pairs["scale"]
    return pairs


def pair_calibration(cells: pd.DataFrame, level: float) -> dict:
    """The zero-label difference interval a model carries: the ``level`` quantile of the
    pairs' scores (:func:`cell_pairs`) over LODO cells, every domain weighing the same;
    ``quantile`` is NaN without a dataset of two systems."""
    pairs = cell_pairs(cells)
    weights = domain_weights(pairs["domain"]) if len(pairs) else np.array([])
    return {
        "method": "split conformal on differences, leave-one-domain-out residuals",
        "level": level,
        "offset": PAIR_OFFSET,
        "quantile": weighted_quantile(pairs["score"].to_numpy(), weights, level),
        "pairs": len(pairs),
    }


def pair_interval(delta, awer_a, awer_b, calibration: dict | None):
    """The zero-label interval of WER_A − WER_B: est_delta ± q·(aWER_A + aWER_B + offset) under
    a model's ``calibration`` (its ``pair`` entry); NaN bounds when the model carries none
    (a model trained before differences were calibrated)."""
    pair = (calibration or {}).get("pair") or {}
    q = float(pair.get("quantile", np.nan))
    half = q * pair_scale(awer_a, awer_b, pair.get("offset", PAIR_OFFSET))
    delta = np.asarray(delta, dtype=float)
    return delta - half, delta + half
