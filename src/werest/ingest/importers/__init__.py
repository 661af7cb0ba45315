"""Importers: one module per real transcript layout, each ``load(paths, **options)``.

=========  ==========================================================================
format     layout
=========  ==========================================================================
dighr      dighr/audio_analysis ``en`` folders: per-system CSVs with references
thennal10  ``transcriptions/<lang>/<system>.txt`` (``N.mp3|text``) + ``samples/`` audio
sphinx     CMU Sphinx corpora (AN4): ``etc/*.transcription`` + ``.fileids`` -> references
           and audio, no system yet (an utterance table for ``werest transcribe``)
kaldi      Kaldi ``text`` files (``utt-id words...``), one per system
sclite     sclite ``.trn`` files (``words (utt-id)``), one per system
afrispeech AfriSpeech-200 ``results/`` CSVs: dev/test (clinical, general) and LibriSpeech
           test-clean, canonical system names across sets, demographics
mubench    mu-bench: ``manifest.json`` + ``submissions/raw/<system>/<locale>/<id>.txt``,
           per-utterance latency, one dataset per locale
svarah     Svarah ASR eval ``results/{comparisons,runs}/<run>/per_utterance.csv``: Indian
           English, each backend once (the largest comparison first), inference seconds
verli      verli ``results/transcripts/librispeech-<engine>.json.gz``: LibriSpeech test-clean
           hypotheses, references from ``reference=`` (dighr ``190423``), ``streaming=``
csv        generic: one CSV/TSV per system with id, reference and hypothesis columns
manifest   NeMo / Open ASR Leaderboard JSON Lines manifests (``audio_filepath``, ``text``,
           ``pred_text``), one file per system or ``pred_text_<system>`` fields
hf         Hugging Face ``datasets`` saved with ``save_to_disk`` (Arrow) or their Parquet
           files, with named (or guessed) id, reference and hypothesis columns
=========  ==========================================================================

``werest import FORMAT PATH... --out table.parquet [reference=PATH dataset=NAME system=NAME]``
(``csv``, ``manifest`` and ``hf`` also take ``id_column=``, ``reference_column=``,
``hypothesis_column=``, and ``manifest`` and ``hf`` ``hypothesis_columns=[a,b]``; ``verli``
``streaming=true``)
"""

from __future__ import annotations

import importlib
import logging
from pathlib import Path

import pandas as pd

from werest.columns import KEY
from werest.errors import ConfigError
from werest.ingest.table import validate_table

log = logging.getLogger("werest.ingest.importers")

FORMATS: tuple[str, ...] = (
    "dighr",
    "thennal10",
    "sphinx",
    "kaldi",
    "sclite",
    "afrispeech",
    "mubench",
    "svarah",
    "verli",
    "csv",
    "manifest",
    "hf",
)
#: settings of ``werest import`` passed to the importer (null included: ``reference_column=null``
#: means "no reference column"; for the other options null is the importers' default)
OPTIONS: tuple[str, ...] = (
    "reference",
    "dataset",
    "system",
    "id_column",
    "reference_column",
    "hypothesis_column",
    "hypothesis_columns",
    "streaming",
)


def import_table(fmt: str, paths: list[str | Path], **options: object) -> pd.DataFrame:
    """Import ``paths`` in layout ``fmt`` into one validated transcripts table."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown import format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if not paths:
        raise ConfigError("no paths given: werest import FORMAT PATH... --out FILE")
    module = importlib.import_module(f"werest.ingest.importers.{fmt}")
    frame = module.load([Path(p) for p in paths], **options)
    required = (*KEY, "hypothesis") if "system" in frame.columns else ("dataset", "utt_id")
    return validate_table(
        frame, source=f"{fmt} import of {', '.join(map(str, paths))}", required=required
    )


def summarise(table: pd.DataFrame) -> pd.DataFrame:
    """Rows per dataset and system (or per dataset for an utterance table)."""
    by = ["dataset", "system"] if "system" in table.columns else ["dataset"]
    summary = table.groupby(by, sort=True).size().rename("rows").reset_index()
    if "reference" in table.columns:
        labelled = table["reference"].notna().groupby([table[c] for c in by]).sum()
        summary["labelled"] = labelled.to_numpy()
    return summary
