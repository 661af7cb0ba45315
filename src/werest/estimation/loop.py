"""The label loop as one object: a round over a table (:class:`LabelRound`).

A round holds the transcripts table, the models (their normaliser), the sheets labelled so
far read with their designs (:func:`werest.estimation.labels.read_labels`, the notes on
them), the labels scored once against every hypothesis (:attr:`LabelRound.scores`), the
zero-label estimate of every system (kept by content in ``cache_dir`` between rounds), and
the contests. On it:

* :meth:`LabelRound.decide`: ``winner.json``, per dataset (:mod:`werest.estimation.decision`);
* :meth:`LabelRound.apply_labels`: the prediction-powered estimates
  (:func:`werest.estimation.labels.apply_labels`);
* :meth:`LabelRound.draw`: the next sheet, by any strategy (:class:`Draw`).

``werest sample``, ``werest estimate labels=`` and :mod:`werest.api` (``sample``, ``decide``,
``estimate``) all run the loop through it, so a notebook runs it with no command::

    loop = LabelRound.open("table.parquet", models, labels=["s0.csv"], strategy="winner")
    draw = loop.draw(budget=20)          # draw.sheet: the next sheet; draw.decisions
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from werest.errors import InputError
from werest.estimation.decision import DECIDED, GOOD, WinnerSettings
from werest.estimation.guards import attach_warnings
from werest.estimation.label_round import RoundContext, labels_scored, winner_draw, winner_entries
from werest.estimation.labels import (
    LabelSettings,
    apply_labels,
    labelled_estimates,
    read_labels,
)
from werest.estimation.pipeline import EstimateOptions, estimate_frame
from werest.estimation.run_cache import estimate_cached
from werest.estimation.sampling import (
    as_sheet,
    draw_probabilities,
    draw_sample,
    expected_half_width,
    labelling_scores,
    mean_predicted_wer,
    next_sheet,
    utterance_list,
)
from werest.ingest.table import UTTERANCE, read_table, validate_table
from werest.model.files import Models

#: what ``strategy=auto`` becomes: ``active`` measures best (docs/few_labels.md); it needs
#: two systems, else ``random``
AUTO = "auto"


@dataclass
class Draw:
    """The next sheet of a round (:meth:`LabelRound.draw`).

    Attributes
    ----------
    sheet : the rows to label (:data:`werest.columns.SHEET_COLUMNS`), with the
        references the earlier sheets already give filled in.
    strategy : the strategy that drew it (``auto`` resolved).
    decisions : with ``strategy=winner``, every dataset's decision before this sheet
        (``winner.json`` entries); else None.
    widths : with ``active`` or ``stratified``, the interval half-width to expect per dataset
        (:func:`werest.estimation.sampling.expected_half_width`); else None.
    pilots : the labelled draws per dataset that measured ``widths`` (a pilot).
    """

    sheet: pd.DataFrame
    strategy: str
    decisions: list[dict] | None = None
    widths: pd.Series | None = None
    pilots: dict[str, int] = field(default_factory=dict)

    @property
    def answered(self) -> list[str]:
        """The datasets whose decision is ``decided`` or ``good``: nothing left to draw."""
        return [d["dataset"] for d in self.decisions or () if d["status"] in (DECIDED, GOOD)]


@dataclass
class Labelled:
    """An estimate with the round's labels (:meth:`LabelRound.labelled`): the summary
    records, the warnings, the paired differences (``pairs.csv``) and ``winner.json``."""

    records: list[dict]
    warnings: list[dict]
    pairs: pd.DataFrame
    decisions: list[dict]


@dataclass
class LabelRound:
    """One round of the label loop over ``table`` (a validated transcripts table).

    ``models``: the models (None for ``strategy=random``, which needs none); ``labels``: the
    sheets' rows (:func:`werest.estimation.labels.read_labels`; None before any), ``notes``
    what reading them noticed (printed under the decision). ``winner``: the decision's
    settings; ``cache_dir``: where the zero-label estimate and the contests are kept by
    content between rounds; ``source``: the table's file, in errors."""

    table: pd.DataFrame
    models: Models | None = None
    labels: pd.DataFrame | None = None
    notes: list[str] = field(default_factory=list)
    winner: WinnerSettings = WinnerSettings()
    cache_dir: str | Path | None = None
    n_jobs: int = 1
    source: str | Path | None = None

    @classmethod
    def open(
        cls,
        table: pd.DataFrame | str | Path,
        models: Models | None,
        *,
        labels=None,
        strategy: str = "winner",
        winner: WinnerSettings = WinnerSettings(),
        cache_dir: str | Path | None = None,
        n_jobs: int = 1,
    ) -> LabelRound:
        """A round on ``table`` (a path, read as the commands read it, or a DataFrame) and
        the sheets ``labels`` (a path, a list of them, or DataFrames); ``models`` may be a
        callable that loads them, called only when ``strategy`` needs them (any but
        ``random``). The zero-label estimate runs before the sheets are read, so a bad table
        is told first."""
        source = None if isinstance(table, pd.DataFrame) else table
        strategy = resolve_strategy(strategy, table)
        kept = {"winner": winner, "cache_dir": cache_dir, "n_jobs": n_jobs, "source": source}
        if strategy == "random":
            loop = cls(_read(table), None, **kept)
        else:
            models = models() if callable(models) else models
            loop = cls(_read(table, models), models, **kept)
            check_systems(loop.table, strategy, source)
            loop.zero_label  # noqa: B018 (computed now: before the labels are read)
        if labels is not None:
            loop.read(labels)
        return loop

    def read(self, labels) -> None:
        """Read the sheets ``labels`` (their designs checked against the table)."""
        self.labels = read_labels(labels, self.table, self.source, self.notes)
        self.__dict__.pop("scores", None)

    @cached_property
    def zero_label(self) -> tuple[pd.DataFrame, list[dict]]:
        """Every system's zero-label estimate: (utterance rows, summary records)."""
        options = EstimateOptions(n_jobs=self.n_jobs)  # every system
        run = estimate_cached(
            *(self.table, self.models, options),
            cache_dir=self.cache_dir,
            name=self.source,
            compute=estimate_frame,
        )
        return run.utterances, run.records

    @cached_property
    def scores(self) -> pd.DataFrame:
        """Every system's true errors on each labelled utterance, scored once a round."""
        return labels_scored(self.table, self.labels, self.models.normaliser)

    def decide(
        self, records: list[dict] | None = None, utterances: pd.DataFrame | None = None
    ) -> list[dict]:
        """``winner.json``: per dataset of two systems or more, the shortlist and, with
        labels, the decision (:func:`werest.estimation.label_round.winner_entries`) from
        ``records`` (default: the zero-label estimate's; they get ``contender``)."""
        if records is None:
            utterances, records = self.zero_label
        return winner_entries(records, self.context(utterances))

    def context(self, utterances: pd.DataFrame | None) -> RoundContext:
        """The round as its decisions and draws read it (:mod:`werest.estimation.label_round`),
        with the estimate's rows ``utterances``; the labels scored once (:attr:`scores`)."""
        return RoundContext(
            self.table,
            self.models.normaliser,
            self.labels,
            self.winner,
            utterances,
            self.cache_dir,
            self.n_jobs,
            self.scores if self.labels is not None else None,
        )

    def apply_labels(
        self, records: list[dict], utterances: pd.DataFrame, settings: LabelSettings, seed: int
    ):
        """The prediction-powered estimates of the labelled datasets, into ``records``
        (:func:`werest.estimation.labels.apply_labels`), the labels scored once a round
        (:attr:`scores`)."""
        estimates = labelled_estimates(utterances, self.labels, self.scores, settings, seed=seed)
        return apply_labels(records, estimates, self.labels, settings)

    def labelled(self, run, settings: LabelSettings, seed: int) -> Labelled:
        """What the labels make of an estimate ``run`` (an
        :class:`~werest.estimation.pipeline.EstimateRun` of this table, its records updated
        in place): the prediction-powered records and their warnings, the paired
        differences and ``winner.json``."""
        labelled = self.apply_labels(run.records, run.utterances, settings, seed)
        warnings = [*run.warnings, *labelled.warnings]
        attach_warnings(run.records, warnings)
        decisions = self.decide(run.records, run.utterances)
        return Labelled(run.records, warnings, labelled.pairs, decisions)

    def draw(
        self,
        budget: int,
        *,
        strategy: str = "winner",
        seed: int = 0,
        uniform_share: float = 0.5,
        strata: int = 4,
    ) -> Draw:
        """The next sheet: ``budget`` draws per dataset by ``strategy`` (``winner``: the
        next draws of the decision, none for a dataset already ``decided`` or ``good``;
        ``random``, ``active``, ``stratified``: :func:`werest.estimation.sampling.
        draw_sample`), the sheet numbered after the sheets read."""
        strategy = resolve_strategy(strategy, self.table)
        number = next_sheet(self.labels)  # the sheet records it; its draws' seed
        decisions = None
        if strategy == "winner":
            sheet, decisions = self._winner_sheet(budget, seed, number)
        else:
            sheet = self._design_sheet(budget, strategy, seed, uniform_share, strata, number)
        if self.labels is not None:
            sheet = filled(sheet, self.labels)
        draw = Draw(sheet, strategy, decisions)
        if strategy in ("active", "stratified"):
            draw.widths, draw.pilots = self._promise(budget, strategy, uniform_share)
        return draw

    def _winner_sheet(self, budget: int, seed: int, number: int):
        utterances, records = self.zero_label
        rows, decisions = winner_draw(records, self.context(utterances), budget, seed=seed)
        rows = rows.merge(utterance_list(self.table), on=UTTERANCE, how="left").assign(
            strategy="winner",
            inclusion_probability=lambda r: (  # each dataset's draws: its budget
                1
                - (1 - r["selection_probability"]) ** r.groupby("dataset")["draws"].transform("sum")
            ),
        )
        return as_sheet(rows, budget, number), decisions

    def _design_sheet(self, budget, strategy, seed, uniform_share, strata, number):
        utterances = utterance_list(self.table)
        if self.labels is not None and strategy == "random":  # the next of one random sample
            utterances = utterances[~labelled(utterances, self.labels)]
        scores = None
        if strategy != "random":
            score = mean_predicted_wer if strategy == "stratified" else labelling_scores
            scores = score(self.zero_label[0])
        return draw_sample(
            utterances,
            budget,
            strategy,
            seed,
            scores=scores,
            uniform_share=uniform_share,
            strata=strata,
            sheet_number=number,
        )

    def _promise(self, budget: int, strategy: str, uniform_share: float):
        """The half-width to expect per dataset (:func:`expected_half_width`) under this
        sheet's design, measured on the labels already in (a pilot) where there are some;
        and the pilot's labelled draws per dataset it measured."""
        estimated = self.zero_label[0]
        probabilities = None
        if strategy == "active":
            probabilities = draw_probabilities(labelling_scores(estimated), uniform_share)
        pilot = None
        if self.labels is not None:
            settings = LabelSettings(interval="t")
            measured = labelled_estimates(estimated, self.labels, self.scores, settings)
            pilot = {name: (draws.m, est.se) for name, (draws, est) in measured.items()}
        widths = expected_half_width(estimated, budget, probabilities=probabilities, pilot=pilot)
        return widths, {name: m for name, (m, _) in (pilot or {}).items()}


def resolve_strategy(strategy: str, table: pd.DataFrame | str | Path) -> str:
    """``auto``: ``active`` where the table has two systems (it measures best,
    docs/few_labels.md), else ``random``; any other strategy as it is."""
    if strategy != AUTO:
        return strategy
    frame = _read(table)
    return "active" if frame["system"].nunique() >= 2 else "random"


def _read(table: pd.DataFrame | str | Path, models: Models | None = None) -> pd.DataFrame:
    """The table validated, its model's evidence columns read as numbers."""
    from werest.estimation.estimate import input_features

    numeric = input_features(models) if models is not None else ()
    if isinstance(table, pd.DataFrame):
        return validate_table(table, numeric=numeric)
    return read_table(table, numeric=numeric)


def labelled(utterances: pd.DataFrame, labels: pd.DataFrame) -> np.ndarray:
    """Which of ``utterances`` the labels already transcribe."""
    done = pd.MultiIndex.from_frame(labels[UTTERANCE].astype(str))
    return pd.MultiIndex.from_frame(utterances[UTTERANCE].astype(str)).isin(done)


def filled(sheet: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """The sheet with the references the labels already give (a redrawn utterance costs no
    new label)."""
    known = labels.drop_duplicates(UTTERANCE).set_index(UTTERANCE)["reference"]
    keys = pd.MultiIndex.from_frame(sheet[UTTERANCE].astype(str))
    known.index = pd.MultiIndex.from_frame(known.index.to_frame().astype(str))
    found = known.reindex(keys).to_numpy()
    sheet["reference"] = np.where(pd.notna(found), found, sheet["reference"])
    return sheet


def check_systems(table: pd.DataFrame, strategy: str, source) -> None:
    """A strategy that needs the model's predictions needs two systems or more."""
    systems = sorted(table["system"].unique())
    if len(systems) < 2:
        raise InputError(
            f"the input holds one system ({systems[0]}): strategy={strategy} needs the model's "
            "predictions, which need at least two systems' hypotheses of the same utterances; "
            "use strategy=random",
            path=source,
        )


def refuse_filled_sheet(out: str | Path) -> None:
    """``werest sample`` never overwrites a file that holds someone's work: ``out`` may be
    replaced only when it is absent, or a sheet whose references are all empty (a draw made
    again, nothing transcribed yet). Anything else is an InputError naming it and a free
    name (:func:`free_sheet_name`)."""
    path = Path(out)
    if not path.exists():
        return
    held = _transcripts_in(path)
    if held == 0:
        return
    what = "is not an empty sheet" if held is None else f"holds {held} transcript(s)"
    raise InputError(
        f"{what}: werest sample never overwrites it; write the next sheet to "
        f"out={free_sheet_name(path)} (and keep this one in labels=)",
        path=path,
    )


def _transcripts_in(path: Path) -> int | None:
    """The filled ``reference`` cells of a sheet at ``path`` (None: not a sheet werest can
    read as one, so not werest's to replace)."""
    if path.is_dir():
        return None
    try:
        rows = pd.read_csv(path, dtype=str, keep_default_na=False, sep=None, engine="python")
    except (OSError, ValueError, UnicodeDecodeError, pd.errors.ParserError):
        return None
    columns = {str(c).strip().lstrip("\ufeff").lower() for c in rows.columns}
    if not {"utt_id", "reference"} <= columns:
        return None
    reference = next(
        c for c in rows.columns if str(c).strip().lstrip("\ufeff").lower() == "reference"
    )
    return int((rows[reference].str.strip() != "").sum())


def free_sheet_name(path: str | Path) -> Path:
    """A name beside ``path`` that no file has: its number raised (``s1.csv`` → ``s2.csv``),
    or ``-2``, ``-3``... added to a name without one."""
    path = Path(path)
    stem, suffix = path.stem, path.suffix
    digits = len(stem) - len(stem.rstrip("0123456789"))
    base, number = (stem[:-digits], int(stem[-digits:])) if digits else (f"{stem}-", 1)
    while True:
        number += 1
        candidate = path.with_name(f"{base}{number}{suffix}")
        if not candidate.exists():
            return candidate
