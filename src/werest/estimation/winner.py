"""Which system is best: a zero-label shortlist, then a decision from the fewest labels.

Agreement cannot tell an outlier winner from an outlier loser, so with no label werest names
*contenders* (:func:`~werest.estimation.shortlist.shortlist`): the systems that may be the best,
by a rule calibrated leave one domain out (``werest evaluate experiment=winner``). Labels
then decide, and the design does most of the work (docs/winner.md):

* One reference scores every system, so differences are paired: per utterance,
  x_i = e_A,i − e_B,i (word errors, or characters where the dataset is scored by character).
* |x_i| ≤ d_i(A, B), the edit distance between the two hypotheses (the triangle inequality),
  known without a label. Where A and B agree the difference is exactly 0.
* ``werest sample strategy=winner`` draws utterances with replacement with probability
  q_i = u/N + (1 − u) s_i / Σ s, s_i the largest distance of the current leader to an open
  contender (each pair's distances scaled to mean 1). A draw's Horvitz–Thompson term
  x_i / (N q_i) is unbiased for the mean difference and bounded by max_i d_i / (N q_i),
  which the design keeps small; every weight 1 / (N q_i) is at most 1 / u.
* A person looks after every batch, so every bound is a confidence sequence, valid at any
  stopping time and in finite samples (:mod:`werest.estimation.sequences`: by default the
  betting sequence of Waudby-Smith & Ramdas 2024, its bets sized by each draw's known range).
  Draws made uniformly from the utterances not yet labelled (``strategy=random``) use the
  exact conditional mean of sampling without replacement. Every bound also stays inside what
  is known without a label: the labelled differences exactly, ±d_i on the rest
  (:func:`known_ranges`), so an utterance no draw has reached is never assumed small.

The decision (:func:`decide`), at level 1 − α, is ε-good best-arm identification (LUCB,
Kalyanakrishnan et al. 2012), one-sided: the leader W is ``decided`` when every other system
is shown worse than W, and ``good`` when every other system is shown no better than W by more
than the margin (the larger of ``winner.margin`` points and ``winner.relative_margin`` of W's
WER). Each round it reports ``regret_bound``, the largest upper bound on (e_W − e_B) over the
rivals: W is at most that much worse than the best. The α of each bound is a weighted
Bonferroni split over the claims a stop can make (:func:`pair_alpha`): for each system that
may be the true best, its bounds against every possible leader share α, the more of it the
higher the zero-label order ranks that leader. So a stop names a system more than the margin
worse than the true best, and a ``regret_bound`` is exceeded, with probability at most α,
however the user stops and whichever leader is read: the leader is the strongest
certificate of the three lowest estimates (:func:`decide`). The contenders only steer the
draws and the first leader.

The loop lives in one module per topic; this one gathers their public names:

* :mod:`werest.estimation.contest`: the systems, their hypotheses and pairwise distances;
* :mod:`werest.estimation.sequences`: the confidence sequences (pure functions on arrays);
* :mod:`werest.estimation.design`: how ``strategy=winner`` draws, and sheets as batches;
* :mod:`werest.estimation.decision`: the bounds, the status and the certificate;
* :mod:`werest.estimation.label_round`: a round of the loop over a table and its sheets;
* :mod:`werest.report.decision_text`: the console's lines (not re-exported: a later floor).
"""

from __future__ import annotations

from werest.estimation import sequences
from werest.estimation.contest import (
    FRESH_UNIFORM,
    WITH_REPLACEMENT,
    Batch,
    Contest,
    build_contests,
    consensus_codes,
    error_matrix,
    normalised_hypotheses,
)
from werest.estimation.decision import (
    ASYMPTOTIC_CAVEAT,
    DECIDED,
    GOOD,
    LEADER_CANDIDATES,
    UNDECIDED,
    Decision,
    PairTerms,
    decide,
    known_ranges,
    labels_to_go,
    leader_of,
    leader_prior,
    pair_alpha,
    pair_bounds,
    pair_terms,
    point_differences,
    system_estimates,
)
from werest.estimation.design import (
    CRITICAL_SHARE,
    SETTLED_WEIGHT,
    draw_order,
    recorded_draws,
    sheet_batches,
    winner_probabilities,
    winner_scores,
)
from werest.estimation.label_round import (
    RoundContext,
    decision_entry,
    labelled_contests,
    mark_contenders,
    next_batch,
    winner_draw,
    winner_entries,
    winner_sheet,
    zero_label_entry,
    zero_label_estimates,
    zero_label_shortlist,
)
from werest.estimation.sequences import (
    HORIZON,
    TRUNCATION,
    asymptotic_bounds,
    asymptotic_half_widths,
    betting_lower_bounds,
    eb_lower_bounds,
)
from werest.estimation.settings import (
    ALPHA,
    BOUNDS,
    CONTROL,
    MARGIN,
    RELATIVE_MARGIN,
    WINNER_UNIFORM_SHARE,
    WinnerSettings,
)
from werest.estimation.shortlist import SHORTLIST_SHARE, shortlist

__all__ = [
    "ALPHA",
    "ASYMPTOTIC_CAVEAT",
    "BOUNDS",
    "CONTROL",
    "CRITICAL_SHARE",
    "DECIDED",
    "FRESH_UNIFORM",
    "GOOD",
    "HORIZON",
    "LEADER_CANDIDATES",
    "MARGIN",
    "RELATIVE_MARGIN",
    "SETTLED_WEIGHT",
    "SHORTLIST_SHARE",
    "TRUNCATION",
    "UNDECIDED",
    "WINNER_UNIFORM_SHARE",
    "WITH_REPLACEMENT",
    "Batch",
    "Contest",
    "Decision",
    "PairTerms",
    "RoundContext",
    "WinnerSettings",
    "asymptotic_bounds",
    "asymptotic_half_widths",
    "betting_lower_bounds",
    "build_contests",
    "consensus_codes",
    "decide",
    "decision_entry",
    "draw_order",
    "eb_lower_bounds",
    "error_matrix",
    "known_ranges",
    "labelled_contests",
    "labels_to_go",
    "leader_of",
    "leader_prior",
    "mark_contenders",
    "next_batch",
    "normalised_hypotheses",
    "pair_alpha",
    "pair_bounds",
    "pair_terms",
    "point_differences",
    "recorded_draws",
    "sequences",
    "sheet_batches",
    "shortlist",
    "system_estimates",
    "winner_draw",
    "winner_entries",
    "winner_probabilities",
    "winner_scores",
    "winner_sheet",
    "zero_label_entry",
    "zero_label_estimates",
    "zero_label_shortlist",
]
