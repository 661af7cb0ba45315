"""One dataset's contest for the label loop: its systems, their normalised hypotheses and
the per-utterance edit distance of every pair (|e_A − e_B| ≤ d(A, B), known without a
label), built once and kept by content in ``cache_dir`` (:mod:`werest.estimation.
contest_store`); and the true errors of every system on the labelled utterances
(:func:`error_matrix`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

log = logging.getLogger(__name__)


@dataclass
class Contest:
    """One dataset's systems on its utterances: what the decision needs besides the labels.

    Attributes
    ----------
    dataset : its name.
    utterances : the N utterance ids, sorted.
    systems : the S systems.
    codes : (N, S) integer codes of each system's normalised hypothesis into ``texts``
        (a missing hypothesis is the empty text).
    texts : the distinct normalised hypotheses.
    unit : ``word`` or ``char``: what an error counts.
    words : r̄, the mean reference length the differences are expressed against: the mean
        over utterances of the median hypothesis length over systems (a label-free stand-in
        for the reference's; it scales the points, never the sign of a difference).
    contenders : the zero-label shortlist (a subset of ``systems``).
    zero_label : each system's zero-label estimate (a fraction), for the first leader.
    """

    dataset: str
    utterances: pd.Index
    systems: list[str]
    codes: np.ndarray
    texts: np.ndarray
    unit: str = "word"
    words: float = 1.0
    contenders: list[str] = field(default_factory=list)
    zero_label: dict[str, float] = field(default_factory=dict)
    _distances: dict = field(default_factory=dict, repr=False)
    #: where its distances are kept by content (:mod:`werest.estimation.contest_store`), and
    #: its number there
    store: Path | None = field(default=None, repr=False)
    number: int = field(default=0, repr=False)

    @property
    def n(self) -> int:
        return len(self.utterances)

    def index(self, system: str) -> int:
        return self.systems.index(system)

    def distance(self, a: int, b: int) -> np.ndarray:
        """d_i(A, B) on every utterance (N,), computed once per pair."""
        key = (min(a, b), max(a, b))
        if key not in self._distances:
            from werest.estimation import contest_store
            from werest.text import encoded_distances

            path = contest_store.distance_file(self.store, self.number, key)
            stored = contest_store.read_distances(path, self.n)
            if stored is not None:  # an earlier process of the label loop aligned them
                self._distances[key] = stored
                return stored
            self._distances[key] = encoded_distances(
                self._encoded(), self.codes[:, key[0]], self.codes[:, key[1]]
            ).astype(float)
            contest_store.write_distances(path, self._distances[key])
        return self._distances[key]

    def _encoded(self) -> list:
        if "encoded" not in self._distances:  # each text encoded once, kept by content too
            from werest.estimation import contest_store

            self._distances["encoded"] = contest_store.encoded(
                self.store, self.number, self.texts, self.unit
            )
        return self._distances["encoded"]

    def consensus_gap(self, a: int, b: int) -> np.ndarray:
        """g_i = d_i(A, P) − d_i(B, P) on every utterance (N,), P the consensus: the
        hypothesis most systems gave (ties: the first text). A label-free guess of e_A − e_B
        (exact where the consensus is the reference), |g_i| ≤ d_i(A, B); the decision's
        control variate."""
        from werest.text import encoded_distances

        if "consensus" not in self._distances:
            self._distances["consensus"] = consensus_codes(self.codes)
        consensus = self._distances["consensus"]
        for s in (a, b):
            if ("to_consensus", s) not in self._distances:
                self._distances[("to_consensus", s)] = encoded_distances(
                    self._encoded(), self.codes[:, s], consensus
                ).astype(float)
        return self._distances[("to_consensus", a)] - self._distances[("to_consensus", b)]

    @property
    def disputed(self) -> np.ndarray:
        """Where at least two systems' hypotheses differ (N,)."""
        return (self.codes != self.codes[:, :1]).any(axis=1)

    def points(self, words_per_utterance: float) -> float:
        """A mean difference in errors per utterance, in WER points."""
        return 100.0 * words_per_utterance / self.words


def consensus_codes(codes: np.ndarray) -> np.ndarray:
    """Per row of ``codes`` (N, S), the code most columns hold (ties: the lowest code)."""
    ordered = np.sort(codes, axis=1)
    out = np.empty(len(codes), dtype=codes.dtype)
    for i, row in enumerate(ordered):
        values, counts = np.unique(row, return_counts=True)
        out[i] = values[int(np.argmax(counts))]
    return out


def build_contests(
    table: pd.DataFrame,
    normaliser,
    *,
    contenders: dict[str, list[str]] | None = None,
    zero_label: dict[str, dict[str, float]] | None = None,
    cache_dir=None,
    n_jobs: int = 1,
) -> dict[str, Contest]:
    """One :class:`Contest` per dataset of a transcripts table with two or more systems,
    its hypotheses normalised as ``werest score`` normalises them (the contests and their
    distances kept by content in ``cache_dir``, when set, for the label loop's next process:
    :mod:`werest.estimation.contest_store`)."""
    from werest.estimation.contest_store import contests_folder, read_contests, write_contests
    from werest.text.scoring import dataset_units, scoring_units

    folder = None if cache_dir is None else contests_folder(cache_dir, table, normaliser)
    stored = None if folder is None else read_contests(folder)
    if stored is not None:
        return {
            fields["dataset"]: Contest(
                **fields,
                contenders=list((contenders or {}).get(fields["dataset"], fields["systems"])),
                zero_label=dict((zero_label or {}).get(fields["dataset"], {})),
                store=folder,
                number=number,
            )
            for number, fields in enumerate(stored)
        }
    text = normalised_hypotheses(table, normaliser, n_jobs=n_jobs)  # the contests are kept
    rows = table[["dataset", "utt_id", "system"]].assign(text=text.to_numpy())
    units = dataset_units(scoring_units(table, normaliser), table["dataset"])
    out = {}
    for dataset, mine in rows.groupby("dataset", sort=True):
        contest = _contest(mine, str(dataset), units.get(dataset, "word"))
        if contest is not None:
            contest.contenders = list((contenders or {}).get(dataset, contest.systems))
            contest.zero_label = dict((zero_label or {}).get(dataset, {}))
            out[str(dataset)] = contest
    if folder is not None:
        write_contests(folder, list(out.values()))
        for number, contest in enumerate(out.values()):
            contest.store, contest.number = folder, number
    return out


def _contest(rows: pd.DataFrame, dataset: str, unit: str) -> Contest | None:
    """One dataset's contest from its normalised rows (``utt_id, system, text``): the
    utterance × system matrix of text codes and the mean reference length r̄ (the median
    hypothesis length per utterance); None for a dataset of one system."""
    wide = rows.pivot_table(
        index="utt_id", columns="system", values="text", aggfunc="first"
    ).sort_index()
    if wide.shape[1] < 2:
        return None
    wide = wide.fillna("")
    codes, texts = pd.factorize(wide.to_numpy().ravel())
    unit = "character" if unit == "character" else "word"
    lengths = np.array([len(t) if unit == "character" else len(t.split()) for t in texts])
    per_row = lengths[codes].reshape(wide.shape)
    return Contest(
        dataset=dataset,
        utterances=pd.Index(wide.index.astype(str)),
        systems=[str(s) for s in wide.columns],
        codes=codes.reshape(wide.shape),
        texts=np.asarray(texts, dtype=object),
        unit=unit,
        words=max(float(np.median(per_row, axis=1).mean()), 1e-9),
    )


def normalised_hypotheses(table: pd.DataFrame, normaliser, cache_dir=None, *, n_jobs: int = 1):
    """The table's hypotheses normalised (:func:`werest.text.normalised_columns`), read from
    ``cache_dir`` when the same table and normaliser were normalised before."""
    import hashlib

    from werest.text import normalised_columns

    def normalise():
        return normalised_columns(table, normaliser, ("hypothesis",), n_jobs=n_jobs)["hypothesis"]

    if cache_dir is None:
        return normalise()
    columns = [c for c in ("dataset", "utt_id", "system", "hypothesis", "language") if c in table]
    digest = hashlib.sha256(
        pd.util.hash_pandas_object(table[columns], index=False).to_numpy().tobytes()
    )
    digest.update(f"{normaliser}|{','.join(columns)}".encode())
    path = Path(cache_dir) / f"texts-{digest.hexdigest()[:32]}.parquet"
    try:
        stored = pd.read_parquet(path)["text"]
        if len(stored) == len(table):
            return pd.Series(stored.to_numpy(), index=table.index, dtype="str")
    except (OSError, ValueError, KeyError):
        pass
    text = normalise()
    try:
        from werest.io import atomic_path, unrecorded

        path.parent.mkdir(parents=True, exist_ok=True)
        with unrecorded(), atomic_path(path) as tmp:  # a cache entry, not an output
            pd.DataFrame({"text": text.to_numpy()}).to_parquet(tmp)
    except (OSError, ValueError) as error:
        log.info("normalised hypotheses not cached (%s)", error)
    return text


def error_matrix(contest: Contest, scores: pd.DataFrame) -> np.ndarray:
    """(N, S) true errors of every system on the labelled utterances of ``contest`` (NaN on
    the others), from :func:`werest.estimation.corpus.labelled_scores` rows
    (``utt_id, system, word_errors, ref_words``); a system with no hypothesis for a labelled
    utterance deleted every reference word (its text in the contest is empty)."""
    out = np.full((contest.n, len(contest.systems)), np.nan)
    if scores.empty:
        return out
    rows = contest.utterances.get_indexer(scores["utt_id"].astype(str))
    cols = pd.Index(contest.systems).get_indexer(scores["system"].astype(str))
    ok = (rows >= 0) & (cols >= 0)
    out[rows[ok], cols[ok]] = scores["word_errors"].to_numpy(dtype=float)[ok]
    length = pd.Series(scores["ref_words"].to_numpy(dtype=float)[ok]).groupby(rows[ok]).max()
    labelled = length.index.to_numpy()
    block = out[labelled]
    out[labelled] = np.where(np.isnan(block), length.to_numpy()[:, None], block)
    return out


#: How a sheet's draws were made, as the decision reads them.
WITH_REPLACEMENT, FRESH_UNIFORM = "with_replacement", "fresh_uniform"


@dataclass
class Batch:
    """One sheet's draws of one dataset, as the decision reads them.

    ``positions``: the utterances drawn (an utterance drawn twice appears twice), in the
    order the decision takes them (:func:`draw_order`). ``kind``: :data:`WITH_REPLACEMENT`
    (``probabilities``: the (N,) per-draw probabilities) or :data:`FRESH_UNIFORM` (drawn
    without replacement, uniformly, from the utterances no earlier batch labelled)."""

    positions: np.ndarray
    kind: str
    probabilities: np.ndarray | None = None
