"""The transcripts table's columns: its key, an utterance's, the required ones and those read
as text or as numbers (the table itself, its reading and validation: :mod:`werest.ingest.table`);
and the labelling sheet's (written by :mod:`werest.estimation.sampling`, read back by
:mod:`werest.estimation.sheets`).

A base module that imports nothing, so that a stage naming the columns (the features, the
text's scoring, the estimate, the label loop's draws) does not import the table's or the
sheet's reader, and a change to a reader does not reach them.
"""

from __future__ import annotations

#: the transcripts table's key (a list, so ``frame[KEY]`` selects the columns), and an utterance's
KEY: list[str] = ["dataset", "utt_id", "system"]
UTTERANCE: list[str] = ["dataset", "utt_id"]
REQUIRED: tuple[str, ...] = (*KEY, "hypothesis")
TEXT_COLUMNS: tuple[str, ...] = (
    *REQUIRED, "reference", "audio", "speaker", "language", "detected_language",
)  # fmt: skip
NUMERIC_COLUMNS: tuple[str, ...] = (
    "duration", "processing_seconds", "detected_language_probability",
)  # fmt: skip

#: the labelling sheet's columns, in order
SHEET_COLUMNS: list[str] = [
    *UTTERANCE,
    "audio",
    "duration",
    "reference",
    "strategy",
    "draws",
    "expected_draws",
    "inclusion_probability",
    "selection_probability",
    "n_utterances",
    "budget",
    "stratum",
    "uniform_share",
    "leader",
    "rivals",
    "sheet",
    "draw_order",
]

#: joins the indices of an utterance's draws in a sheet's ``draw_order`` column
ORDER_SEPARATOR = "|"
