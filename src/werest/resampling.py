"""Corpus rates resampled: :class:`RateSample` (one dataset's utterances for a corpus rate
Σ numerator / Σ denominator), :func:`macro_bootstrap` (the percentile CI of a macro average of
such rates) and :func:`bootstrap_ci` (of one rate). numpy only and below :mod:`werest.stats`,
which re-exports them beside the leaderboard's other statistics, so that scoring a corpus
(:mod:`werest.text.scoring`) reads its intervals without the run's declared sections."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pandas as pd

_BATCH_INDICES = 4_000_000  # bound bootstrap memory: ~4M drawn indices at a time


@dataclass(frozen=True)
class RateSample:
    """One dataset's utterances for a corpus rate Σ numerator / Σ denominator."""

    numerator: np.ndarray
    denominator: np.ndarray

    def rate(self, index: np.ndarray | None = None) -> np.ndarray | float:
        """The rate on all utterances, or one rate per row of an index matrix."""
        if index is None:
            return float(self.numerator.sum() / self.denominator.sum())
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.numerator[index].sum(axis=1) / self.denominator[index].sum(axis=1)


#: inside :func:`shared_draws`: the last draws made (key -> batches), or None outside
_SHARED: dict | None = None


@contextmanager
def shared_draws() -> Iterator[None]:
    """While the block runs, :func:`index_draws` keeps its last draws (of at most twice
    ``_BATCH_INDICES`` indices): the bootstraps of a dataset's systems, one seed for all,
    draw the same index matrices, and drawing them again was a third of their time."""
    global _SHARED
    outer, _SHARED = _SHARED, {}
    try:
        yield
    finally:
        _SHARED = outer


def index_draws(samples: list[RateSample], n_resamples: int, seed: int):
    """Yield, batch by batch, one index matrix per dataset (rows = resamples)."""
    global _SHARED
    sizes = tuple(len(s.numerator) for s in samples)
    key = (sizes, n_resamples, seed)
    if _SHARED is not None and key in _SHARED:
        yield from _SHARED[key]
        return
    keep = _SHARED is not None and sum(sizes) * n_resamples <= 2 * _BATCH_INDICES
    rng = np.random.default_rng(seed)
    largest = max(sizes)
    batch = max(1, _BATCH_INDICES // max(1, largest * len(samples)))
    drawn = []
    for start in range(0, n_resamples, batch):
        size = min(batch, n_resamples - start)
        indices = [rng.integers(0, n, size=(size, n)) for n in sizes]
        if keep:
            drawn.append(indices)
        yield indices
    if keep and _SHARED is not None:
        _SHARED = {key: drawn}  # the last draws only: memory stays bounded


def macro_bootstrap(
    samples: list[RateSample],
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile CI of the mean over datasets of their corpus rates.

    Each dataset's utterances are resampled with replacement independently (datasets are the
    fixed strata of the design), each resample's rates are averaged over datasets.
    """
    samples = [s for s in samples if len(s.numerator)]
    if not samples or n_resamples < 1:
        return float("nan"), float("nan")
    macro = np.concatenate(
        [
            np.mean([s.rate(i) for s, i in zip(samples, idx, strict=True)], axis=0)
            for idx in index_draws(samples, n_resamples, seed)
        ]
    )
    tail = (1 - confidence) / 2 * 100
    low, high = np.nanpercentile(macro, [tail, 100 - tail])
    return float(low), float(high)


def bootstrap_ci(
    errors: np.ndarray | pd.Series,
    reference_length: np.ndarray | pd.Series,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap CI of one corpus rate Σ errors / Σ N, resampling utterances with
    replacement (so long utterances keep their weight): :func:`macro_bootstrap` of a single
    dataset. Seeded: the same inputs and seed give the same interval."""
    sample = RateSample(np.asarray(errors, dtype=float), np.asarray(reference_length, dtype=float))
    if sample.denominator.sum() <= 0:
        return float("nan"), float("nan")
    return macro_bootstrap([sample], n_resamples=n_resamples, seed=seed, confidence=confidence)
