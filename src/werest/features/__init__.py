"""Feature extraction: one row per (dataset, utt_id, target system), never the reference."""
