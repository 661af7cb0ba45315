"""CMU Sphinx corpora (AN4 layout): ``etc/<name>_<split>.transcription`` + ``.fileids``.

Transcription lines are ``[<s>] TEXT [</s>] (utt-id)``; fileids give each utterance's audio
path below ``wav/`` (``.sph``). The result is an *utterance table* (references and audio, no
system yet): ``dataset`` (``an4-test``, ``an4-train``), ``utt_id``, ``reference``, ``audio``,
``speaker`` (the fileid's folder), ``split``. ``werest transcribe`` adds systems to it.

A path is a corpus root holding ``etc/`` and ``wav/``, or one ``.transcription`` file (its
``.fileids`` sibling and ``../wav`` are used when present).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from werest.errors import InputError
from werest.ingest.importers._common import read_trailing_id_file, require_path, text_lines

log = logging.getLogger("werest.ingest.importers.sphinx")


def load(paths: list[Path], dataset: str | None = None, **_: object) -> pd.DataFrame:
    """Import every ``*.transcription`` of each corpus root (or the given files)."""
    frames = []
    for path in paths:
        require_path(path)
        files = sorted((path / "etc").glob("*.transcription")) if path.is_dir() else [path]
        if not files:
            raise InputError("no etc/*.transcription files found", path=path)
        frames.extend(load_transcription(f, dataset=dataset) for f in files)
    return pd.concat(frames, ignore_index=True, sort=False)


def load_transcription(path: Path, dataset: str | None = None) -> pd.DataFrame:
    """One transcription file (+ its fileids and audio) as utterance rows."""
    name, _, split = path.stem.rpartition("_")
    references = read_trailing_id_file(path)
    frame = pd.DataFrame(
        {
            "dataset": dataset or f"{name or path.stem}-{split}",
            "utt_id": references["utt_id"],
            "reference": references["text"],
            "split": split,
        }
    )
    fileids = path.with_suffix(".fileids")
    if fileids.exists():
        ids = [line.strip() for _, line in text_lines(fileids)]
        by_id = {Path(fileid).name: fileid for fileid in ids}
        wav = path.parent.parent / "wav"
        matched = frame["utt_id"].map(by_id)
        frame["audio"] = [
            str((wav / f"{f}.sph").resolve()) if isinstance(f, str) else None for f in matched
        ]
        frame["speaker"] = [Path(f).parent.name if isinstance(f, str) else None for f in matched]
        if matched.isna().any():
            log.warning("%s: %d utterance(s) not in %s", path, matched.isna().sum(), fileids)
    return frame
