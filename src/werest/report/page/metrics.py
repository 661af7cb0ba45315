"""The Metrics tab: the definition of every number, as computed."""

from __future__ import annotations

import html
from collections.abc import Mapping

METRICS = [
    (
        "est. WER %",
        "Label-free corpus WER per dataset, Σ(pred·n̂)/Σn̂ over the system's "
        "utterances (pred = the model's predicted utterance WER, n̂ = estimated reference length), "
        "then the macro average over the datasets the system has (each dataset weighs the same).",
    ),
    (
        "datasets, est. WER % (all datasets)",
        "datasets: how many of the table's datasets a system was run on. When some system "
        "lacks a dataset, the ranking follows each system's macro over every dataset "
        "(common ground): a cell it lacks is filled by a least-squares fit of "
        "log(WER + 0.5 points) = dataset effect + system effect on the cells that exist; "
        "'filled cells' counts them. Systems linked to no other through shared datasets keep "
        "their own macro. The own-datasets column is the plain macro over the datasets it has.",
    ),
    (
        "dataset columns",
        "One column per dataset (the Open ASR Leaderboard's layout): the system's estimated "
        "corpus WER % on it; — where it was not run on it. Hover a cell for its utterances and "
        "true WER.",
    ),
    (
        "95% interval",
        "The interval to read: per dataset, the conformal interval calibrated on the model's "
        "own errors on domains it never saw (as werest estimate gives it), and per system the "
        "mean of its datasets' bounds, never narrower than the sampling CI. With labels "
        "(labels=), the prediction-powered interval instead. It is about the macro over the "
        "system's own datasets.",
    ),
    (
        "sampling CI",
        "Percentile bootstrap of the macro average: each dataset's utterances resampled "
        "on their own, {n_resamples} resamples, confidence {confidence}. Sampling noise only: "
        "it does not include the model's error, so it is too narrow to hold the true WER.",
    ),
    (
        "true WER %",
        "Σ word errors / Σ reference words per dataset (Levenshtein alignment after "
        "the normaliser), macro-averaged like the estimate (over all datasets, filled the same "
        "way, on common ground); utterances with an empty reference are left out. Only where "
        "the input has references.",
    ),
    ("true 95% CI", "The same bootstrap on true errors."),
    ("rank / true rank", "Position by estimated / by true macro WER (ties share the best rank)."),
    (
        "Spearman ρ, Kendall τ",
        "Rank correlation between estimated and true macro WER over the systems.",
    ),
    (
        "RTFx",
        "Inverse real-time factor: Σ audio seconds / Σ processing seconds over the "
        "utterances with both (the Open ASR Leaderboard's definition). Processing seconds are "
        "processing_seconds from werest transcribe, or the round-trip latency_ms / 1000 of "
        "imported results (mu-bench).",
    ),
    (
        "Pareto front",
        "The systems no other system beats on both speed and accuracy: none is at least as "
        "fast (RTFx) and at least as accurate (estimated macro WER), and better on one.",
    ),
    (
        "latency p50 / p95 / mean s",
        "Median, 95th percentile and mean of the per-utterance processing (or round-trip) seconds.",
    ),
    (
        "RTF≤1 %",
        "Share of timed utterances processed at least as fast as real time: "
        "seconds / duration ≤ 1.",
    ),
    ("utt/s", "Throughput: timed utterances / Σ processing seconds (sequential processing)."),
    (
        "mean utt. WER / CER %",
        "The mean of the per-utterance WER (estimated: the model's prediction; true: from the "
        "reference) or CER, all the system's datasets pooled; unlike the corpus WER each "
        "utterance weighs the same.",
    ),
    (
        "overall fairness score",
        "0–100. Per category (gender, age, accent): raw_g = 100·(1 − (WER_g − min)/(max − min)) "
        "over the model-predicted group WERs (100 for every group when they are equal), the "
        "category score Σ_g p_g·raw_g (p_g = the group's share), multiplied by p/α when the "
        "test of the group effect gives p < α = {alpha}; then the weighted mean over the "
        "categories. A clearly significant disparity (tiny p) drives it towards 0.",
    ),
    (
        "FAAS est / true",
        "Fairness-adjusted ASR score, 10·log10(overall fairness score / WER), the WER as a "
        "fraction (the system's corpus WER over the audited utterances), averaged over the "
        "system's audited datasets; est uses estimated error counts pred·n̂ and lengths n̂, "
        "true uses the references. Higher = fairer and more accurate; +10 = ten times the "
        "ratio. It is not bounded: a fair system (score 100) at 20 % WER has 10·log10(500) ≈ "
        "27, and it falls below 0 whenever the overall score is below the WER fraction, e.g. "
        "score 0.001 at 20 % WER gives 10·log10(0.005) ≈ −23 (a significant disparity whose "
        "penalty p/α took the score near 0). It is +∞ at WER 0 and −∞ at score 0.",
    ),
    (
        "group WER",
        "Poisson model of each utterance's error count, log link, offset log(words), "
        "the group as fixed effect: the group's rate standardised over the audited utterances. "
        "fairness.model=glm: a Poisson GLM, the group effect tested by a cluster-robust "
        "(speaker) Wald test, or a dispersion-scaled LRT without speakers; fairness.model=glmm "
        "(the published model): a Poisson GLMM with a random intercept per speaker, fitted by "
        "maximum likelihood (adaptive Gauss-Hermite quadrature), tested by the "
        "likelihood-ratio test. The Fairness tab names the test each audit used.",
    ),
    (
        "group effect (fairness chart)",
        "100·(group WER / the system's WER − 1) in each audited (dataset, system): +20 % = a "
        "fifth more errors than that system's average there. The chart shows its median over "
        "the audits and, as the bar, the middle half of them (25th–75th percentile): how "
        "consistently systems treat the group, not a confidence interval.",
    ),
    (
        "paired test p",
        "Share of {n_resamples} paired bootstrap resamples (same utterances for "
        "A and B) in which A's WER is not lower than B's: the one-sided p-value of 'A is better'.",
    ),
    ("Δ pts", "A − B in WER points on the utterances both transcribed."),
    (
        "Cohen's d",
        "A − B: the difference of utterance WER means over the pooled SD, with the sign of Δ "
        "(negative = A lower).",
    ),
    (
        "LID accuracy",
        "Share of utterances whose detected language equals the true language (codes "
        "normalised: lower case, primary subtag, Whisper tokens and English names mapped to "
        "ISO 639-1), per true language and overall; the confusion matrix counts utterances by "
        "(true, detected). Selective accuracy at threshold t: accuracy among utterances whose "
        "detection confidence is ≥ t; coverage: the share of them.",
    ),
]


def metrics_tab(context: Mapping[str, object]) -> str:
    values = {"n_resamples": "1000", "confidence": "0.95", "alpha": "0.05"}
    values |= {k: str(v) for k, v in context.items()}
    items = "".join(
        f"<dt>{html.escape(name)}</dt><dd>{html.escape(text.format(**values))}</dd>"
        for name, text in METRICS
    )
    return f"<dl>{items}</dl>"
