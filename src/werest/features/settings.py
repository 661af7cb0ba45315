"""What the features stage declares for its users, in a module that imports nothing heavy (a
config, ``werest <command> --help`` and the commands' settings read it without pandas): the
names of the agreement and the Whisper likelihood features, the panel's size, and which
features compare a row with its proxy (:func:`relative_to_proxy`, which the guards and the
leaderboard read without the features)."""

from __future__ import annotations

#: at estimate time each target is compared with this many best-ranked others
#: (:class:`werest.features.agreement.Panel`)
PANEL_SIZE = 8

#: the target's error rates against the proxy
RATES: tuple[str, ...] = ("pwer", "pcer")
#: the target's and the proxy's lengths, in words and characters
LENGTHS: tuple[str, ...] = ("hyp_words", "proxy_words", "hyp_chars", "proxy_chars")
#: the S/D/I counts and hits behind pWER and pCER
COUNTS: tuple[str, ...] = (
    "pwer_sub",
    "pwer_del",
    "pwer_ins",
    "pwer_hits",
    "pcer_sub",
    "pcer_del",
    "pcer_ins",
    "pcer_hits",
)
#: the S/D/I rates: counts over the proxy's length
COUNT_RATES: tuple[str, ...] = (
    "pwer_sub_rate",
    "pwer_del_rate",
    "pwer_ins_rate",
    "pcer_sub_rate",
    "pcer_del_rate",
    "pcer_ins_rate",
)
#: the hallucination signals (:mod:`werest.features.hallucination`)
HALLUCINATION_FEATURES: tuple[str, ...] = ("rep_ngram_rate", "rep_ngram_excess", "script_mismatch")
PROXY_FEATURES: tuple[str, ...] = (*RATES, *LENGTHS, *COUNTS, *COUNT_RATES, *HALLUCINATION_FEATURES)
#: the errors each system's pairwise disagreements solve for (the target's, the proxy's)
TRIANGULATED: tuple[str, ...] = ("tri_wer", "tri_cer", "tri_wer_proxy")
#: what the other systems say: consensus, the proxy's own agreement, relative lengths
OTHERS: tuple[str, ...] = (
    "n_others",
    "pwer_mean",
    "pwer_min",
    "pwer_max",
    "pwer_median",
    "pcer_mean",
    "pcer_min",
    "proxy_pwer_others",
    "proxy_pcer_others",
    "est_ref_words",
    "len_ratio",
    "len_ratio_others",
    "proxy_len_ratio",
)
CONSENSUS_FEATURES: tuple[str, ...] = (
    "n_others",
    *TRIANGULATED,
    "utt_disagreement",
    *OTHERS[1:],
)
AGREEMENT_FEATURES: tuple[str, ...] = PROXY_FEATURES + CONSENSUS_FEATURES
#: werest's first design: the text features with absolute lengths and counts instead of
#: rates (``werest evaluate``'s ablation compares it)
TEXT_WITH_COUNTS: tuple[str, ...] = (
    *RATES,
    *LENGTHS,
    *(c for c in COUNTS if not c.endswith("_hits")),
    *OTHERS,
)

#: the Whisper likelihood's statistics of one (clip, text), in the order the scorer computes
#: and caches them (:class:`werest.features.scorer.TokenScores`)
STATS: tuple[str, ...] = (
    "wl_mean_logprob",
    "wl_min_logprob",
    "wl_low_share",
    "wl_expected_errors",
    "wl_tokens",
)
#: the row's likelihood minus its proxy's on the same audio
DIFFS: tuple[str, ...] = ("wl_mean_logprob_vs_proxy", "wl_expected_errors_vs_proxy")
#: agreement with the scorer's own transcript of the clip
DECODE: tuple[str, ...] = ("wl_decode_pwer", "wl_decode_pcer")
#: the row's mean token log-prob minus that of the scorer's own transcript of the clip
VS_DECODE: tuple[str, ...] = ("wl_mean_logprob_vs_decode",)
#: the scorer's language identification of the clip against the row's language
LANGUAGE: tuple[str, ...] = ("wl_language_prob", "wl_language_mismatch")
#: the Whisper likelihood features (``werest embed embedder=whisper_likelihood``,
#: :mod:`werest.features.likelihood`), and the columns it writes
LIKELIHOOD_FEATURES: tuple[str, ...] = (*STATS, *DIFFS, *DECODE, *VS_DECODE, *LANGUAGE)
LIKELIHOOD_COLUMNS: tuple[str, ...] = (*LIKELIHOOD_FEATURES, "wl_status")

#: an input column's difference from the proxy's on the same utterance (``<column>_vs_proxy``,
#: :mod:`werest.features.inputs`)
VS_PROXY = "_vs_proxy"
#: ``wl_attributed_<a>``: the agreement feature ``<a>`` times P(the row is the wrong side)
ATTRIBUTED = {"wl_attributed_pwer": "pwer", "wl_attributed_pcer": "pcer"}


def relative_to_proxy(name: str) -> bool:
    """Whether feature ``name`` compares the row with its proxy on the same audio
    (``<column>_vs_proxy`` or ``wl_attributed_*``): derived after the proxy is chosen, and
    what tells the two sides of a disagreement apart."""
    return name.endswith(VS_PROXY) or name in ATTRIBUTED
