"""The leaderboard's neighbour tests: for each pair of neighbours in the estimated ranking, a
paired bootstrap of the utterances both systems transcribed and Cohen's d of their utterance
WERs (on the estimates, and on the truth where there are references), and the zero-label
verdict of the model's interval of differences (:func:`add_pair_intervals`).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from werest import logs
from werest.estimation.corpus import rate_sample
from werest.model.intervals import pair_interval
from werest.ranking.rows import UTT
from werest.stats import Bootstrap, cohens_d, paired_bootstrap


def neighbour_tests(
    board: pd.DataFrame, done: pd.DataFrame, scored: pd.DataFrame | None, boot: Bootstrap
) -> pd.DataFrame:
    """Paired bootstrap and Cohen's d for each pair of neighbours in the estimated ranking."""
    order = list(board["system"])
    rows = []
    neighbours = list(itertools.pairwise(order))
    for better, worse in logs.track(neighbours, desc="pairs (bootstrap)", unit="pair"):
        row = {"better": better, "worse": worse}
        row |= _paired(done, better, worse, "est", boot)
        if scored is not None:
            row |= _paired(scored, better, worse, "true", boot)
        rows.append(row)
    return pd.DataFrame(rows)


def add_pair_intervals(
    pairs: pd.DataFrame, per_dataset: pd.DataFrame, calibration: dict | None
) -> pd.DataFrame:
    """The zero-label verdict of each pair of neighbours: ``est_diff`` = the mean over the
    datasets both systems have of their estimates' difference, with the model's interval of
    differences (:func:`werest.model.intervals.pair_interval`, calibrated leave one domain
    out on differences) averaged over those datasets (``est_low``, ``est_high``: a model's
    error on one domain moves a system's datasets together), and ``est_verdict``, which names
    a better system only where that interval excludes 0. The paired bootstrap's p-value
    measures sampling noise alone and is never a verdict."""
    from werest.estimation.ppi import verdict

    pairs = pairs.copy()
    wide = per_dataset.pivot_table(index="dataset", columns="system", values="est_wer")
    diffs, lows, highs, verdicts = [], [], [], []
    for a, b in zip(pairs["better"], pairs["worse"], strict=True):
        both = wide[[a, b]].dropna() if {a, b} <= set(wide.columns) else wide.iloc[:0, :0]
        if both.empty:
            diffs.append(np.nan), lows.append(np.nan), highs.append(np.nan), verdicts.append("")
            continue
        delta = both[a] - both[b]
        low, high = pair_interval(delta, both[a], both[b], calibration)
        diffs.append(float(delta.mean()))
        lows.append(float(np.mean(low)))
        highs.append(float(np.mean(high)))
        finite = np.isfinite(lows[-1])
        verdicts.append(verdict(lows[-1], highs[-1]) if finite else "no calibration")
    pairs["est_diff"], pairs["est_low"], pairs["est_high"] = diffs, lows, highs
    pairs["est_verdict"] = verdicts
    return pairs


def _paired(frame: pd.DataFrame, a: str, b: str, kind: str, boot: Bootstrap) -> dict:
    """The test on the utterances both systems have, one shared resample per dataset, taken
    in the canonical utterance order (dataset, utterance hash)."""
    shared = (
        frame[frame["system"] == a]
        .merge(frame[frame["system"] == b], on=UTT, suffixes=("_a", "_b"))
        .sort_values(UTT, kind="stable")
    )
    samples_a, samples_b = [], []
    for _, g in shared.groupby("dataset"):
        samples_a.append(rate_sample(_side(g, "_a"), kind))
        samples_b.append(rate_sample(_side(g, "_b"), kind))
    result = paired_bootstrap(samples_a, samples_b, n_resamples=boot.n_resamples, seed=boot.seed)
    value = "predicted_wer" if kind == "est" else "wer"
    # A − B, as the delta: both negative where A's utterance WERs are lower
    d = cohens_d(shared[f"{value}_a"], shared[f"{value}_b"]) if len(shared) else float("nan")
    return {
        f"{kind}_shared": len(shared),
        f"{kind}_delta": result["delta"],
        f"{kind}_p_value": result["p_value"],
        f"{kind}_cohens_d": d,
    }


def _side(frame: pd.DataFrame, suffix: str) -> pd.DataFrame:
    columns = {c: c[: -len(suffix)] for c in frame.columns if c.endswith(suffix)}
    return frame[list(columns)].rename(columns=columns)
