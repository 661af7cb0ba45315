"""Word-segmentation quality: how well a system's word timings match reference boundaries.

``werest segmentation reference=PATH hypothesis=PATH [tolerance=0.02] [output_dir=DIR]
[reference_system=NAME] [hypothesis_system=NAME]``

Inputs are word timings in the formats users have, told apart by suffix:

* **CTM** (``.ctm``): ``utt channel start duration word [confidence]`` per line (NIST;
  ``;;`` comments skipped);
* **Praat TextGrid** (``.TextGrid``; a file or a folder of them, the utterance id = the file
  stem), read with ``praatio``: the interval tier ``tier`` (default ``words``, else the
  first interval tier); empty labels and silence markers (``sil``, ``sp``, ``<sil>``...) are
  pauses, not words;
* **JSON** (``.json``/``.jsonl``): records ``{"utt_id": ..., "words": [{"word", "start",
  "end"}, ...]}`` (a list, one record per line, or a mapping utt_id → words): the layout
  :func:`write_json` writes.
* **a transcripts table** (``.csv``, ``.tsv``, ``.parquet``, ``.jsonl``; a JSON file whose
  records have ``asr_words``) written by ``werest transcribe asr=faster_whisper``: its
  ``asr_words`` column (JSON ``[word, start, end, probability]`` per word) holds Whisper's own
  word timestamps. ``reference_system=``/``hypothesis_system=`` pick the system when several
  have word timings. :func:`words_from_table` converts it; :func:`write_json` writes the
  result in the JSON layout above.

Per utterance, the boundaries of a word sequence are every word's start and end time,
de-duplicated to the millisecond (adjacent words share their boundary). A hypothesis boundary
is a **hit** when it is matched one-to-one to a reference boundary at most ``tolerance``
seconds away (inclusive; 20 ms by default). The matching pairs boundaries in time order
(a two-pointer sweep), which gives the most hits any one-to-one matching can on a line.
Over all utterances of the pair (totals of hits, Nf hypothesis and Nref reference
boundaries; utterances missing on either side are reported, not scored):

* precision P = hits / Nf, recall = hit rate HR = hits / Nref, F1 = 2PR / (P + R);
* over-segmentation OS = (Nf / Nref − 1) · 100 (negative = under-segmentation);
* R-value (Räsänen et al. 2009) = 1 − (|r1| + |r2|) / 200 with r1 = √((100 − HR)² + OS²),
  r2 = (−OS + HR − 100)/√2, HR in percent: 1 for a perfect segmentation, and unlike F1 it
  does not reward over-segmentation;
* normalised edit distance: the word-label Levenshtein distance / max(reference words,
  hypothesis words), so a segmentation into the wrong words is visible too. Labels are
  compared case-folded with leading and trailing punctuation removed (Whisper writes
  ``Two,`` where an alignment writes ``two``); spelling (``26`` vs ``twenty six``) still
  counts.

The **label-free variant** has no reference alignment: pass a *proxy* system's timings as
``reference`` and the result is agreement with the proxy, as pWER is for words.
"""

from __future__ import annotations

import json
import logging
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from werest.errors import InputError
from werest.formatting import plural
from werest.ingest.reading import decode_utf8
from werest.ingest.table import read_table
from werest.io import atomic_path

log = logging.getLogger(__name__)

SILENCE = {"", "sil", "sp", "spn", "<sil>", "<s>", "</s>", "<sp>", "[sil]", "pau", "[noise]"}
COLUMNS = ["utt_id", "word", "start", "end"]
WORDS_COLUMN = "asr_words"
TABLE_SUFFIXES = (".csv", ".tsv", ".parquet", ".pq")
_EDGE_PUNCTUATION = re.compile(r"^[\W_]+|[\W_]+$")


# --------------------------------------------------------------------------- metrics


@dataclass(frozen=True)
class BoundaryCounts:
    """Hits and boundary counts of one utterance or of a corpus (counts add up)."""

    hits: int
    n_hyp: int
    n_ref: int

    def __add__(self, other: BoundaryCounts) -> BoundaryCounts:
        return BoundaryCounts(
            self.hits + other.hits, self.n_hyp + other.n_hyp, self.n_ref + other.n_ref
        )


def boundaries(words: pd.DataFrame) -> np.ndarray:
    """Sorted unique start and end times (to the millisecond) of a word sequence."""
    times = np.concatenate([words["start"].to_numpy(float), words["end"].to_numpy(float)])
    return np.unique(np.round(times, 3))


def match_boundaries(reference: np.ndarray, hypothesis: np.ndarray, tolerance: float) -> int:
    """One-to-one matches of sorted boundaries within ``tolerance`` seconds (inclusive)."""
    hits, i, j = 0, 0, 0
    limit = tolerance + 1e-9  # 0.52 − 0.50 is 0.020000000000000018 in floating point
    while i < len(reference) and j < len(hypothesis):
        gap = hypothesis[j] - reference[i]
        if abs(gap) <= limit:
            hits, i, j = hits + 1, i + 1, j + 1
        elif gap < 0:
            j += 1
        else:
            i += 1
    return hits


def count(reference: pd.DataFrame, hypothesis: pd.DataFrame, tolerance: float) -> BoundaryCounts:
    """Boundary hits and counts of one utterance's reference and hypothesis words."""
    ref, hyp = boundaries(reference), boundaries(hypothesis)
    return BoundaryCounts(match_boundaries(ref, hyp, tolerance), len(hyp), len(ref))


def r_value(hit_rate: float, over_segmentation: float) -> float:
    """Räsänen's R-value from HR and OS, both in percent."""
    r1 = math.sqrt((100.0 - hit_rate) ** 2 + over_segmentation**2)
    r2 = (-over_segmentation + hit_rate - 100.0) / math.sqrt(2.0)
    return 1.0 - (abs(r1) + abs(r2)) / 200.0


def scores(counts: BoundaryCounts) -> dict[str, float]:
    """Precision, recall (= hit rate), F1, OS and R-value of boundary counts."""
    nan = float("nan")
    precision = counts.hits / counts.n_hyp if counts.n_hyp else nan
    recall = counts.hits / counts.n_ref if counts.n_ref else nan
    f1 = (
        2 * precision * recall / (precision + recall)
        if counts.n_hyp and counts.n_ref and precision + recall > 0
        else (0.0 if counts.n_hyp and counts.n_ref else nan)
    )
    os_ = (counts.n_hyp / counts.n_ref - 1.0) * 100.0 if counts.n_ref else nan
    hit_rate = 100.0 * recall if counts.n_ref else nan
    return {
        "hits": counts.hits,
        "n_hyp": counts.n_hyp,
        "n_ref": counts.n_ref,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "hit_rate": hit_rate,
        "over_segmentation": os_,
        "r_value": r_value(hit_rate, os_) if counts.n_ref else nan,
    }


def normalised_edit_distance(reference: list[str], hypothesis: list[str]) -> float:
    """Levenshtein distance of the word labels / the longer sequence's length (0 when both
    are empty)."""
    longest = max(len(reference), len(hypothesis))
    if longest == 0:
        return 0.0
    previous = list(range(len(hypothesis) + 1))
    for i, word in enumerate(reference, 1):
        current = [i]
        for j, other in enumerate(hypothesis, 1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (word != other))
            )
        previous = current
    return previous[-1] / longest


def label(word: str) -> str:
    """A word label as the edit distance compares it: case-folded, edge punctuation gone."""
    return _EDGE_PUNCTUATION.sub("", str(word).casefold())


def evaluate(
    reference: pd.DataFrame, hypothesis: pd.DataFrame, tolerance: float = 0.02
) -> tuple[dict[str, float], pd.DataFrame]:
    """(corpus scores, per-utterance table) of hypothesis word timings against a reference.

    Both frames have ``utt_id, word, start, end``; only utterances on both sides are scored.
    """
    if tolerance < 0:
        raise InputError(f"tolerance must be ≥ 0 seconds, got {tolerance}")
    ref_groups = dict(tuple(reference.groupby("utt_id", sort=True)))
    hyp_groups = dict(tuple(hypothesis.groupby("utt_id", sort=True)))
    shared = sorted(set(ref_groups) & set(hyp_groups))
    rows, total, distances, words = [], BoundaryCounts(0, 0, 0), 0.0, 0
    for utt in shared:
        ref, hyp = ref_groups[utt].sort_values("start"), hyp_groups[utt].sort_values("start")
        counts = count(ref, hyp, tolerance)
        ned = normalised_edit_distance(
            [label(w) for w in ref["word"]], [label(w) for w in hyp["word"]]
        )
        rows.append({"utt_id": utt, **scores(counts), "ned": ned})
        total = total + counts
        longest = max(len(ref), len(hyp))
        distances, words = distances + ned * longest, words + longest
    corpus = scores(total) | {
        "ned": distances / words if words else float("nan"),
        "utterances": len(shared),
        "missing_hypothesis": len(set(ref_groups) - set(hyp_groups)),
        "missing_reference": len(set(hyp_groups) - set(ref_groups)),
        "tolerance": tolerance,
    }
    return corpus, pd.DataFrame(rows)


# --------------------------------------------------------------------------- readers


def read_words(
    path: Path, tier: str = "words", system: str | None = None, setting: str = "system"
) -> pd.DataFrame:
    """Word timings (``utt_id, word, start, end``) from CTM, TextGrid(s), JSON or a
    transcripts table (``system``, the setting named ``setting``, picks its system)."""
    path = Path(path)
    if not path.exists():
        raise InputError("no such file or folder", path=path)
    if path.is_dir():
        grids = sorted(p for p in path.rglob("*") if p.suffix.lower() == ".textgrid")
        if not grids:
            raise InputError("no .TextGrid file in this folder", path=path)
        return pd.concat([read_textgrid(p, tier) for p in grids], ignore_index=True)
    suffix = path.suffix.lower()
    if suffix == ".ctm":
        return read_ctm(path)
    if suffix == ".textgrid":
        return read_textgrid(path, tier)
    if suffix in TABLE_SUFFIXES:
        return words_from_table(read_table(path), system, setting, path)
    if suffix in (".json", ".jsonl"):
        records = json_records(path)
        if records and isinstance(records[0], dict) and WORDS_COLUMN in records[0]:
            return words_from_table(read_table(path), system, setting, path)
        return words_from_records(records, path)
    raise InputError(
        "word timings must be .ctm, .TextGrid, .json/.jsonl or a transcripts table "
        "(.csv, .tsv, .parquet) with asr_words",
        path=path,
    )


def read_ctm(path: Path) -> pd.DataFrame:
    """NIST CTM: ``utt channel start duration word [confidence]``."""
    rows = []
    for number, line in enumerate(decode_utf8(path).splitlines(), 1):
        fields = line.split()
        if not fields or line.startswith(";;"):
            continue
        if len(fields) < 5:
            raise InputError(
                "a CTM line needs utt channel start duration word", path=path, row=number
            )
        try:
            start, duration = float(fields[2]), float(fields[3])
        except ValueError:
            raise InputError("start and duration must be numbers", path=path, row=number) from None
        if fields[4].lower() not in SILENCE:
            rows.append((fields[0], fields[4], start, start + duration))
    return pd.DataFrame(rows, columns=COLUMNS)


def read_textgrid(path: Path, tier: str = "words") -> pd.DataFrame:
    """One TextGrid (utt_id = file stem): the ``tier`` interval tier, pauses left out."""
    from praatio import textgrid

    try:
        grid = textgrid.openTextgrid(str(path), includeEmptyIntervals=False)
    except Exception as error:  # praatio raises assorted errors on malformed files
        raise InputError(f"not a readable TextGrid ({error})", path=path) from None
    names = grid.tierNames
    if tier in names:
        chosen = grid.getTier(tier)
    else:
        interval = [n for n in names if isinstance(grid.getTier(n), textgrid.IntervalTier)]
        if not interval:
            raise InputError("no interval tier", path=path)
        chosen = grid.getTier(interval[0])
    rows = [
        (path.stem, entry.label.strip(), float(entry.start), float(entry.end))
        for entry in chosen.entries
        if entry.label.strip().lower() not in SILENCE
    ]
    return pd.DataFrame(rows, columns=COLUMNS)


def json_records(path: Path) -> list:
    """The records of a JSON file (a list, or a mapping utt_id → words) or of JSON Lines
    (``.jsonl``, or a ``.json`` that holds one record per line, as transcripts tables do)."""
    text = decode_utf8(path)
    try:
        if path.suffix.lower() == ".jsonl":
            return _lines(text)
        records = json.loads(text)
    except json.JSONDecodeError as error:
        try:
            return _lines(text)
        except json.JSONDecodeError:
            raise InputError(f"not JSON ({error.msg})", path=path, row=error.lineno) from None
    if isinstance(records, dict):
        return [{"utt_id": k, "words": v} for k, v in records.items()]
    return records if isinstance(records, list) else [records]


def _lines(text: str) -> list:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def words_from_records(records: list, path: Path) -> pd.DataFrame:
    """Word timings from JSON records ``{"utt_id", "words": [{"word", "start", "end"}]}``."""
    rows = []
    for number, record in enumerate(records, 1):
        try:
            for word in record["words"]:
                if str(word["word"]).strip().lower() not in SILENCE:
                    rows.append(
                        (
                            str(record["utt_id"]),
                            word["word"],
                            float(word["start"]),
                            float(word["end"]),
                        )
                    )
        except (KeyError, TypeError, ValueError) as error:
            raise InputError(
                f"record needs utt_id and words with word/start/end ({error})",
                path=path,
                row=number,
            ) from None
    return pd.DataFrame(rows, columns=COLUMNS)


def words_from_table(
    table: pd.DataFrame, system: str | None, setting: str, path: Path
) -> pd.DataFrame:
    """One system's word timings from a transcripts table's ``asr_words`` column (JSON
    ``[word, start, end, ...]`` per word, as ``werest transcribe asr=faster_whisper`` writes).

    ``system`` None: the table's only system with word timings. Utterance ids must be unique
    across the system's datasets, since word-timing files name utterances by id alone.
    """
    if WORDS_COLUMN not in table.columns:
        raise InputError(
            "no word timings: transcribe with asr=faster_whisper (asr.word_timestamps=true)",
            path=path,
            column=WORDS_COLUMN,
        )
    values = table[WORDS_COLUMN].astype("string").str.strip()
    timed = table[values.notna() & values.ne("")]  # a CSV's empty cell: no timings
    systems = sorted(timed["system"].unique())
    if system is None and len(systems) > 1:
        raise InputError(
            f"several systems have word timings ({', '.join(systems)}): give {setting}=NAME",
            path=path,
        )
    if system is not None and system not in systems:
        raise InputError(
            f"{setting}={system}: no word timings for it; the table has them for "
            f"{', '.join(systems) or 'no system'}",
            path=path,
        )
    rows = timed[timed["system"] == (system or systems[0])]
    repeated = rows["utt_id"].duplicated()
    if repeated.any():
        position = int(np.flatnonzero(repeated.to_numpy())[0])
        raise InputError(
            f"utt_id {rows['utt_id'].iloc[position]!r} is in several datasets: word timings "
            "name utterances by id alone; keep one dataset",
            path=path,
            row=int(rows.index[position]) + 1,
            column="utt_id",
        )
    words = []
    for index, utt, value in zip(rows.index, rows["utt_id"], rows[WORDS_COLUMN], strict=True):
        try:
            for word in json.loads(value):
                if str(word[0]).strip().lower() not in SILENCE:
                    words.append((str(utt), str(word[0]).strip(), float(word[1]), float(word[2])))
        except (json.JSONDecodeError, TypeError, ValueError, IndexError):
            raise InputError(
                "asr_words must be a JSON list of [word, start, end, ...]",
                path=path,
                row=int(index) + 1,
                column=WORDS_COLUMN,
            ) from None
    return pd.DataFrame(words, columns=COLUMNS)


def write_json(words: pd.DataFrame, path: Path) -> Path:
    """Word timings as JSON records ``{"utt_id", "words": [{"word", "start", "end"}]}``."""
    records = [
        {
            "utt_id": str(utt),
            "words": [
                {"word": w, "start": round(float(s), 3), "end": round(float(e), 3)}
                for w, s, e in zip(g["word"], g["start"], g["end"], strict=True)
            ],
        }
        for utt, g in words.groupby("utt_id", sort=True)
    ]
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(records, indent=1) + "\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------- the command


def format_scores(corpus: dict[str, float]) -> str:
    """One readable block of the corpus scores."""
    return (
        f"{plural(corpus['utterances'], 'utterance')} ({corpus['missing_hypothesis']} without a "
        f"hypothesis, {corpus['missing_reference']} without a reference), tolerance "
        f"{1000 * corpus['tolerance']:.0f} ms: precision {corpus['precision']:.3f}, recall "
        f"(HR) {corpus['recall']:.3f}, F1 {corpus['f1']:.3f}, OS "
        f"{corpus['over_segmentation']:.2f}, R-value {corpus['r_value']:.3f}, NED "
        f"{corpus['ned']:.3f}"
    )
