"""Corpus rates resampled: :class:`RateSample` (one dataset's utterances for a corpus rate
Σ numerator / Σ denominator), :func:`macro_bootstrap` (the percentile CI of a macro average of
such rates) and :func:`bootstrap_ci` (of one rate). numpy only and below :mod:`werest.stats`,
which re-exports them beside the leaderboard's other statistics, so that scoring a corpus
(:mod:`werest.text.scoring`) reads its intervals without the run's declared sections."""

from __future__ import annotations

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


def index_draws(samples: list[RateSample], n_resamples: int, seed: int):
    """Yield, batch by batch, one index matrix per dataset (rows = resamples)."""
    rng = np.random.default_rng(seed)
    largest = max(len(s.numerator) for s in samples)
    batch = max(1, _BATCH_INDICES // max(1, largest * len(samples)))
    for start in range(0, n_resamples, batch):
        size = min(batch, n_resamples - start)
        yield [rng.integers(0, len(s.numerator), size=(size, len(s.numerator))) for s in samples]


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
