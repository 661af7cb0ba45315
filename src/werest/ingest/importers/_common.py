"""Helpers shared by the importers: reading text files strictly and building table rows."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, fields
from pathlib import Path

import pandas as pd

from werest.columns import TEXT_COLUMNS
from werest.errors import ConfigError, InputError
from werest.ingest.reading import decode_utf8

log = logging.getLogger("werest.ingest.importers")

_TRAILING_ID = re.compile(r"^(?P<text>.*?)\s*\((?P<utt_id>[^()]*)\)\s*$")
_SENTENCE_MARKS = re.compile(r"</?s>|<sil>")


def require_path(path: Path, *, folder: bool | None = None) -> Path:
    """Fail with an InputError when ``path`` is missing (or not a folder/file as asked)."""
    if not path.exists():
        raise InputError("no such file or folder", path=path)
    if folder is True and not path.is_dir():
        raise InputError("expected a folder", path=path)
    if folder is False and path.is_dir():
        raise InputError("expected a file, got a folder", path=path)
    return path


def text_lines(path: Path, layout: str | None = None) -> Iterator[tuple[int, str]]:
    """(line number, line) for each non-blank line of a UTF-8 text file.

    ``layout`` (e.g. "a Kaldi `text` line") is the line format the importer reads: a file
    that is clearly another format (a CSV or TSV table, JSON) is refused, with the importer
    that reads it (:func:`refuse_other_format`).

    Raises
    ------
    InputError : a missing file, a folder, a binary file (an image, an archive, audio), text
        that is not UTF-8, a file with no non-blank line (an empty transcript file is a
        mistake, not an empty system), or one in another format than ``layout``.
    """
    require_path(path, folder=False)
    text = decode_utf8(path)
    if not text.strip():
        raise InputError("the file is empty", path=path)
    if layout is not None:
        refuse_other_format(path, text, layout)
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield number, line.rstrip("\r\n")


#: column names a CSV/TSV transcript table's header holds (werest's and the usual ones)
_HEADER_NAMES = frozenset(
    {
        "id", "utt_id", "utterance_id", "uttid", "key", "dataset", "system", "hypothesis",
        "hyp", "reference", "ref", "text", "transcript", "transcription", "prediction",
        "pred_text", "sentence", "audio", "audio_filepath", "audio_path", "path", "file",
        "filename", "duration", "speaker", "language",
    }
)  # fmt: skip


def refuse_other_format(path: Path, text: str, layout: str) -> None:
    """InputError naming the file, the line and the importer to use when ``text`` is clearly
    not made of ``layout`` lines but is a CSV/TSV table (its header names usual columns, or
    every one of its first lines' first word holds a comma) or JSON (a manifest's
    ``{...}`` lines, or one JSON document)."""
    import json

    lines = [(n, line.strip()) for n, line in enumerate(text.splitlines(), start=1)]
    lines = [(n, line) for n, line in lines if line]
    number, first = lines[0]
    if first[0] in "{[":
        try:
            document = json.loads(first) if first[0] == "{" else json.loads(text)
        except ValueError:
            document = None
        if isinstance(document, dict | list):
            raise InputError(
                f"line {number} looks like JSON ({first[:40]!r}), not {layout}: a NeMo / Open "
                "ASR Leaderboard manifest (JSON Lines)? use werest import manifest; a table: "
                "name it .jsonl",
                path=path,
            )
    for sep, kind in ((",", "CSV"), ("\t", "TSV")):
        fields = [f.strip().strip('"').lower() for f in first.split(sep)]
        header = len(fields) > 1 and all(f and not any(c.isspace() for c in f) for f in fields)
        if header and _HEADER_NAMES.intersection(fields):
            raise InputError(
                f"line {number} looks like a {kind} header ({first[:60]!r}), not {layout}: use "
                "werest import csv FILE (id_column=, hypothesis_column=, reference_column= name "
                "its columns)",
                path=path,
            )
    head = lines[:5]
    if all("," in line.split()[0] for _, line in head):
        raise InputError(
            f"line {number} looks like a CSV table ({first[:60]!r}: comma-separated fields), "
            f"not {layout}: "
            "use werest import csv FILE",
            path=path,
        )


def read_trailing_id_file(path: Path) -> pd.DataFrame:
    """Read ``words (utt-id)`` lines (sclite trn, Sphinx transcription) into utt_id, text.

    Sphinx's ``<s>``, ``</s>`` and ``<sil>`` markers are removed from the text.
    """
    rows = []
    for number, line in text_lines(path, "a 'words (utterance-id)' line"):
        match = _TRAILING_ID.match(line)
        if not match or not match["utt_id"].strip():
            raise InputError(
                f"expected 'words (utterance-id)', got {line[:60]!r}", path=path, row=number
            )
        text = " ".join(_SENTENCE_MARKS.sub(" ", match["text"]).split())
        rows.append((match["utt_id"].strip(), text, number))
    return _unique_ids(pd.DataFrame(rows, columns=["utt_id", "text", "line"]), path)


def read_leading_id_file(path: Path) -> pd.DataFrame:
    """Read Kaldi ``utt-id words...`` lines into utt_id, text (an id alone = empty text)."""
    rows = []
    for number, line in text_lines(path, "a Kaldi `text` line ('utt-id words...')"):
        utt_id, *words = line.split()
        rows.append((utt_id, " ".join(words), number))
    return _unique_ids(pd.DataFrame(rows, columns=["utt_id", "text", "line"]), path)


def _unique_ids(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    duplicated = frame["utt_id"].duplicated()
    if duplicated.any():
        row = frame.loc[duplicated].iloc[0]
        raise InputError(
            f"utterance id {row['utt_id']!r} appears twice", path=path, row=int(row["line"])
        )
    return frame.drop(columns="line")


def system_rows(
    dataset: str, system: str, hypotheses: pd.DataFrame, references: pd.DataFrame | None
) -> pd.DataFrame:
    """Rows of one system: ``hypotheses`` (utt_id, text) joined with optional references."""
    frame = pd.DataFrame(
        {
            "dataset": dataset,
            "utt_id": hypotheses["utt_id"].to_numpy(),
            "system": system,
            "hypothesis": hypotheses["text"].to_numpy(),
        }
    )
    if references is not None:
        lookup = references.set_index("utt_id")["text"]
        frame["reference"] = frame["utt_id"].map(lookup)
        unmatched = frame["reference"].isna().sum()
        if unmatched:
            log.warning("%s/%s: %d utterance(s) have no reference", dataset, system, unmatched)
    return frame


def refuse_first(
    bad: pd.Series, problem: str | Callable[[int], str], *, path: Path, column: str
) -> None:
    """An InputError at the first row where ``bad`` holds (rows counted from 1), when any
    does: ``problem``, or ``problem(position)`` of that row's 0-based position."""
    if bad.any():
        position = int(bad.to_numpy().argmax())
        message = problem if isinstance(problem, str) else problem(position)
        raise InputError(message, path=path, row=position + 1, column=column)


def read_json(path: Path) -> object:
    """The JSON value of a UTF-8 file; an InputError naming the line where it is not JSON."""
    try:
        return json.loads(decode_utf8(path))
    except json.JSONDecodeError as error:
        raise InputError(
            f"not valid JSON ({error.msg} at line {error.lineno})", path=path
        ) from None


def log_imported(logger: logging.Logger, layout: str, table: pd.DataFrame) -> None:
    """The INFO line an importer of a benchmark's layout ends with: what it read."""
    logger.info(
        "%s: %d rows, %d systems, %d utterances",
        layout,
        len(table),
        table["system"].nunique(),
        table["utt_id"].nunique(),
    )


def check_one_system(system: str | None, paths: list[Path], noun: str, named_by: str) -> None:
    """ConfigError when ``system=`` names one system but several ``paths`` (each a ``noun``)
    were given: without it, each names its own system (by ``named_by``)."""
    if system and len(paths) > 1:
        raise ConfigError(
            f"system={system!r} names one system but {len(paths)} {noun}s were given: give one "
            f"{noun} per call, or drop system= to name each by {named_by}"
        )


def load_each(paths: list[Path], load_file, **options) -> pd.DataFrame:
    """``load_file(path, **options)`` of each of ``paths``, concatenated; a (dataset, system)
    comes from one file only (:func:`claim_origin`)."""
    frames = []
    origin: dict[tuple[str, str], Path] = {}
    for path in paths:
        frame = load_file(path, **options)
        claim_origin(origin, frame, path)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True, sort=False)


_GENERIC_STEMS = {"text", "hyp", "hypothesis", "hyps", "output"}


def claim_origin(
    origin: dict[tuple[str, str], Path], frame: pd.DataFrame, source: Path, noun: str = "file"
) -> None:
    """Record that ``frame``'s (dataset, system) pairs came from ``source``; an InputError when
    one already came from another file (each file, or path, names its own system)."""
    for key in frame[["dataset", "system"]].drop_duplicates().itertuples(index=False):
        key = tuple(key)
        if key in origin:
            raise InputError(
                f"dataset {key[0]!r}, system {key[1]!r} already came from {origin[key]}; "
                f"give each {noun} its own system (or dataset) name",
                path=source,
            )
        origin[key] = source


def system_name(path: Path) -> str:
    """A system's name from its file: the stem, or the folder for generic stems (``text``)."""
    if path.stem.lower() not in _GENERIC_STEMS:
        return path.stem
    return path.parent.name or path.resolve().parent.name  # `text` in the working folder


def system_frames(
    paths: list[Path],
    reader,
    *,
    reference: str | None,
    dataset: str | None,
    system: str | None,
    default_dataset: str,
) -> pd.DataFrame:
    """Rows of several one-system-per-file hypothesis files that share a reader."""
    if system and len(paths) > 1:
        raise ConfigError("system= names one system: give one file, or drop system=")
    references = reader(require_path(Path(reference), folder=False)) if reference else None
    if dataset is None:
        dataset = Path(reference).parent.name if reference else default_dataset
    frames = []
    for path in paths:
        require_path(path, folder=False)
        frames.append(system_rows(dataset, system or system_name(path), reader(path), references))
    names = [f["system"].iloc[0] for f in frames if len(f)]
    if len(set(names)) < len(names):
        raise ConfigError(f"two files give the same system name {names}; use system= per file")
    return pd.concat(frames, ignore_index=True)


def one_file_per_system(reader, default_dataset: str):
    """An importer ``load`` for layouts with one hypothesis file per system read by ``reader``
    (Kaldi ``text``, sclite ``.trn``): ``reference=``, ``dataset=`` and ``system=`` options."""

    def load(
        paths: list[Path],
        reference: str | None = None,
        dataset: str | None = None,
        system: str | None = None,
        **_: object,
    ) -> pd.DataFrame:
        return system_frames(
            paths,
            reader,
            reference=reference,
            dataset=dataset,
            system=system,
            default_dataset=default_dataset,
        )

    return load


def agree_references(table: pd.DataFrame, source: str) -> pd.DataFrame:
    """Make every system's reference of one (dataset, utt_id) the first system's.

    Layouts that repeat the reference in each system's file can disagree (a file re-exported
    after a fix); the first row's reference (file order) is used for all, with a warning
    giving the count, so that every system is scored against one reference.
    """
    if "reference" not in table.columns or table.empty:
        return table
    key = ["dataset", "utt_id"]
    first = table.groupby(key, sort=False)["reference"].transform("first")
    reference = table["reference"]
    differ = (first.fillna("\x00") != reference.fillna("\x00")).to_numpy()
    if differ.any():
        row = table.loc[differ].iloc[0]
        log.warning(
            "%s: %d row(s) whose reference differs from the first system's for the same "
            "utterance (e.g. %s/%s, system %s); the first system's used",
            source,
            int(differ.sum()),
            row["dataset"],
            row["utt_id"],
            row["system"],
        )
        table = table.copy()
        table["reference"] = first.to_numpy()
    return table


#: the columns werest sets itself: a source column or field of one of these names that is not
#: the one chosen for it is kept under ``source_<name>`` (an ESB dataset's ``dataset`` column)
SET_COLUMNS = ("dataset", "utt_id", "system", "hypothesis", "reference")
#: the prediction field of NeMo's and the Open ASR Leaderboard's manifests, and its prefix
PRED_TEXT = "pred_text"


@dataclass(frozen=True)
class NamedColumns:
    """The options of an importer that finds its columns by name (csv, manifest, hf): the
    ``id_column``, the ``reference_column`` (None: no reference), the ``hypothesis_column``
    or several ``hypothesis_columns`` (:meth:`hypotheses`), the ``system`` (one path only:
    :func:`check_one_system`) and the ``dataset``; each importer says what its defaults mean."""

    id_column: str | None = "id"
    reference_column: str | None = "reference"
    hypothesis_column: str | None = "hypothesis"
    hypothesis_columns: str | list[str] | None = None
    system: str | None = None
    dataset: str | None = None

    @classmethod
    def of(cls, options: Mapping[str, object]) -> NamedColumns:
        """These of an importer's ``options`` (``werest import``'s others, ``streaming``...,
        are other importers')."""
        return cls(**{f.name: options[f.name] for f in fields(cls) if f.name in options})

    def hypotheses(self) -> list[str] | None:
        """The hypothesis columns named (:func:`named_hypothesis_columns`), or None."""
        return named_hypothesis_columns(self.hypothesis_column, self.hypothesis_columns)


def named_hypothesis_columns(
    hypothesis_column: str | None,
    hypothesis_columns: str | list[str] | tuple[str, ...] | None,
    default: str = "hypothesis",
) -> list[str] | None:
    """The hypothesis columns a user named (``hypothesis_columns=[a,b]``, or a
    ``hypothesis_column=`` other than its default), or None: the importer finds its own."""
    if isinstance(hypothesis_columns, str):
        named = [hypothesis_columns]
    else:
        named = [str(c) for c in hypothesis_columns or ()]
    if hypothesis_column not in (None, default):
        if named:
            raise ConfigError(
                f"hypothesis_column={hypothesis_column!r} and hypothesis_columns={named} both "
                "name hypothesis columns: give one of them"
            )
        named = [hypothesis_column]
    if any(not c.strip() for c in named):
        raise ConfigError(f"hypothesis_columns names an empty column: {named}")
    if len(set(named)) < len(named):
        raise ConfigError(f"hypothesis_columns names a column twice: {named}")
    return named or None


def column_systems(columns: list[str], file_system: str, system: str | None) -> dict[str, str]:
    """The system each hypothesis column holds.

    A file's only hypothesis column holds ``system=`` when given; otherwise
    ``pred_text_<name>`` holds system ``<name>``; ``pred_text``, or a file's only hypothesis
    column, holds the file's system (``system=`` or one named after the file); any other
    column of several holds the system named like the column.
    """
    if len(columns) == 1 and system:
        return {columns[0]: system}
    systems = {}
    for column in columns:
        if column.startswith(f"{PRED_TEXT}_") and len(column) > len(PRED_TEXT) + 1:
            systems[column] = column[len(PRED_TEXT) + 1 :]
        elif column == PRED_TEXT or len(columns) == 1:
            systems[column] = system or file_system
        else:
            systems[column] = column
    names = list(systems.values())
    if len(set(names)) < len(names):
        raise ConfigError(f"two hypothesis columns give the same system name: {systems}")
    return systems


def metadata_values(name: str, values: list) -> list:
    """A kept metadata column's values: a column the table reads as text (``speaker``,
    ``language``...) holds text, so a numeric speaker id (LibriSpeech's 1089) becomes ``"1089"``
    rather than a refused row."""
    if name not in TEXT_COLUMNS:
        return values
    return [v if v is None or isinstance(v, str) or v != v else str(v) for v in values]


def source_name(column: str, taken: tuple[str, ...] = SET_COLUMNS) -> str:
    """A source's metadata column as kept in the table: ``source_<name>`` when werest sets a
    column of that name itself (``taken``)."""
    return f"source_{column}" if column in taken else column
