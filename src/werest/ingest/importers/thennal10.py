"""thennal10/asr-metric-evaluation: read sentences in English, Arabic and Malayalam.

Layout: ``transcriptions/<lang>/<system>.txt`` with ``N.mp3|text`` lines (``ground.txt`` is
the reference) and ``samples/<lang>/N.mp3`` audio. One dataset per language
(``thennal10-en`` ...), with a ``language`` column; the utterance id is ``N`` and ``audio`` the
absolute path of ``samples/<lang>/N.mp3``. A path may be the root, its ``transcriptions``
folder or one language folder.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from werest.errors import InputError
from werest.ingest.importers._common import require_path, system_rows, text_lines

REFERENCE_FILE = "ground.txt"


def load(paths: list[Path], **_: object) -> pd.DataFrame:
    """Import every language folder found under each path."""
    frames = []
    for path in paths:
        require_path(path, folder=True)
        for language_dir in _language_dirs(path):
            frames.append(load_language(language_dir))
    return pd.concat(frames, ignore_index=True, sort=False)


def _language_dirs(path: Path) -> list[Path]:
    if (path / REFERENCE_FILE).exists():
        return [path]
    root = path / "transcriptions" if (path / "transcriptions").is_dir() else path
    found = sorted(p for p in root.iterdir() if (p / REFERENCE_FILE).exists())
    if not found:
        raise InputError(f"no <language>/{REFERENCE_FILE} folders found", path=path)
    return found


def read_pipe_file(path: Path) -> pd.DataFrame:
    """``N.mp3|text`` lines into (utt_id, file, text)."""
    rows = []
    for number, line in text_lines(path, "a 'N.mp3|text' line"):
        name, sep, text = line.partition("|")
        if not sep or not name.strip():
            raise InputError(f"expected 'file|text', got {line[:60]!r}", path=path, row=number)
        rows.append((Path(name.strip()).stem, name.strip(), " ".join(text.split())))
    frame = pd.DataFrame(rows, columns=["utt_id", "file", "text"])
    if frame["utt_id"].duplicated().any():
        utt = frame.loc[frame["utt_id"].duplicated(), "utt_id"].iloc[0]
        raise InputError(f"utterance {utt!r} appears twice", path=path)
    return frame


def load_language(language_dir: Path) -> pd.DataFrame:
    """All systems of one language folder."""
    language = language_dir.name
    references = read_pipe_file(language_dir / REFERENCE_FILE)
    samples = language_dir.parent.parent / "samples" / language
    audio = {row.utt_id: str((samples / row.file).resolve()) for row in references.itertuples()}
    frames = []
    for system_file in sorted(language_dir.glob("*.txt")):
        if system_file.name == REFERENCE_FILE:
            continue
        rows = system_rows(
            f"thennal10-{language}", system_file.stem, read_pipe_file(system_file), references
        )
        rows["audio"] = rows["utt_id"].map(audio)
        rows["language"] = language
        frames.append(rows)
    if not frames:
        raise InputError("no system transcripts beside ground.txt", path=language_dir)
    return pd.concat(frames, ignore_index=True)
