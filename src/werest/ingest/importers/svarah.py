"""Svarah ASR evaluation (github.com/Akshita-Garg/svarah-asr-eval): Indian-accented English.

A path is the checkout's root (holding ``results/``), its ``results`` folder, one of
``results/{comparisons,runs,gates,archive}``, one run or comparison folder (holding
``per_utterance.csv``) or ``per_utterance.csv`` files. Each ``per_utterance.csv`` has one row
per (``backend_id``, ``eval_id``) with columns ``status``, ``raw_reference``,
``raw_hypothesis``, ``normalized_reference``, ``normalized_hypothesis``, ``inference_seconds``,
``audio_seconds``, ``rtf``, ``error_category``, ``error_message``, ``attempts`` and the labels
``wer, hits, substitutions, deletions, insertions, reference_words``.

Rows: dataset ``svarah``, utt_id = ``eval_id`` (``svarah_test_0000``...), system =
``backend_id`` as the harness names it (``sarvam_saaras_v4``, ``crisp_v0823_parakeet_q4k``...),
hypothesis = ``raw_hypothesis``, reference = ``raw_reference`` (both as written: the
``normalized_*`` columns are the harness's own normaliser, not werest's), ``duration`` =
``audio_seconds``, ``processing_seconds`` = ``inference_seconds`` (the backend call's
wall-clock time: the table's timing column, which ``werest leaderboard`` turns into RTFx and
latency), ``error_category`` (null for a success), ``language`` = ``en`` and ``source_run``
(the folder the rows were taken from, e.g. ``comparisons/v0823-ten-system``).

Rules:

* **each backend once.** The same backend appears in several files (a comparison repeats its
  source runs; some runs were re-run). Files are taken in this order: for a folder,
  ``comparisons/*`` first, the one with the most backends first (ties by name), then
  ``runs/*`` in name order; paths in the order given. The first file that holds a backend
  gives all its rows; later files' rows of that backend are skipped (logged). On the shared
  copy this takes the ten backends of ``comparisons/v0823-ten-system`` and, from
  ``runs/baseline-3-models``, the two on-device models the comparison lacks
  (``voicerefine_parakeet_q4``, ``voicerefine_whisper_tiny_int8``): 12 systems x 200
  utterances. The comparison is preferred because it is the set the harness publishes (its
  ``comparison_manifest.json`` names the run each backend came from: the re-runs
  ``smallest-pulse-pro-paced-clean`` and ``whisper-medium-en-q4k-quiet-rerun``, not the
  earlier ``smallest-pulse-pro`` run with 37 rate-limit/network failures);
* not imported from a folder: ``archive/`` (``pre-v0823-baseline-3-models``, a byte-identical
  copy of ``runs/baseline-3-models``, kept upstream for provenance) and ``gates/`` (5-utterance
  smoke tests run before each full run: their backends are in the full runs, except
  ``controlled_whisper_tiny_q4_0``, a 5-utterance gate that would be a 13th system on 2.5 % of
  the set; ``whisper-tiny-q4k-5`` is empty). Named explicitly, their files are read like any
  other (a header-only file in a folder is skipped with a warning; named as a file, it is an
  error);
* a row whose ``status`` is not ``success`` returned nothing: an **empty** hypothesis (every
  reference word a deletion), not a missing row; its ``inference_seconds`` is blank (null
  ``processing_seconds``) and its blank ``audio_seconds`` is filled from the same utterance's
  other rows (audio length is a property of the utterance). A success with a blank
  ``raw_hypothesis`` is also an empty hypothesis (18 rows in the ten-system comparison);
* ``wer, hits, substitutions, deletions, insertions, reference_words`` (and ``rtf``,
  ``normalized_*``) are labels or derived from them, and are never read; ``from_cache``,
  ``attempts`` and ``error_message`` are not kept;
* the references of one utterance must agree across files; where they differ the first
  file's is used, with a warning (none differ in the shared copy, and all 200 agree with
  ``data/subset_manifest.json``).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from werest.errors import InputError
from werest.ingest.importers._common import agree_references, log_imported, require_path
from werest.ingest.reading import read_raw_csv

log = logging.getLogger("werest.ingest.importers.svarah")

DATASET = "svarah"
FILE = "per_utterance.csv"
SUCCESS = "success"
#: the result folders read when a root or ``results`` folder is given, in this order
COLLECTIONS = ("comparisons", "runs")
#: result folders deliberately left out of a root or ``results`` import (see the docstring)
SKIPPED = ("archive", "gates")
REQUIRED = ("backend_id", "eval_id", "status", "raw_reference", "raw_hypothesis")


def load(paths: list[Path], **_: object) -> pd.DataFrame:
    """Import Svarah result files: every backend once, first file first (module docstring)."""
    files: list[Path] = []
    for path in paths:
        require_path(path)
        files.extend(result_files(path))
    frames = [_read_file(path) for path in dict.fromkeys(files)]
    table = _first_file_per_backend(frames)
    table = _fill_durations(table)
    table = agree_references(table, source="svarah")
    log_imported(log, "svarah", table)
    return table


def result_files(path: Path) -> list[Path]:
    """The ``per_utterance.csv`` files a path stands for, in precedence order."""
    if path.is_file():
        return [path]
    if (path / FILE).is_file():
        return [path / FILE]
    results = path / "results" if (path / "results").is_dir() else path
    if any((results / name).is_dir() for name in COLLECTIONS):
        for name in SKIPPED:
            if (results / name).is_dir():
                log.info("%s: not imported (see werest.ingest.importers.svarah)", results / name)
        found = [f for name in COLLECTIONS for f in _collection(results / name)]
    else:
        found = _collection(path)  # one collection folder given (comparisons, runs, gates...)
    if not found:
        raise InputError(f"no <run>/{FILE} files found", path=path)
    return found


def _collection(folder: Path) -> list[Path]:
    """``<run>/per_utterance.csv`` under ``folder`` (comparisons by most backends, then name),
    without header-only files (a gate that never ran), which are skipped with a warning."""
    if not folder.is_dir():
        return []
    files = sorted(p / FILE for p in folder.iterdir() if (p / FILE).is_file())
    frames = {f: read_raw_csv(f) for f in files}
    empty = [f for f in files if frames[f].empty]
    if empty:
        log.warning("%s: no rows; skipped", ", ".join(map(str, empty)))
    files = [f for f in files if not frames[f].empty]
    if folder.name == "comparisons":
        backends = {f: frames[f].get("backend_id", pd.Series()).nunique() for f in files}
        files.sort(key=lambda f: (-backends[f], str(f)))
    return files


def _read_file(path: Path) -> pd.DataFrame:
    """One ``per_utterance.csv`` as table rows (every backend in it), checked."""
    frame = read_raw_csv(path)
    for column in REQUIRED:
        if column not in frame.columns:
            found = ", ".join(frame.columns)
            raise InputError(f"missing column (found: {found})", path=path, column=column)
    if frame.empty:
        raise InputError("the file has a header but no rows", path=path)
    for column in ("backend_id", "eval_id", "status"):
        blank = frame[column].str.strip() == ""
        if blank.any():
            raise InputError("empty value", path=path, row=_row(blank), column=column)
    _check_unique(frame, path)
    failed = frame["status"].str.strip() != SUCCESS
    rows = pd.DataFrame(
        {
            "dataset": DATASET,
            "utt_id": frame["eval_id"].str.strip(),
            "system": frame["backend_id"].str.strip(),
            "hypothesis": frame["raw_hypothesis"].where(~failed, ""),
            "reference": frame["raw_reference"],
            "duration": _seconds(frame, "audio_seconds", path),
            "processing_seconds": _seconds(frame, "inference_seconds", path),
            "language": "en",
        }
    )
    if "error_category" in frame.columns:
        category = frame["error_category"].str.strip()
        rows["error_category"] = category.where(category != "", None)
    rows["source_run"] = f"{path.parent.parent.name}/{path.parent.name}"
    if failed.any():
        log.info("%s: %d row(s) not successful: empty hypotheses", path, int(failed.sum()))
    rows.attrs["path"] = str(path)
    return rows


def _row(mask: pd.Series) -> int:
    """The 1-based CSV row (after the header) of the first True in ``mask``."""
    return int(mask.to_numpy().argmax()) + 1


def _seconds(frame: pd.DataFrame, column: str, path: Path) -> pd.Series:
    """A seconds column as float (blank or absent: null); InputError naming the row for
    text that is not a non-negative number."""
    if column not in frame.columns:
        return pd.Series(float("nan"), index=frame.index)
    text = frame[column].str.strip()
    numbers = pd.to_numeric(text.where(text != "", None), errors="coerce")
    bad = (numbers.isna() & (text != "")) | (numbers < 0)
    if bad.any():
        value = frame[column].iloc[_row(bad) - 1]
        raise InputError(
            f"expected seconds (a number >= 0), got {value!r:.40}",
            path=path,
            row=_row(bad),
            column=column,
        )
    return numbers.astype(float)


def _check_unique(frame: pd.DataFrame, path: Path) -> None:
    duplicated = frame.duplicated(["backend_id", "eval_id"])
    if duplicated.any():
        row = frame.loc[duplicated].iloc[0]
        raise InputError(
            f"backend {row['backend_id']!r} has utterance {row['eval_id']!r} twice",
            path=path,
            row=_row(duplicated),
            column="eval_id",
        )


def _first_file_per_backend(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Each backend's rows from the first file that holds it."""
    taken: dict[str, str] = {}
    keep = []
    for rows in frames:
        path = rows.attrs["path"]
        systems = list(dict.fromkeys(rows["system"]))
        repeated = [s for s in systems if s in taken]
        if repeated:
            log.info(
                "%s: %s skipped, taken from an earlier file (%s)",
                path,
                ", ".join(repeated),
                ", ".join(sorted({taken[s] for s in repeated})),
            )
        new = [s for s in systems if s not in taken]
        taken.update(dict.fromkeys(new, path))
        if new:
            keep.append(rows[rows["system"].isin(new)])
    return pd.concat(keep, ignore_index=True, sort=False)


def _fill_durations(table: pd.DataFrame) -> pd.DataFrame:
    """A blank ``audio_seconds`` (a failed row) takes the utterance's value from other rows."""
    known = table.groupby("utt_id")["duration"].transform("first")
    return table.assign(duration=table["duration"].fillna(known))
