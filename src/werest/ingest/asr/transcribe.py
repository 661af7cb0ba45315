"""``werest transcribe``: run an ASR system over audio and add its hypotheses to a table.

``werest transcribe input=PATH out=PATH [asr=pocketsphinx] [system=NAME] [dataset=NAME]
[limit=N]``

Input
    A table with an ``audio`` column: an *utterance table* (no ``system`` column, e.g. from
    ``werest import sphinx``) or a transcripts table (its utterances are the distinct
    ``(dataset, utt_id)``; ``dataset=`` keeps only that dataset, or list of datasets). Or a
    folder of audio files (``audio_suffixes``, searched recursively; ``utt_id`` is the file
    stem, ``dataset`` is ``dataset=`` or the folder's name). ``limit=N`` keeps the first N
    utterances (so a rerun with the same ``limit`` resumes the same set).

Output (``out``, any table format)
    The input transcripts table (none for an utterance table or a folder) plus one row per
    transcribed utterance of the new system: ``dataset, utt_id, system, hypothesis``, the
    utterance's other columns (``reference, audio, speaker``...), ``duration`` (seconds of
    decoded audio) and ``processing_seconds`` (the backend's wall-clock time for the clip: a
    batch's time shared equally by its clips; audio decoding and resampling excluded, as in
    the Open ASR Leaderboard). A backend with ``transcribe_detailed`` adds its own per-utterance
    columns (``asr=faster_whisper``: ``asr_avg_logprob``, ``asr_no_speech_prob``,
    ``asr_compression_ratio``, ``asr_words``, ``detected_language``,
    ``detected_language_probability``: the input for ``werest segmentation`` and the LID
    report of ``werest leaderboard``).

Beside it
    ``<out>.rtfx.json``: per system (one entry per system ever transcribed into ``out``)
    utterances, audio and processing seconds and RTFx = Σ audio seconds / Σ processing
    seconds, over all of the system's rows in ``out``, and ``resources``: CPU %, RSS mean and
    peak, peak memory (and GPU memory/utilisation where NVML exists) of the latest run
    (:mod:`werest.resources`); ``<out>.failed.csv``: utterances that
    got no hypothesis, with ``asr_status`` (``missing``, ``unreadable``, ``empty``,
    ``too_short``, ``silent``, ``no_audio``, ``asr_error``) and ``asr_message``;
    ``<out>.config.yaml``: the run's config.

Resuming
    Utterances the system already has a row for (in the input or in an existing ``out``) are
    skipped. New rows are written ``chunk_size`` utterances at a time, each write atomic, so
    an interrupted run keeps every finished chunk and never leaves a half-written file.
    Failed utterances have no row and are tried again on the next run.

On a cluster
    ``cluster=local`` or ``cluster.address=…``: each chunk is a task on a Dask worker
    (:func:`transcribe_chunk_on_worker`, :class:`ChunkJob` broadcast once); chunks come back
    in any order and are written as above in the input's order, so the table is the same.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from werest import logs
from werest.build import instantiate_once
from werest.columns import KEY, UTTERANCE
from werest.errors import ConfigError, InputError, WerestError
from werest.ingest.asr.base import SAMPLE_RATE, Transcriber
from werest.ingest.audio import AudioPolicy, LoadedAudio, load_audio
from werest.ingest.reading import read_raw_csv
from werest.ingest.table import read_table, validate_table, write_table
from werest.io import atomic_path, first_line

log = logging.getLogger(__name__)

PER_SYSTEM = ("system", "hypothesis", "processing_seconds")
LEADING = (*KEY, "hypothesis", "reference", "audio", "duration", "processing_seconds")
FAILURE_COLUMNS = [*KEY, "audio", "asr_status", "asr_message"]
AUDIO_SUFFIXES = ("wav", "flac", "mp3", "sph", "ogg")


# --------------------------------------------------------------------------- input


@dataclass
class Source:
    """What to transcribe: one row per utterance, and the transcripts table it came from."""

    utterances: pd.DataFrame
    transcripts: pd.DataFrame | None = None


def read_folder(
    folder: Path, dataset: str | None = None, suffixes: Sequence[str] = AUDIO_SUFFIXES
) -> pd.DataFrame:
    """Audio files below ``folder`` as utterances: ``dataset, utt_id`` (the stem), ``audio``."""
    wanted = {f".{s.lower().lstrip('.')}" for s in suffixes}
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in wanted)
    if not files:
        raise InputError(f"no audio files ({', '.join(sorted(wanted))}) found", path=folder)
    seen: dict[str, Path] = {}
    for path in files:
        if path.stem in seen:
            raise InputError(
                f"two files with utt_id {path.stem!r}: {seen[path.stem]} and {path}", path=folder
            )
        seen[path.stem] = path
    return pd.DataFrame(
        {
            "dataset": dataset or folder.resolve().name,
            "utt_id": [p.stem for p in files],
            "audio": [str(p.resolve()) for p in files],
        }
    )


def read_source(
    path: str | Path, suffixes: Sequence[str] = AUDIO_SUFFIXES, dataset: str | None = None
) -> Source:
    """The utterances to transcribe from a folder of audio (named ``dataset``) or a table."""
    path = Path(path)
    if path.is_dir():
        return Source(read_folder(path, dataset, suffixes))
    if not path.exists():
        raise InputError("no such file or folder", path=path)
    table = read_table(path, required=tuple(UTTERANCE))
    if "audio" not in table.columns:
        raise InputError("no audio paths to transcribe", path=path, column="audio")
    if "system" not in table.columns:  # an utterance table: read_table checked its keys
        utterances = table.drop(columns=[c for c in PER_SYSTEM if c in table.columns])
        return Source(utterances.reset_index(drop=True))
    if "hypothesis" not in table.columns:
        raise InputError("missing required column", path=path, column="hypothesis")
    keep = [c for c in table.columns if c not in PER_SYSTEM]
    utterances = table[keep].groupby(UTTERANCE, sort=False, as_index=False).first()
    return Source(utterances, table)


def select(
    utterances: pd.DataFrame, datasets: Sequence[str] | None, limit: int | None
) -> pd.DataFrame:
    """Keep the utterances of ``datasets`` (all when None), then the first ``limit``."""
    if datasets:
        known = set(utterances["dataset"])
        unknown = sorted(set(datasets) - known)
        if unknown:
            raise ConfigError(
                f"dataset={','.join(unknown)}: not in the input; it has {', '.join(sorted(known))}"
            )
        utterances = utterances[utterances["dataset"].isin(datasets)]
    if limit is not None:
        utterances = utterances.head(limit)
    return utterances.reset_index(drop=True)


def existing_rows(source: Source, out: Path) -> pd.DataFrame | None:
    """The rows the output starts from: the input transcripts, plus ``out``'s other rows."""
    frames = [source.transcripts] if source.transcripts is not None else []
    if out.exists():
        try:
            previous = read_table(out)
        except InputError as error:
            raise InputError(
                f"out exists and is not a transcripts table to resume ({error.message}): "
                "remove it or choose another out",
                path=out,
                row=error.row,
                column=error.column,
            ) from None
        log.info("%s exists: %d rows kept, finished utterances skipped", out, len(previous))
        frames.append(previous)
    if not frames:
        return None
    base = pd.concat(frames, ignore_index=True, sort=False)
    return base.drop_duplicates(KEY, keep="first").reset_index(drop=True)


def pending(utterances: pd.DataFrame, base: pd.DataFrame | None, system: str) -> pd.DataFrame:
    """The utterances ``system`` has no row for in ``base``."""
    if base is None or base.empty:
        return utterances
    done = base.loc[base["system"] == system, UTTERANCE]
    if done.empty:
        return utterances
    marker = utterances.merge(done.assign(_done=True), on=UTTERANCE, how="left")["_done"]
    return utterances[marker.isna().to_numpy()].reset_index(drop=True)


# --------------------------------------------------------------------------- transcribing


@dataclass
class ClipResult:
    """One clip's outcome: a transcript and its share of processing time, or a failure."""

    hypothesis: str | None
    seconds: float = float("nan")
    status: str = "ok"
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def recognise(
    transcriber: Transcriber,
    segments: Sequence[np.ndarray],
    languages: Sequence[str | None] | None = None,
) -> list[dict[str, Any]]:
    """Per segment ``{"hypothesis": text, ...}``: a backend with ``transcribe_detailed`` adds
    its own per-utterance columns (faster-whisper's confidences); others give the text only.
    A backend whose ``uses_languages`` is true gets each segment's language (the table's
    ``language`` column; None where it has none) as ``languages=``."""
    detailed = getattr(transcriber, "transcribe_detailed", None)
    if detailed is not None:
        if languages is not None and getattr(transcriber, "uses_languages", False):
            return [dict(d) for d in detailed(segments, languages=list(languages))]
        return [dict(d) for d in detailed(segments)]
    return [{"hypothesis": text} for text in transcriber.transcribe(segments)]


def merge_details(details: Sequence[dict[str, Any]], lengths: Sequence[int]) -> dict[str, Any]:
    """One clip's columns from its segments': numbers weighted by segment length, word lists
    (JSON ``[word, start, end, p]``) joined with each segment's start time added, text (the
    detected language) the longest segment's."""
    if len(details) == 1:
        return {k: v for k, v in details[0].items() if k != "hypothesis"}
    merged: dict[str, Any] = {}
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]) / SAMPLE_RATE
    for key in sorted({k for d in details for k in d} - {"hypothesis"}):
        values = [d.get(key) for d in details]
        if key == "asr_words":
            words = [
                [w[0], round(w[1] + off, 3), round(w[2] + off, 3), w[3]]
                for value, off in zip(values, offsets, strict=True)
                for w in json.loads(value or "[]")
            ]
            merged[key] = json.dumps(words)
        elif any(isinstance(v, str) for v in values):
            merged[key] = values[int(np.argmax(lengths))]
        else:
            numbers = np.array([np.nan if v is None else float(v) for v in values])
            ok = np.isfinite(numbers)
            weights = np.asarray(lengths, dtype=float)[ok]
            merged[key] = float(np.average(numbers[ok], weights=weights)) if ok.any() else np.nan
    return merged


def transcribe_clips(
    transcriber: Transcriber,
    clips: Sequence[LoadedAudio],
    languages: Sequence[str | None] | None = None,
) -> list[ClipResult]:
    """Transcribe usable clips in one backend call, timing it (split clips: segments joined).
    ``languages``: each clip's language from the table (see :func:`recognise`).

    If the call fails for a batch of several clips, each clip is retried alone, so one clip
    the backend cannot handle costs one row (status ``asr_error``).
    """
    segments = [segment for clip in clips for segment in clip.segments]
    segment_languages = None
    if languages is not None:
        segment_languages = [
            lang for clip, lang in zip(clips, languages, strict=True) for _ in clip.segments
        ]
    started = time.perf_counter()
    try:
        outputs = recognise(transcriber, segments, segment_languages)
    except WerestError:
        raise
    except Exception as error:
        if len(clips) > 1:
            return [
                result
                for index, clip in enumerate(clips)
                for result in transcribe_clips(
                    transcriber, [clip], None if languages is None else [languages[index]]
                )
            ]
        log.warning("%s: the ASR backend failed: %s", clips[0].path, first_line(error))
        return [ClipResult(None, status="asr_error", message=first_line(error))]
    elapsed = time.perf_counter() - started
    if len(outputs) != len(segments):
        raise ConfigError(
            f"asr: {transcriber!r} gave {len(outputs)} texts for {len(segments)} clips"
        )
    results, start = [], 0
    for clip in clips:
        count = len(clip.segments)
        parts = outputs[start : start + count]
        texts = [str(p.get("hypothesis") or "").strip() for p in parts]
        details = merge_details(parts, [len(s) for s in clip.segments])
        results.append(
            ClipResult(" ".join(t for t in texts if t), elapsed / len(clips), details=details)
        )
        start += count
    return results


def transcribe_chunk(
    chunk: pd.DataFrame, transcriber: Transcriber, policy: AudioPolicy
) -> tuple[list[ClipResult], list[float]]:
    """Load and transcribe a chunk of utterances; per row a result and the audio duration."""
    results: list[ClipResult | None] = [None] * len(chunk)
    durations = [float("nan")] * len(chunk)
    usable: list[tuple[int, LoadedAudio]] = []
    for position, path in enumerate(chunk["audio"]):
        if not isinstance(path, str) or not path.strip():
            results[position] = ClipResult(None, status="no_audio", message="no audio path")
            continue
        clip = load_audio(path, policy)
        durations[position] = clip.duration
        if clip.status.usable:
            usable.append((position, clip))
        else:
            results[position] = ClipResult(None, status=str(clip.status), message=clip.message)
    languages = None
    if "language" in chunk.columns:
        languages = [lang if isinstance(lang, str) and lang else None for lang in chunk["language"]]
    size = max(1, int(transcriber.batch_size))
    for start in range(0, len(usable), size):
        batch = usable[start : start + size]
        batch_languages = None if languages is None else [languages[p] for p, _ in batch]
        clips = [clip for _, clip in batch]
        for (position, _), result in zip(
            batch, transcribe_clips(transcriber, clips, batch_languages), strict=True
        ):
            results[position] = result
    return [r for r in results if r is not None], durations  # every position is set above


def rows_for(
    chunk: pd.DataFrame, results: list[ClipResult], durations: list[float], system: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The chunk's new transcripts rows and its failures."""
    ok = np.array([r.hypothesis is not None for r in results], dtype=bool)
    rows = chunk.loc[ok].copy()
    rows.insert(2, "system", system)
    rows.insert(3, "hypothesis", [r.hypothesis for r in results if r.hypothesis is not None])
    rows["duration"] = np.asarray(durations, dtype=float)[ok]
    rows["processing_seconds"] = [r.seconds for r in results if r.hypothesis is not None]
    details = pd.DataFrame([r.details for r in results if r.hypothesis is not None])
    for column in details.columns:
        rows[column] = details[column].to_numpy()
    failed = chunk.loc[~ok, [c for c in (*UTTERANCE, "audio") if c in chunk.columns]].copy()
    failed.insert(2, "system", system)
    failed["asr_status"] = [r.status for r in results if r.hypothesis is None]
    failed["asr_message"] = [r.message for r in results if r.hypothesis is None]
    return rows, failed.reindex(columns=FAILURE_COLUMNS)


def order_columns(table: pd.DataFrame) -> pd.DataFrame:
    """The key and the usual columns first, the rest in their order."""
    leading = [c for c in LEADING if c in table.columns]
    return table[leading + [c for c in table.columns if c not in leading]]


def merged(base: pd.DataFrame | None, new: list[pd.DataFrame]) -> pd.DataFrame:
    """``base`` plus the new rows, validated, in canonical column order."""
    frames = ([base] if base is not None else []) + [f for f in new if not f.empty]
    table = pd.concat(frames, ignore_index=True, sort=False) if frames else pd.DataFrame()
    return order_columns(validate_table(table, source="transcribe output"))


ChunkResult = tuple[list[ClipResult], list[float]]
#: chunks -> (the chunk's position, its :func:`transcribe_chunk` result), in any order
ChunkRunner = Callable[[list[pd.DataFrame]], Iterable[tuple[int, ChunkResult]]]


@dataclass(frozen=True)
class ChunkJob:
    """What every chunk task on a cluster needs, sent to each worker once: the backend's
    description (a plain mapping with ``_target_``) and the audio policy."""

    asr: dict[str, Any]
    policy: AudioPolicy


def transcribe_chunk_on_worker(chunk: pd.DataFrame, job: ChunkJob) -> ChunkResult:
    """:func:`transcribe_chunk` in a worker process, whose recogniser is built on its first
    chunk and kept for the next ones (:func:`werest.build.instantiate_once`)."""
    transcriber = instantiate_once(job.asr, Transcriber, "asr")
    return transcribe_chunk(chunk, transcriber, job.policy)


def in_this_process(transcriber: Transcriber, policy: AudioPolicy) -> ChunkRunner:
    """Chunks transcribed here, one after another as the caller asks for them (so each is
    written before the next starts)."""
    return lambda chunks: enumerate(transcribe_chunk(c, transcriber, policy) for c in chunks)


def transcribe_pending(
    todo: pd.DataFrame,
    transcriber: Transcriber,
    system: str,
    *,
    base: pd.DataFrame | None,
    out: Path,
    policy: AudioPolicy,
    chunk_size: int,
    run_chunks: ChunkRunner | None = None,
) -> tuple[pd.DataFrame | None, pd.DataFrame]:
    """Transcribe ``todo`` chunk by chunk, rewriting ``out`` atomically after each chunk.

    ``run_chunks`` transcribes the chunks elsewhere (a Dask cluster: ``werest transcribe
    cluster=``) and gives them back in any order; the table always holds the finished chunks
    in ``todo``'s order, so the output equals a run in this process, chunk by chunk.
    """
    chunks = [
        todo.iloc[start : start + chunk_size].reset_index(drop=True)
        for start in range(0, len(todo), chunk_size)
    ]
    run_chunks = run_chunks or in_this_process(transcriber, policy)
    new: dict[int, pd.DataFrame] = {}
    failures: dict[int, pd.DataFrame] = {}
    table = merged(base, []) if base is not None else None
    audio_seconds = processing_seconds = 0.0
    with logs.stage(f"transcribe ({system})", total=len(todo), unit="utt") as bar:
        for position, result in run_chunks(chunks):
            chunk = chunks[position]
            rows, failures[position] = rows_for(chunk, *result, system)
            new[position] = rows
            if not rows.empty:
                table = merged(base, [new[i] for i in sorted(new)])
                write_table(table, out)
            audio_seconds += float(np.nansum(rows["duration"]))
            processing_seconds += float(np.nansum(rows["processing_seconds"]))
            bar.update(len(chunk))
            if processing_seconds > 0:
                bar.set_postfix(RTFx=f"{audio_seconds / processing_seconds:.1f}")
    parts = [failures[i] for i in sorted(failures)]
    failed_rows = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return table, failed_rows.reindex(columns=FAILURE_COLUMNS)


# --------------------------------------------------------------------------- reports


def rtfx_summary(table: pd.DataFrame | None, system: str) -> dict[str, Any]:
    """Utterances, audio and processing seconds and RTFx of ``system``'s timed rows."""
    rows = table[table["system"] == system] if table is not None else pd.DataFrame()
    if rows.empty or "processing_seconds" not in rows.columns:
        audio = processing = float("nan")
        count = 0
    else:
        timed = rows["processing_seconds"].notna() & rows["duration"].notna()
        audio = float(rows.loc[timed, "duration"].sum())
        processing = float(rows.loc[timed, "processing_seconds"].sum())
        count = int(timed.sum())
    rtfx = audio / processing if processing > 0 else float("nan")
    return {
        "system": system,
        "utterances": count,
        "audio_seconds": _rounded(audio, 3),
        "processing_seconds": _rounded(processing, 3),
        "rtfx": _rounded(rtfx, 2),
    }


def _rounded(value: float, digits: int) -> float | None:
    return None if not math.isfinite(value) else round(value, digits)


def sidecar(out: Path, suffix: str) -> Path:
    """``<out><suffix>``: a file beside the output table."""
    return out.with_name(f"{out.name}{suffix}")


def write_rtfx(out: Path, summary: dict[str, Any]) -> Path:
    """Add or replace ``summary``'s system in ``<out>.rtfx.json`` (a list of records)."""
    path = sidecar(out, ".rtfx.json")
    records: list[dict[str, Any]] = []
    if path.exists():
        try:
            records = [r for r in json.loads(path.read_text("utf-8")) if isinstance(r, dict)]
        except (json.JSONDecodeError, TypeError, UnicodeDecodeError):
            log.warning("%s: unreadable, rewritten", path)
    records = [r for r in records if r.get("system") != summary["system"]] + [summary]
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(records, indent=2) + "\n", encoding="utf-8")
    return path


def write_failures(out: Path, system: str, failed: pd.DataFrame) -> Path | None:
    """Replace ``system``'s rows of ``<out>.failed.csv``; the file goes when none are left."""
    path = sidecar(out, ".failed.csv")
    previous = None
    if path.exists():
        try:
            previous = read_raw_csv(path)
        except InputError as error:
            log.warning("%s; rewritten", error)
    if previous is not None and "system" in previous.columns:
        previous = previous[previous["system"] != system]
    parts = [f for f in (previous, failed) if f is not None and not f.empty]
    if not parts:
        path.unlink(missing_ok=True)
        return None
    return write_table(pd.concat(parts, ignore_index=True).reindex(columns=FAILURE_COLUMNS), path)


def log_failures(failed: pd.DataFrame, path: Path | None) -> None:
    if failed.empty:
        return
    counts = failed["asr_status"].value_counts()
    summary = ", ".join(f"{status}: {count}" for status, count in counts.items())
    first = failed.iloc[0]
    log.warning(
        "%d utterance(s) without a hypothesis (%s), e.g. %s/%s: %s; listed in %s",
        len(failed),
        summary,
        first["dataset"],
        first["utt_id"],
        first["asr_message"],
        path,
    )


# --------------------------------------------------------------------------- werest transcribe


def has_rows(table: pd.DataFrame | None, system: str) -> bool:
    return table is not None and bool((table["system"] == system).any())


def all_failed(failed: pd.DataFrame) -> str:
    """The one-line error of a run in which every utterance failed: counts and an example."""
    counts = failed["asr_status"].value_counts()
    summary = ", ".join(f"{status}: {count}" for status, count in counts.items())
    first = failed.iloc[0]
    return (
        f"no utterance could be transcribed: all {len(failed)} failed ({summary}), e.g. "
        f"{first['dataset']}/{first['utt_id']}: {first['asr_message']}"
    )


def format_summary(summary: dict[str, Any], transcribed: int, failed: int) -> str:
    """One readable line per run: what was done and the system's RTFx."""
    rtfx = "n/a" if summary["rtfx"] is None else f"{summary['rtfx']:.1f}"
    return (
        f"{summary['system']}: {transcribed} transcribed now, {failed} failed; "
        f"{summary['utterances']} utterances, {summary['audio_seconds'] or 0:.1f} s audio in "
        f"{summary['processing_seconds'] or 0:.1f} s: RTFx {rtfx}"
    )
