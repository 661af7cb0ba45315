"""The winner's contests kept by content in ``cache_dir``, for the label loop's next process.

Every ``werest sample strategy=winner`` and ``werest estimate labels=`` of the loop builds the
same contests from the same table (:func:`werest.estimation.contest.build_contests`: each
dataset's hypotheses normalised, pivoted to an utterance × system matrix of text codes) and
aligns the leader's hypotheses with every other system's (:meth:`werest.estimation.contest.
Contest.distance`). Both depend on the table's texts and the normaliser only, so they are
stored once, under a digest of those, and read back by the later processes:

``contests-<digest>/`` holds ``contests.json`` (per dataset: its systems, unit, mean length
and file number), and per dataset ``<i>-codes.npy`` (the N × S codes), ``<i>-utterances.
parquet``, ``<i>-texts.parquet`` and, as they are computed, ``<i>-<a>-<b>.npy`` (the distances
of systems a < b) and ``<i>-encoded.parquet`` (the texts as the alignments read them,
:func:`werest.text.encoded_texts`: every process of the loop aligns each system with the
consensus, and encoding the texts again was most of that). Arrays are read without pickle; a
folder or file that cannot be read is computed again, and one that cannot be written is left
out: a cache never fails a run.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

log = logging.getLogger(__name__)

#: the columns the contests are built from (those the table has)
COLUMNS = ("dataset", "utt_id", "system", "hypothesis", "language")
#: the stored layout: a new one is another folder
LAYOUT = "contests-1"


def contests_folder(cache_dir, table: pd.DataFrame, normaliser) -> Path:
    """Where the contests of ``table`` under ``normaliser`` are kept in ``cache_dir``."""
    from werest import __version__

    columns = [c for c in COLUMNS if c in table]
    digest = hashlib.sha256(
        pd.util.hash_pandas_object(table[columns], index=False).to_numpy().tobytes()
    )
    digest.update(f"{LAYOUT}|{__version__}|{normaliser}|{','.join(columns)}".encode())
    return Path(cache_dir) / f"contests-{digest.hexdigest()[:32]}"


def read_contests(folder: Path) -> list[dict] | None:
    """The stored contests' fields (``dataset, utterances, systems, codes, texts, unit,
    words``), in dataset order; None when there are none or they cannot be read."""
    try:
        listed = json.loads((folder / "contests.json").read_text(encoding="utf-8"))
        return [_read_one(folder, number, entry) for number, entry in enumerate(listed)]
    except (OSError, ValueError, KeyError, TypeError) as error:
        if (folder / "contests.json").exists():
            log.info("contests cache %s unreadable (%s): built again", folder, error)
        return None


def _read_one(folder: Path, number: int, entry: dict) -> dict:
    codes = np.load(folder / f"{number}-codes.npy", allow_pickle=False)
    utterances = pd.read_parquet(folder / f"{number}-utterances.parquet")["utt_id"]
    texts = pd.read_parquet(folder / f"{number}-texts.parquet")["text"]
    if codes.shape != (len(utterances), len(entry["systems"])):
        raise ValueError(f"{number}-codes.npy does not match its utterances and systems")
    return {
        "dataset": entry["dataset"],
        "utterances": pd.Index(utterances.astype(str)),
        "systems": list(entry["systems"]),
        "codes": codes,
        "texts": np.asarray(texts.tolist(), dtype=object),
        "unit": entry["unit"],
        "words": float(entry["words"]),
    }


def write_contests(folder: Path, contests: list) -> None:
    """Store ``contests`` (:class:`werest.estimation.contest.Contest` objects) in ``folder``,
    put in place whole."""
    from werest.io import unrecorded

    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=folder.parent))
    except OSError as error:
        log.info("contests not cached (%s)", error)
        return
    try:
        listed = []
        with unrecorded():  # a cache entry, not one of the command's outputs
            for number, contest in enumerate(contests):
                np.save(staging / f"{number}-codes.npy", contest.codes, allow_pickle=False)
                utterances = pd.DataFrame({"utt_id": contest.utterances.to_numpy()})
                utterances.to_parquet(staging / f"{number}-utterances.parquet")
                texts = pd.DataFrame({"text": pd.Series(contest.texts.tolist(), dtype="str")})
                texts.to_parquet(staging / f"{number}-texts.parquet")
                listed.append(
                    {
                        "dataset": contest.dataset,
                        "systems": list(contest.systems),
                        "unit": contest.unit,
                        "words": contest.words,
                    }
                )
            (staging / "contests.json").write_text(json.dumps(listed), encoding="utf-8")
        if folder.exists():  # one that could not be read
            shutil.rmtree(folder)
        staging.rename(folder)
    except (OSError, ValueError, TypeError) as error:  # pyarrow's errors are ValueErrors
        log.info("contests not cached (%s)", error)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def distance_file(folder: Path | None, number: int, pair: tuple[int, int]) -> Path | None:
    """The file of the distances of systems ``pair`` (a < b) of contest ``number``."""
    return None if folder is None else folder / f"{number}-{pair[0]}-{pair[1]}.npy"


def read_distances(path: Path | None, n: int) -> np.ndarray | None:
    """Stored distances (``n`` of them), or None."""
    if path is None or not path.exists():
        return None
    try:
        stored = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as error:
        log.info("distances %s unreadable (%s): computed again", path, error)
        return None
    return stored if stored.shape == (n,) and stored.dtype == np.float64 else None


def write_distances(path: Path | None, distances: np.ndarray) -> None:
    """Store ``distances`` at ``path`` (atomically; nothing when the folder is gone)."""
    if path is None or not path.parent.is_dir():
        return
    from werest.io import atomic_path, unrecorded

    try:
        with unrecorded(), atomic_path(path) as tmp, open(tmp, "wb") as handle:
            np.save(handle, distances, allow_pickle=False)
    except OSError as error:
        log.info("distances not cached (%s)", error)


def encoded(folder: Path | None, number: int, texts, unit: str) -> list:
    """Contest ``number``'s ``texts`` as :func:`werest.text.encoded_texts` encodes them in
    ``unit`` (``word``, or ``character``: its characters), read from ``folder`` when an
    earlier process stored them, else encoded and stored (one vocabulary for them all, as
    their distances need)."""
    from werest.text.counting import encoded_texts

    path = None if folder is None else folder / f"{number}-encoded.parquet"
    if path is not None and path.exists():
        try:
            stored = pd.read_parquet(path)["encoded"].tolist()
            if len(stored) == len(texts):
                return stored
        except (OSError, ValueError, KeyError) as error:  # pyarrow's errors are ValueErrors
            log.info("encoded texts %s unreadable (%s): encoded again", path, error)
    values = encoded_texts(list(texts), "char" if unit == "character" else "word")
    if path is not None and path.parent.is_dir():
        from werest.io import atomic_path, unrecorded

        try:
            with unrecorded(), atomic_path(path) as tmp:
                frame = pd.DataFrame({"encoded": pd.Series(values, dtype="str")})
                frame.to_parquet(tmp)
        except (OSError, ValueError) as error:
            log.info("encoded texts not cached (%s)", error)
    return values
