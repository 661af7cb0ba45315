"""The stress copies of ``werest evaluate experiment=few_labels``: each dataset of enough
utterances copied with a heavy tail (:func:`stressed_frames`: loops and empty outputs on a
few utterances, many systems at once) and a long tail (:func:`tail_frames`: a few long
hallucinated utterances carrying a large share of the errors), which a small labelled sample
easily misses. Their domains are measured apart (:data:`STRESS_DOMAINS`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from werest.estimation.ppi_frames import DatasetFrame

#: The domain of the heavy-tail stress copies (:func:`stressed_frames`).
STRESS_DOMAIN = "heavy-tail stress"
#: A hallucination loop's insertions.
LOOP_WORDS = 100
#: Stress copies are made of datasets with at least this many utterances.
STRESS_MIN_UTTERANCES = 200


def stressed_frames(
    frames: dict[str, DatasetFrame], share: float, seed: int = 0
) -> dict[str, DatasetFrame]:
    """A heavy-tail stress copy of every dataset of at least :data:`STRESS_MIN_UTTERANCES`
    utterances (named ``<dataset>+stress``): on ``share`` of its utterances (the same ones for
    every such system, as silence or music makes many systems fail together) one system in
    four loops, :data:`LOOP_WORDS` insertions, and on another ``share`` one system in four
    returns nothing (every reference word deleted). Agreement sees both (a loop is as many
    insertions against a proxy that does not loop; an empty output deletes the proxy's
    words), so the predictions move as the truth does: ``LOOP_WORDS`` more predicted errors,
    and predicted errors equal to the predicted words. What the stress tests is the labelled
    sample: a draw of 50 misses utterances of a 3 % share with probability 0.97⁵⁰ ≈ 22 %."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, frame in frames.items():
        if frame.n < STRESS_MIN_UTTERANCES or len(frame.systems) < 2:
            continue
        count = max(1, round(share * frame.n))
        picked = rng.choice(frame.n, 2 * count, replace=False)
        loops, empty = picked[:count], picked[count:]
        systems = np.arange(len(frame.systems))
        looping, silent = systems % 4 == 0, systems % 4 == 1
        errors, pred = frame.errors.copy(), frame.pred_errors.copy()
        grid = np.ix_(loops, looping)
        errors[grid] += LOOP_WORDS
        pred[grid] += LOOP_WORDS
        grid = np.ix_(empty, silent)
        errors[grid] = frame.words[grid]
        pred[grid] = frame.pred_words[grid]
        pred = np.where(frame.present, pred, 0.0)
        out[f"{name}+stress"] = replace(
            frame, dataset=f"{name}+stress", errors=errors, pred_errors=pred
        )
    return out


#: The domain of the long-tail stress copies (:func:`tail_frames`).
TAIL_DOMAIN = "long-tail stress"
#: The stress domains: measured apart, never in the overall means.
STRESS_DOMAINS = (STRESS_DOMAIN, TAIL_DOMAIN)


def tail_frames(
    frames: dict[str, DatasetFrame], share: float, error_share: float, seed: int = 0
) -> dict[str, DatasetFrame]:
    """A long-tail stress copy of every dataset of at least :data:`STRESS_MIN_UTTERANCES`
    utterances (named ``<dataset>+tail``): ``share`` of its utterances (the same ones for
    every such system) are long hallucinated ones, on which one system in two (the even
    ones) makes so many extra errors that they carry ``error_share`` of its errors (2 % of
    the utterances, 30 % of the errors: issue 42). The extra errors are insertions (the
    reference words stay). Agreement sees them, but not all of them: each (utterance,
    system)'s prediction gains a share drawn uniformly in [0.5, 1] of its extra errors, so
    the tail is visible in the predictions and its residuals are large. A random draw of 50
    misses a 2 % tail with probability 0.98⁵⁰ ≈ 36 %."""
    rng = np.random.default_rng(seed + 1)
    out = {}
    for name, frame in frames.items():
        if frame.n < STRESS_MIN_UTTERANCES or len(frame.systems) < 2:
            continue
        count = max(1, round(share * frame.n))
        tail = rng.choice(frame.n, count, replace=False)
        hallucinating = np.arange(len(frame.systems)) % 2 == 0
        errors, pred = frame.errors.copy(), frame.pred_errors.copy()
        total = np.nansum(np.where(frame.present, frame.errors, 0.0), axis=0)
        extra = error_share * total / ((1 - error_share) * count)  # per tail utterance
        extra = np.where(hallucinating, np.maximum(extra, 1.0), 0.0)
        grid = np.ix_(tail, np.arange(len(frame.systems)))
        seen = rng.uniform(0.5, 1.0, size=(count, len(frame.systems)))
        errors[grid] += extra[None, :]
        pred[grid] += seen * extra[None, :]
        pred = np.where(frame.present, pred, 0.0)
        out[f"{name}+tail"] = replace(
            frame, dataset=f"{name}+tail", errors=errors, pred_errors=pred
        )
    return out
