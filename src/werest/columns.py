"""The transcripts table's columns: its key, an utterance's, the required ones and those read
as text or as numbers (the table itself, its reading and validation: :mod:`werest.ingest.table`).

A base module that imports nothing, so that a stage naming the columns (the features, the
text's scoring, the estimate) does not import the table's reader, and a change to the reader
does not reach them.
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
