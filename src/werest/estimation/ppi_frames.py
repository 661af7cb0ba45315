"""The frames prediction-powered estimates draw from: every utterance of a dataset × its
systems, with the predictions and, where labelled, the truth (:class:`DatasetFrame`, built
from estimated rows by :func:`dataset_frames`), and the recalibration of the predictions on
the labels (:meth:`DatasetFrame.recalibrated_draws`, cross-fitted by utterance)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from werest.estimation.ppi import (
    DatasetDraws,
    population_sums,
    tail_mask,
)


@dataclass
class DatasetFrame:
    """Every utterance of one dataset (the N rows draws are made from) × its S systems.

    ``pred_errors``/``pred_words`` (N, S) are the predictions (0 where ``present`` is False:
    the system has no estimated row for the utterance); ``errors``/``words`` (N, S) the
    truth, NaN where the utterance has no label."""

    dataset: str
    utterances: pd.Index
    systems: list[str]
    pred_errors: np.ndarray
    pred_words: np.ndarray
    present: np.ndarray
    errors: np.ndarray
    words: np.ndarray

    @property
    def n(self) -> int:
        return len(self.utterances)

    def population(self) -> dict[str, np.ndarray]:
        """:attr:`DatasetDraws.pop` of every system."""
        return population_sums(self.pred_errors, self.pred_words)

    def truth(self) -> np.ndarray:
        """Each system's true corpus WER over its labelled rows (S,)."""
        errors = np.nansum(np.where(self.present, self.errors, 0), axis=0)
        return errors / np.nansum(np.where(self.present, self.words, 0), axis=0)

    def zero_label(self) -> np.ndarray:
        """Each system's zero-label corpus WER (S,): Σ ê / Σ r̂ over its rows."""
        pop = self.population()
        return pop["e"] / np.maximum(pop["r"], 1.0)

    def tail(self) -> np.ndarray:
        """(N, S) where the predictions are in the take-all tail (:func:`tail_mask`)."""
        return tail_mask(self.pred_errors, self.pred_words, self.present) & self.present

    def draws(
        self,
        rows: np.ndarray,
        weight: np.ndarray,
        pop: dict | None = None,
        tail: np.ndarray | None = None,
        prior: np.ndarray | None = None,
    ) -> DatasetDraws:
        """The draws of the utterances at positions ``rows`` (one per draw) with design
        weights ``weight``; a system counts a draw where it has an estimate and a label.
        ``tail``: (N, S) the take-all tail (default: :meth:`tail`); ``prior``: the zero-label
        estimates (default: :meth:`zero_label`)."""
        present = self.present[rows] & np.isfinite(self.errors[rows])
        tail = self.tail() if tail is None else tail
        return DatasetDraws(
            systems=self.systems,
            n_frame=self.n,
            weight=np.asarray(weight, dtype=float),
            errors=np.where(present, self.errors[rows], 0.0),
            words=np.where(present, self.words[rows], 0.0),
            pred_errors=np.where(present, self.pred_errors[rows], 0.0),
            pred_words=np.where(present, self.pred_words[rows], 0.0),
            present=present,
            pop=pop if pop is not None else self.population(),
            prior=self.zero_label() if prior is None else prior,
            tail=tail[rows] & present,
            pop_tail=population_sums(
                np.where(tail, self.pred_errors, 0.0), np.where(tail, self.pred_words, 0.0)
            ),
        )

    def recalibrated_draws(
        self,
        rows: np.ndarray,
        weight: np.ndarray,
        *,
        folds: int = 5,
        ridge: float = 10.0,
        seed: int = 0,
    ) -> DatasetDraws:
        """:meth:`draws` with the predicted errors refitted on the labelled draws themselves,
        cross-fitted (cross-prediction-powered inference: Zrnic & Candès, PNAS 2024).

        A ridge regression, pooled over the dataset's systems and weighted by the design,
        maps each (utterance, system)'s :func:`recalibration_features` to its true errors.
        The draws are split into ``folds`` by utterance; a labelled draw's prediction comes
        from the model fitted without its fold, an unlabelled utterance's is the mean of the
        fold models. This learns in the dataset what the zero-label model could not: the
        errors every system shares, which grow with the utterance's length and with how hard
        the systems find it; the estimate stays unbiased whatever the fit."""
        weight = np.asarray(weight, dtype=float)
        folds = max(folds, 2)
        features = recalibration_features(self)
        unique = np.unique(rows)
        assignment = np.random.default_rng(seed).permutation(len(unique)) % folds
        fold_of = assignment[np.searchsorted(unique, rows)]
        labelled = self.present[rows] & np.isfinite(self.errors[rows])
        target = np.nan_to_num(self.errors[rows])
        everyone = np.zeros(self.pred_errors.shape)
        own = np.zeros((len(rows), len(self.systems)))
        for fold in range(folds):
            train = fold_of != fold
            x = features[rows[train]][labelled[train]]
            y = target[train][labelled[train]]
            w = np.broadcast_to(weight[train][:, None], labelled[train].shape)[labelled[train]]
            coef = np.linalg.solve(
                (x * w[:, None]).T @ x + ridge * np.eye(x.shape[1]), (x * w[:, None]).T @ y
            )
            fitted = within_range(features, x, coef)
            everyone += fitted / folds
            own[~train] = fitted[rows[~train]]
        refit = replace(self, pred_errors=np.where(self.present, everyone, 0.0))
        draws = refit.draws(rows, weight, tail=self.tail(), prior=self.zero_label())
        draws.pred_errors = np.where(draws.present, own, 0.0)
        return draws


def within_range(features: np.ndarray, seen: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """The refit's prediction ``features @ coef`` with every feature clipped to the range of
    the rows the fit saw (``seen``), plus the predicted errors beyond that range as they are
    (slope 1): a ridge fitted on draws without a hallucination loop must not extrapolate to
    one. Agreement sees a loop's insertions and its raw count stays; the loop's share of the
    mean over systems (feature 2) is clipped, so it does not leak into the other systems'
    predictions. The rule depends on the labels only through the fold's own training rows,
    so the cross-fitted estimate stays unbiased."""
    if not len(seen):
        return features[..., 0]
    low, high = seen.min(axis=0), seen.max(axis=0)
    clipped = np.clip(features, low, high)
    return clipped @ coef + (features[..., 0] - clipped[..., 0])


def recalibration_features(frame: DatasetFrame) -> np.ndarray:
    """(N, S, 5) per utterance and system: its predicted errors and words, their means over
    the utterance's systems (how hard the utterance is for everyone, how long it is), and 1."""
    present = frame.present
    count = np.maximum(present.sum(axis=1, keepdims=True), 1)
    ones = np.ones(frame.pred_errors.shape)
    mean_errors = np.where(present, frame.pred_errors, 0).sum(axis=1, keepdims=True) / count
    mean_words = np.where(present, frame.pred_words, 0).sum(axis=1, keepdims=True) / count
    return np.stack(
        [frame.pred_errors, frame.pred_words, mean_errors * ones, mean_words * ones, ones],
        axis=-1,
    )


#: The columns :func:`dataset_frames` reads.
FRAME_COLUMNS = ("dataset", "utt_id", "system", "pred_errors", "pred_words", "errors", "words")


def dataset_frames(rows: pd.DataFrame) -> dict[str, DatasetFrame]:
    """One :class:`DatasetFrame` per dataset from long rows (:data:`FRAME_COLUMNS`: one per
    estimated target row; ``errors``/``words`` NaN where unlabelled)."""
    frames = {}
    for dataset, group in rows.groupby("dataset", sort=True):
        wide = group.pivot_table(
            index="utt_id",
            columns="system",
            values=["pred_errors", "pred_words", "errors", "words"],
            aggfunc="first",
            dropna=False,
        )
        systems = sorted(group["system"].unique())
        pred_errors = wide["pred_errors"].reindex(columns=systems).to_numpy(dtype=float)
        present = np.isfinite(pred_errors)
        frames[str(dataset)] = DatasetFrame(
            dataset=str(dataset),
            utterances=wide.index,
            systems=systems,
            pred_errors=np.nan_to_num(pred_errors),
            pred_words=np.nan_to_num(
                wide["pred_words"].reindex(columns=systems).to_numpy(dtype=float)
            ),
            present=present,
            errors=wide["errors"].reindex(columns=systems).to_numpy(dtype=float),
            words=wide["words"].reindex(columns=systems).to_numpy(dtype=float),
        )
    return frames
