"""Ingest: the transcripts table, the importers of real layouts, audio and recognisers."""
