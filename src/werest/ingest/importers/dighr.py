"""dighr/audio_analysis English transcription benchmarks (``transcription_performance_test/en``).

One dataset per dated folder (``dighr-190515`` ...), systems from the per-system CSVs:

* the utterance id is the audio file's base name without extension, lower-cased (paths are
  absolute paths from the machine that ran the services, some end in a bare ``.``, one 190301
  file writes ``Sample-000000``);
* the reference is the ``actual``/``text`` column (``190423/actual.csv`` for LibriSpeech);
* ``word_error_rate`` in these files is 1 − WER and is ignored: werest recomputes WER;
* a blank transcript whose score cell is filled is an *empty* hypothesis (the service
  returned nothing: all deletions); a blank transcript with a blank score means the system
  was not run and gives no row (Watson in 190301; most UK/AU/IN rows in 181215);
* rows without a file name (the per-file summary rows at the end of some CSVs) are skipped;
  a repeated id with identical content (190331) is kept once;
* ``181215/google.csv`` holds four Google locale models, imported as distinct systems
  ``google`` (en-US), ``google-en-GB``, ``google-en-AU``, ``google-en-IN``; ``190301/google.csv``
  is the same file, of which only the US model (``google``) belongs to that comparison;
* 190301's per-system CSVs are used rather than ``combined.csv``, which lost 63 Google
  transcripts; its demographics (``up_votes, down_votes, age, gender, accent``) are joined
  from ``combined.csv`` as columns;
* ``190331/deepspeech.csv`` has no references and covers other utterances (cv ``sample-*``
  files) than the folder's 646: it is skipped with a warning; the folder's DeepSpeech run on
  those 646 is ``deepspeech2.csv`` (system ``deepspeech2``).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pandas as pd

from werest.errors import InputError
from werest.ingest.importers._common import require_path
from werest.ingest.reading import read_raw_csv as read_csv

log = logging.getLogger("werest.ingest.importers.dighr")

CORPUS = {
    "181215": "commonvoice-valid-dev",
    "190301": "commonvoice-valid-dev",
    "190331": "commonvoice-subset",
    "190423": "librispeech-test-clean",
    "190515": "commonvoice-test",
}
LOCALE_FOLDERS = {"181215"}
LOCALES = {
    "US": "google",
    "UK": "google-en-GB",
    "Australia": "google-en-AU",
    "India": "google-en-IN",
}
DEMOGRAPHICS = ["up_votes", "down_votes", "age", "gender", "accent"]
SYSTEM_NAMES = {"azur": "azure"}
_ID_COLUMNS = ("files", "paths", "filename", "path")
_REFERENCE_COLUMNS = ("actual", "text", "sentence")
_SKIP_FILES = {"combined.csv", "actual.csv"}


def load(paths: list[Path], **_: object) -> pd.DataFrame:
    """Import dighr folders: the ``en`` folder (all dated folders) or single dated folders."""
    frames = []
    for path in paths:
        require_path(path, folder=True)
        folders = sorted(p for p in path.iterdir() if p.is_dir() and any(p.glob("*.csv")))
        for folder in folders or [path]:
            frames.append(load_folder(folder))
    return pd.concat(frames, ignore_index=True, sort=False)


def utterance_id(path: str) -> str:
    """``/mnt/.../clips/ab12.mp3`` -> ``ab12``; ``./LibriSpeech/.../1089-134686-0000.`` too."""
    base = os.path.basename(path.strip().replace("\\", "/"))
    stem = base.rsplit(".", 1)[0] if "." in base else base
    return stem.lower()


def load_folder(folder: Path) -> pd.DataFrame:
    """All systems of one dated dighr folder as transcripts-table rows."""
    name = folder.name
    dataset = f"dighr-{name}"
    references = _folder_references(folder)
    frames = []
    for csv_path in sorted(folder.glob("*.csv")):
        if csv_path.name in _SKIP_FILES:
            continue
        frame = read_csv(csv_path)
        frames.extend(_system_frames(csv_path, frame, dataset, locales=name in LOCALE_FOLDERS))
    if not frames:
        raise InputError("no system CSVs found", path=folder)
    table = _repair_ids(pd.concat(frames, ignore_index=True), folder)
    table = _attach_references(table, references, folder)
    if (folder / "combined.csv").exists() and name == "190301":
        table = _attach_demographics(table, folder / "combined.csv")
    table.insert(3, "corpus", CORPUS.get(name, "unknown"))
    table["language"] = "en"
    log.info("%s: %d rows, systems %s", dataset, len(table), sorted(table["system"].unique()))
    return table


def _repair_ids(table: pd.DataFrame, folder: Path) -> pd.DataFrame:
    """Where one system's id on a row disagrees with the id every other system gives on that
    row (same leading row number, same reference), use theirs: a corrupted file name."""
    if table["system"].nunique() < 3:
        return table.drop(columns="_row")
    key = table["_row"].astype(str) + "\x00" + table["reference"]
    counts = table.groupby([key, table["utt_id"]]).size()
    top = counts.groupby(level=0).idxmax().map(lambda k: k[1])
    support = counts.groupby(level=0).max()
    total = counts.groupby(level=0).sum()
    majority = top[(support == total - 1) & (support >= 2)]
    fixed = key.map(majority)
    change = fixed.notna() & (fixed != table["utt_id"])
    if change.any():
        log.warning(
            "%s: %d file name(s) disagree with the other systems' on the same row; their ids used",
            folder,
            int(change.sum()),
        )
        table.loc[change, "utt_id"] = fixed[change]
    return table.drop(columns="_row")


def _folder_references(folder: Path) -> pd.Series | None:
    actual = folder / "actual.csv"
    if not actual.exists():
        return None
    frame = read_csv(actual)
    id_column = _pick(frame, _ID_COLUMNS, actual)
    ref_column = _pick(frame, _REFERENCE_COLUMNS, actual)
    frame = frame[frame[id_column].str.strip() != ""]
    return pd.Series(frame[ref_column].to_numpy(), index=frame[id_column].map(utterance_id))


def _pick(frame: pd.DataFrame, names: tuple[str, ...], path: Path) -> str:
    for name in names:
        if name in frame.columns:
            return name
    raise InputError(f"none of the columns {', '.join(names)} found", path=path)


def _hypothesis_columns(frame: pd.DataFrame, system: str, locales: bool) -> dict[str, str]:
    """{column: system name} of the transcript columns of one system CSV."""
    columns = [c for c in frame.columns if "transcription" in c]
    locale_columns = {
        c: LOCALES[c.split("transcription", 1)[1]]
        for c in columns
        if c.split("transcription", 1)[1] in LOCALES
    }
    if locale_columns:
        if locales:
            return locale_columns
        us = next(c for c, s in locale_columns.items() if s == "google")
        return {us: system}
    if len(columns) != 1:
        return {}
    return {columns[0]: system}


def _score_column(frame: pd.DataFrame, column: str) -> str | None:
    """The ``word_error_rate`` column that belongs to a transcript column, if any."""
    suffix = column.split("transcription", 1)[1]
    candidates = {
        "US": "word_error_rate",
        "UK": "word_error_rate_uk",
        "Australia": "word_error_rate_australia",
        "India": "word_error_rate_india",
    }
    if suffix in candidates and candidates[suffix] in frame.columns:
        return candidates[suffix]
    scores = [c for c in frame.columns if c.endswith("word_error_rate")]
    return scores[0] if len(scores) == 1 else None


def _system_frames(
    path: Path, frame: pd.DataFrame, dataset: str, *, locales: bool
) -> list[pd.DataFrame]:
    system = SYSTEM_NAMES.get(path.stem, path.stem)
    id_column = _pick(frame, _ID_COLUMNS, path)
    ref_column = next((c for c in _REFERENCE_COLUMNS if c in frame.columns), None)
    if ref_column is None:
        log.warning("%s: no reference column; skipped (unlabelled, no other system)", path)
        return []
    frame = frame[frame[id_column].str.strip() != ""]
    out = []
    for column, system_name in _hypothesis_columns(frame, system, locales).items():
        score = _score_column(frame, column)
        hypothesis = frame[column].str.strip()
        not_run = (hypothesis == "") & (frame[score].str.strip() == "" if score else False)
        rows = pd.DataFrame(
            {
                "dataset": dataset,
                "utt_id": frame[id_column].map(utterance_id).to_numpy(),
                "system": system_name,
                "hypothesis": hypothesis.to_numpy(),
                "reference": frame[ref_column].str.strip().to_numpy(),
                "_row": frame.iloc[:, 0].to_numpy(),
            }
        )[~not_run.to_numpy()]
        out.append(_drop_repeats(rows, path))
    if not out:
        raise InputError("no transcript column found", path=path)
    return out


def _drop_repeats(rows: pd.DataFrame, path: Path) -> pd.DataFrame:
    repeated = rows.duplicated(["utt_id"], keep="first")
    if not repeated.any():
        return rows
    identical = rows.duplicated(["utt_id", "hypothesis", "reference"], keep="first")
    if (repeated & ~identical).any():
        utt = rows.loc[repeated & ~identical, "utt_id"].iloc[0]
        raise InputError(f"utterance {utt!r} appears twice with different content", path=path)
    log.warning("%s: %d repeated row(s) kept once", path, int(repeated.sum()))
    return rows[~repeated]


def _attach_references(table: pd.DataFrame, references: pd.Series | None, folder: Path):
    if references is None:
        return table
    mapped = table["utt_id"].map(references)
    disagree = mapped.notna() & (mapped.str.strip() != table["reference"])
    if disagree.any():
        log.warning(
            "%s: %d row(s) whose reference differs from actual.csv; actual.csv used",
            folder,
            int(disagree.sum()),
        )
    table["reference"] = mapped.fillna(table["reference"]).str.strip()
    return table


def _attach_demographics(table: pd.DataFrame, combined: Path) -> pd.DataFrame:
    frame = read_csv(combined)
    id_column = _pick(frame, _ID_COLUMNS, combined)
    frame = frame[frame[id_column].str.strip() != ""]
    columns = [c for c in DEMOGRAPHICS if c in frame.columns]
    demographics = frame[columns].set_axis(frame[id_column].map(utterance_id))
    demographics = demographics.replace("", pd.NA)
    for column in ("up_votes", "down_votes"):
        if column in demographics:
            demographics[column] = pd.to_numeric(demographics[column]).astype("Int64")
    return table.join(demographics, on="utt_id")
