"""Each command's settings, declared once: one dataclass per command whose fields carry each
setting's type (the annotation), default and ``--help`` text.

A field is ``name: <type> = setting(default, "help", minimum=..., maximum=..., closed=...,
nonzero=...)``; a nested block is ``name: <Block> = block(<Block>, "help")``. Every number
declares its bounds, as scikit-learn's ``Interval`` does: ``minimum`` and ``maximum`` (None:
unbounded on that side), ``closed`` (which ends are allowed: ``both``, ``left``, ``right`` or
``neither``), and ``nonzero`` (``n_jobs``: joblib's count, where -1 is every core). From these
declarations

* :func:`defaults_of` builds the command's defaults, which Hydra composes first (the
  ConfigStore node ``settings_<command>`` named at the top of ``conf/<command>.yaml``'s defaults
  list; the YAML file itself holds only its usage comment and the config groups it names);
* :func:`werest.cli.config.check_settings` validates the composed config: each annotation gives
  the werest type (:class:`Setting`: ``int``, ``float``, ``bool``, ``str``, ``Literal[...]``
  for a choice, ``X | None`` for "null allowed", ``Path`` for a path, ``list[str]``, ``Names``
  for one name or a list of names, ``Any`` for a block the stage reads itself) and the
  keywords add the ranges, so a command line's ``n_jobs='2'`` becomes 2 and ``n_jobs=x`` is a
  one-line error ("n_jobs must be a whole number other than 0, got 'x'");
* :func:`werest.cli.help.command_help` prints every setting with its default and help.

The defaults reach Hydra as a plain mapping, not a structured config: OmegaConf's own type
errors never reach a user; the check above words them.

Blocks filled by a config group (``model``, ``asr``, ``embedder``, ``data``, ``features``) are
*open* (:class:`Open`): their options (``conf/<group>/*.yaml``) are choices, not defaults, so
these blocks declare only the types of the keys they may hold (``setting()`` without a
default), and keys beyond those are fine. ``cluster``, ``partition`` and ``bootstrap`` are
config groups too, but closed: their defaults are declared here and each option file holds only
what differs (``conf/cluster/local.yaml``: ``kind: local``).

A block that builds a library object (its ``_target_``: :class:`werest.stats.Bootstrap`,
:class:`werest.estimation.labels.LabelSettings`, ...) does not restate that class's defaults:
its fields default to :data:`LIBRARY`, read from the class when a default is needed (the
composed config, ``--help``, a settings object), so each is declared once, in the library. A
block gives a default of its own only where the command wants another value on purpose
(``evaluate``'s 200 resamples per cell, ``transcribe``'s hour-long clips).
"""

from __future__ import annotations

import copy
import os
import types
import typing
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

#: a required setting's default (OmegaConf's spelling of "missing", which Hydra reports)
MISSING = "???"
#: one name or a list of names (``target=a`` or ``target=[a,b]``); always text
Names = str | list[str]
#: which ends of a number's bounds are allowed (scikit-learn's ``Interval(closed=...)``)
Closed = Literal["both", "left", "right", "neither"]
#: the most resamples a bootstrap may draw: beyond it the run takes hours (the leaderboard's
#: pairs) or its resample matrices exceed any machine's memory (few_labels' interval)
MAX_RESAMPLES = 1_000_000


class _Absent:
    """No default: the block's config group gives the value (``setting()`` in open blocks)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


class _Library:
    """The default of the class the block's ``_target_`` builds, read from that class when a
    default is needed (so the library declares it once and importing this module stays cheap)."""

    def __repr__(self) -> str:
        return "LIBRARY"


LIBRARY: Any = _Library()


def library_default(target: str, name: str) -> Any:
    """The default of parameter ``name`` of the class ``target`` (a dotted path) names, as a
    config holds it (tuples as lists), read from the class's source without importing it
    (:func:`werest.cli.declared.library_default`): ``--help`` imports no numerical library."""
    from werest.cli.declared import library_default as declared

    return declared(target, name)


def declared_default(schema: type, item: Any) -> Any:
    """A field's default as declared: its own, or (:data:`LIBRARY`) the library class's: the
    one the field names (``setting(LIBRARY, library=...)``, a command's setting that a
    library section of the same name takes) or else the one its block's ``_target_`` builds."""
    default = item.metadata["default"]
    if default is LIBRARY:
        target = (
            item.metadata.get("library")
            or next(f for f in fields(schema) if f.name == "_target_").metadata["default"]
        )
        return library_default(target, item.name)
    return default


@dataclass(frozen=True)
class Setting:
    """The werest type of one setting, derived from its annotation and keywords.

    Parameters
    ----------
    kind : ``int``, ``float``, ``bool``, ``str``, ``"path"`` (text; numbers become text),
        ``"names"`` (one name or a list of names, all text), ``"list"`` (a list of text) or
        ``"any"`` (a block the stage reads itself: only its presence is checked).
    minimum : the smallest allowed number, if any.
    nullable : whether ``null`` is allowed.
    choices : the allowed values (compared case-insensitively for text), if restricted.
    nonzero : refuse 0 (``n_jobs``: -1 means every core, 0 means nothing).
    maximum : the largest allowed number, if any.
    closed : which of ``minimum`` and ``maximum`` are allowed themselves, as in scikit-learn's
        ``Interval``: ``both`` (``[min, max]``), ``left`` (``[min, max)``), ``right``
        (``(min, max]``) or ``neither`` (``(min, max)``).
    why : where the bounds come from, said when a number is refused (``n_jobs``: this
        machine's cores).
    """

    kind: type | str
    minimum: float | None = None
    nullable: bool = False
    choices: tuple[str, ...] | None = None
    nonzero: bool = False
    maximum: float | None = None
    closed: Closed = "both"
    why: str = ""

    def allows(self, number: float) -> bool:
        """Whether ``number`` lies within the declared bounds (and is not a refused 0)."""
        low_ok = self.minimum is None or (
            number >= self.minimum if self.closed in ("both", "left") else number > self.minimum
        )
        high_ok = self.maximum is None or (
            number <= self.maximum if self.closed in ("both", "right") else number < self.maximum
        )
        return low_ok and high_ok and not (self.nonzero and number == 0)

    def bounds(self) -> str:
        """The bounds in words: ``>= 1``, ``in (0, 1)``, ``in [0, 1000000]``; '' if none."""
        low, high = self.minimum, self.maximum
        if low is not None and high is not None:
            left = "[" if self.closed in ("both", "left") else "("
            right = "]" if self.closed in ("both", "right") else ")"
            return f"in {left}{_number(low)}, {_number(high)}{right}"
        if low is not None:
            return f"{'>=' if self.closed in ('both', 'left') else '>'} {_number(low)}"
        if high is not None:
            return f"{'<=' if self.closed in ('both', 'right') else '<'} {_number(high)}"
        return ""


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def setting(
    default: Any = ABSENT,
    help: str = "",
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    closed: Closed = "both",
    nonzero: bool = False,
    why: str = "",
    library: str | None = None,
) -> Any:
    """A setting's field: its ``default`` (``MISSING``, ``???``: required; :data:`ABSENT`: given by
    a config group; :data:`LIBRARY`: the library declares it, in the class ``library`` names, a
    section the command builds from its settings of the same names, or else in the class the
    block's ``_target_`` builds), its ``--help`` text and the rules its annotation cannot say: a
    number's bounds (``minimum``, ``maximum``, which ends ``closed`` includes) and
    ``nonzero``."""
    metadata = {
        "default": default,
        "help": help,
        "minimum": minimum,
        "maximum": maximum,
        "closed": closed,
        "nonzero": nonzero,
        "why": why,
        "library": library,
    }
    if isinstance(default, list | dict):
        return field(default_factory=lambda: copy.deepcopy(default), metadata=metadata)
    return field(default=default, metadata=metadata)


def block(schema: type, help: str = "", *, optional: bool = False) -> Any:
    """A nested block of settings with its ``--help`` text; ``optional``: the command's config
    may lack it (``lodo`` outside ``experiment=lodo``), and it has no defaults of its own."""
    return field(default_factory=schema, metadata={"help": help, "optional": optional})


class Open:
    """Marks a block filled by a config group: keys it holds beyond the typed ones are fine.

    In a command's settings object (:func:`werest.cli.config.settings_from`) its typed keys
    are attributes (None where the chosen option leaves one out) and :meth:`as_dict` gives the
    whole block, every key the option holds, as the stage that reads it expects (a plain
    mapping: ``build_regressor(settings.model.as_dict())``)."""

    OPEN: ClassVar[bool] = True

    def as_dict(self) -> dict[str, Any]:
        """The whole block as the config group's option and the overrides made it."""
        return copy.deepcopy(getattr(self, "_values", {}))


LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
Normaliser = Literal["whisper_english", "whisper_basic", "auto", "none"]
#: werest.estimation.sampling.STRATEGIES
Strategy = Literal["auto", "random", "stratified", "active", "winner"]


# --------------------------------------------------------------------------- shared settings
# Settings several commands have, each declared once here with its default and help.


def log_level_setting() -> Any:
    return setting("WARNING", "INFO shows progress; errors are one line on stderr either way")


def progress_setting() -> Any:
    return setting(
        True, "progress bars on stderr while a stage runs (shown only when stderr is a terminal)"
    )


def auto_normaliser_setting() -> Any:
    return setting(
        "auto",
        "auto: whisper_english, or per row by `language` (whisper_basic; zh/ja/th on characters)",
    )


#: The library sections commands build from their top-level settings of the same names, where
#: those settings' defaults are declared (``setting(LIBRARY, library=...)``)
ESTIMATE_OPTIONS = "werest.estimation.run.EstimateOptions"
LEADERBOARD_OPTIONS = "werest.partition.leaderboard.LeaderboardOptions"
TRAINING_OPTIONS = "werest.model.training.TrainingOptions"


def two_system_views_setting() -> Any:
    return setting(
        LIBRARY,
        "also train on each row seen as if only it and its proxy existed",
        library=TRAINING_OPTIONS,
    )


def training_proxies_setting() -> Any:
    return setting(
        LIBRARY,
        "training rows' proxies: label_free (as werest estimate picks them for a user, per "
        "domain) | ranking (the best system on the training labels)",
        library=TRAINING_OPTIONS,
    )


def training_seed_setting() -> Any:
    return setting(LIBRARY, minimum=0, library=TRAINING_OPTIONS)


def model_path_setting() -> Any:
    return setting(None, "a model file, or a shipped model's name (default, audio); null: default")


def trust_model_setting() -> Any:
    return setting(
        False, "load a model whose sha256 differs from its card (own files; types still checked)"
    )


def model_normaliser_setting(library: str) -> Any:
    return setting(
        LIBRARY, "null: the model's own (another one is refused unless equivalent)", library=library
    )


#: worker processes of a command that predicts, scores or reads (estimate, leaderboard, score,
#: features, sample): one, so a small run starts no worker pool
N_JOBS = 1
#: worker processes of a command that fits models (train, evaluate): two, the cores a shared
#: development machine gives one job (``conf/model/*.yaml`` read it as ``${n_jobs}``)
FIT_N_JOBS = 2


#: n_jobs' upper bound, per core this process may run on: beyond a few workers per core, more
#: only add memory (each holds its chunk of the table) and switching (``n_jobs=40`` on 2
#: cores started 42 processes). Negative counts (-1: every core) never exceed the cores.
N_JOBS_PER_CORE = 4
N_JOBS_HELP = f"worker processes (-1: every core; at most {N_JOBS_PER_CORE} per core)"


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity, e.g. a container's or taskset's
    share), else the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def n_jobs_setting(default: int = N_JOBS) -> Any:
    """``n_jobs``, declared once: joblib's count (-1: every core; 0 is refused), at most
    :data:`N_JOBS_PER_CORE` per available core (a bound of this machine: a higher value is
    refused in one line, before any work)."""
    cores = available_cores()
    return setting(
        default,
        N_JOBS_HELP,
        nonzero=True,
        maximum=max(N_JOBS_PER_CORE * cores, default),
        why=f"at most {N_JOBS_PER_CORE} per core, and this machine gives werest {cores}",
    )


def chunk_utterances_setting(library: str) -> Any:
    return setting(
        LIBRARY, "utterances per processing chunk (memory bound)", minimum=1, library=library
    )


def estimate_cache_setting() -> Any:
    """Where the label loop keeps a table's zero-label estimate between rounds."""
    return setting(
        Path(".werest-cache/estimates"),
        (
            "the zero-label estimate of a table (and the winner's contests) is kept here by "
            "content, so the label loop's rounds (labels=, or sample with the model) estimate "
            "it once; null: no cache"
        ),
    )


def embedding_cache_setting() -> Any:
    """Where audio scores and embeddings are kept by content between runs (embed, estimate)."""
    return setting(Path(".werest-cache/embeddings"), "null: no on-disk cache")


def features_table_setting() -> Any:
    return setting(
        None,
        "a feature table (werest features + werest embed) whose extra columns (similarity, "
        "wl_*) join the data by key: features=paper/full",
    )


# --------------------------------------------------------------------------- blocks


@dataclass
class Cluster:
    """Dask (werest.partition.cluster). By default no cluster: partitions run one after another
    in this process; ``cluster=local`` (``conf/cluster/local.yaml``) starts a Dask LocalCluster,
    ``cluster.address=tcp://HOST:8786`` joins a running scheduler (dask-jobqueue,
    dask-kubernetes, ``dask scheduler`` + ``dask worker``: docs/scale.md)."""

    kind: Literal["none", "local"] = setting(
        "none", "none: partitions in this process; local: a Dask LocalCluster (cluster=local)"
    )
    address: str | None = setting(None, "a running scheduler, e.g. tcp://10.0.0.5:8786")
    workers: int = setting(2, "kind=local only", minimum=1)
    retries: int = setting(
        2,
        "times a partition that raised is retried (a lost worker's are rescheduled anyway)",
        minimum=0,
    )


@dataclass
class Partition:
    """Bounded memory (docs/scale.md, werest.partition.estimate): the input read a chunk at a time
    and split into utterance-hash partitions, each processed alone; the outputs are those of an
    in-memory run. Builds a :class:`werest.partition.engine.Partitioning`."""

    _target_: str = setting("werest.partition.engine.Partitioning")
    rows: int | None = setting(
        LIBRARY,
        (
            "input rows read at a time; null: automatic (a Parquet folder or a file >= 1 GB, "
            "1,000,000 rows); 0: never"
        ),
        minimum=0,
    )
    count: int | None = setting(
        LIBRARY,
        (
            "utterance-hash partitions, one in memory per worker at a time; null: one per 500,000"
            " input rows, at least 16"
        ),
        minimum=1,
    )
    dir: Path | None = setting(
        LIBRARY,
        (
            "where the input is split (default: beside the command's output; on a cluster, a "
            "folder every worker reads)"
        ),
    )
    per_process: int | None = setting(
        LIBRARY,
        (
            "without a cluster: partitions a child process runs before a fresh one replaces it "
            "(gives its heap back); 0: all in this process"
        ),
        minimum=0,
    )


@dataclass
class Bootstrap:
    """Percentile bootstrap CIs of corpus WER/CER: utterances resampled with replacement, seeded.
    Builds a :class:`werest.stats.Bootstrap`."""

    _target_: str = setting("werest.stats.Bootstrap")
    n_resamples: int = setting(LIBRARY, "resamples per interval", minimum=0, maximum=MAX_RESAMPLES)
    confidence: float = setting(
        LIBRARY, "the intervals' level", minimum=0, maximum=1, closed="neither"
    )
    seed: int = setting(LIBRARY, "the same seed gives the same intervals", minimum=0)


@dataclass
class Resamples:
    """``evaluate``'s bootstrap: builds a :class:`werest.stats.Bootstrap` of the resamples of
    each cell's aWER CI (95 %, seeded by the run's ``seed``)."""

    _target_: str = setting("werest.stats.Bootstrap")
    n_resamples: int = setting(200, "resamples per CI (0: none)", minimum=0, maximum=MAX_RESAMPLES)


@dataclass
class EmbedAudio:
    """``werest embed``'s long-clip rule: builds a :class:`werest.ingest.audio.AudioPolicy`."""

    _target_: str = setting("werest.ingest.audio.AudioPolicy")
    sample_rate: int = setting(LIBRARY, minimum=1)
    min_seconds: float = setting(LIBRARY, minimum=0)
    warn_seconds: float = setting(LIBRARY, "warn above", minimum=0)
    max_seconds: float = setting(
        LIBRARY, "split or reject above (SONAR fails above ~80 s)", minimum=0
    )
    long_clips: Literal["split", "reject"] = setting(LIBRARY, "split | reject")
    segment_seconds: float = setting(LIBRARY, minimum=0)
    silence_peak: float = setting(LIBRARY, minimum=0)


@dataclass
class TranscribeAudio:
    """``werest transcribe``'s audio loading: builds a :class:`werest.ingest.audio.AudioPolicy`."""

    _target_: str = setting("werest.ingest.audio.AudioPolicy")
    sample_rate: int = setting(LIBRARY, minimum=1)
    min_seconds: float = setting(LIBRARY, "shorter: too_short", minimum=0)
    warn_seconds: float = setting(600.0, minimum=0)
    max_seconds: float = setting(
        3600.0, "longer clips are cut into equal pieces, each transcribed, texts joined", minimum=0
    )
    long_clips: Literal["split", "reject"] = setting(LIBRARY)
    segment_seconds: float = setting(3600.0, minimum=0)
    silence_peak: float = setting(LIBRARY, "peak below this: silent", minimum=0)


@dataclass
class FewLabels:
    """How ``labels=`` is used: builds a :class:`werest.estimation.labels.LabelSettings`."""

    _target_: str = setting("werest.estimation.labels.LabelSettings")
    interval: Literal["bootstrap", "t", "normal"] = setting(
        LIBRARY,
        (
            "t (delta method, m - 1 df; held 90 % in every held-out domain) | normal | bootstrap "
            "(percentile over the labelled utterances); none narrower than independent Poisson "
            "errors"
        ),
    )
    level: float = setting(
        LIBRARY, "the interval's coverage", minimum=0, maximum=1, closed="neither"
    )
    min_labels: int = setting(
        LIBRARY,
        "fewer labelled utterances for a system: its zero-label estimate is kept, with a warning",
        minimum=1,
    )
    n_resamples: int = setting(
        LIBRARY,
        "bootstrap resamples (interval=bootstrap; refused when they cannot fit in memory)",
        minimum=1,
        maximum=MAX_RESAMPLES,
    )
    recalibrate: bool = setting(
        LIBRARY,
        (
            "refit the predicted errors on the labels, cross-fitted by utterance (learns the "
            "errors every system shares); the estimate stays unbiased either way"
        ),
    )
    shrink: bool = setting(
        LIBRARY,
        (
            "lean each system's estimate on its zero-label one where the labels do not "
            "contradict it (empirical-Bayes weight over the dataset's systems); the interval "
            "stays the prediction-powered one; off: it brought the zero-label estimate's bias on "
            "the best system back (docs/winner.md)"
        ),
    )
    shared_lambda: bool = setting(
        LIBRARY,
        (
            "one power-tuning λ for every system of a dataset (the median of theirs): the "
            "estimates stay paired and rank the best system as the labels alone do; false: "
            "one λ per system"
        ),
    )


def few_labels_block() -> Any:
    return block(FewLabels, "how labels= is used")


@dataclass
class Winner:
    """Which system is best: builds a :class:`werest.estimation.decision.WinnerSettings`."""

    _target_: str = setting("werest.estimation.decision.WinnerSettings")
    margin: float = setting(
        LIBRARY,
        (
            "points of WER: good means the leader is at most this much worse than the best "
            "(the margin is the larger of margin and relative_margin)"
        ),
        minimum=0,
    )
    relative_margin: float = setting(
        LIBRARY,
        "the margin as a share of the leader's WER (0.05: 5 % of it)",
        minimum=0,
        maximum=1,
        closed="left",
    )
    alpha: float = setting(
        LIBRARY,
        (
            "at most this share of stops (at the first decided or good, looking after every "
            "batch) name a system more than the margin worse than the true best, and a "
            "regret_bound is exceeded as rarely"
        ),
        minimum=0,
        maximum=1,
        closed="neither",
    )
    bounds: Literal["betting", "eb", "asymptotic"] = setting(
        LIBRARY,
        (
            "betting: confidence sequences valid at any number of labels, whatever the tail "
            "| eb: empirical Bernstein, valid too, wider | asymptotic: from the central limit "
            "theorem; it assumes the draws have seen the tail and can stop on the wrong "
            "system where a rare hallucination was not drawn"
        ),
    )


def winner_block() -> Any:
    return block(Winner, "which system is best: winner.json (docs/winner.md)")


@dataclass
class Fairness:
    """Builds a :class:`werest.evaluation.fairness.FairnessSettings`."""

    _target_: str = setting("werest.evaluation.fairness.FairnessSettings")
    enabled: bool = setting(LIBRARY, "false: no audit")
    categories: list[str] = setting(LIBRARY, "columns audited where present")
    weights: Any = setting(LIBRARY, "category -> weight in the overall score (default 1)")
    min_group_size: int = setting(LIBRARY, "smaller groups are pooled (or dropped)", minimum=1)
    small_groups: Literal["pool", "drop"] = setting(LIBRARY, "pool | drop")
    alpha: float = setting(
        LIBRARY,
        "penalty: score * p/alpha when p < alpha",
        minimum=0,
        maximum=1,
        closed="neither",
    )
    dispersion: Literal["pearson", "none"] = setting(
        LIBRARY, "pearson (quasi-likelihood LRT) | none (plain LRT)"
    )
    covariates: list[str] = setting(LIBRARY, "entered as log(value) where every row has one")
    speaker: str | None = setting(LIBRARY, "cluster-robust Wald test when this column exists")
    model: Literal["glm", "glmm"] = setting(
        LIBRARY, "glm | glmm (Poisson GLMM, per-speaker random intercept, LRT)"
    )
    quadrature_nodes: int = setting(
        LIBRARY, "adaptive Gauss-Hermite nodes per speaker (1 = Laplace)", minimum=1
    )


@dataclass
class Interval:
    """Builds a :class:`werest.model.intervals.ConformalInterval`."""

    _target_: str = setting("werest.model.intervals.ConformalInterval")
    level: float = setting(LIBRARY, minimum=0, maximum=1, closed="neither")
    offset: float = setting(LIBRARY, minimum=0)
    bins: Any = setting([0.1, 0.25, 0.5])
    min_cells: int = setting(LIBRARY, minimum=1)


@dataclass
class Cases:
    """Builds a :class:`werest.evaluation.four_cases.FourCases`; the experiment sets it
    (``experiment=lodo``: null)."""

    _target_: str = setting("werest.evaluation.four_cases.FourCases")
    source_system: str = setting(MISSING)
    target_systems: Names = setting(MISSING)
    benchmark_datasets: Names = setting(MISSING)
    wild_datasets: Names | None = setting(LIBRARY)
    unseen_wild_targets: bool = setting(LIBRARY, "case 4 also evaluates W systems no B dataset has")
    rationale: str | None = setting(LIBRARY)


@dataclass
class Model(Open):
    """The ``model`` group (``conf/model/``): the typed keys its options may hold."""

    n_splits: int = setting(ABSENT, minimum=2)
    ridge_alpha: float = setting(ABSENT, minimum=0)
    alpha: float = setting(ABSENT, minimum=0)
    clip_max: float | None = setting(ABSENT, minimum=0)
    models: list[str] = setting(ABSENT)


@dataclass
class Data(Open):
    """The ``data`` group (``conf/data/``)."""

    max_rows_per_domain: int | None = setting(ABSENT, minimum=1)


@dataclass
class Features(Open):
    """The ``features`` group (``conf/features/``)."""

    columns: list[str] = setting(ABSENT)


@dataclass
class Embedder(Open):
    """The ``embedder`` group (``conf/embedder/``)."""

    batch_size: int = setting(ABSENT, minimum=1)
    cpu_threads: int = setting(ABSENT, minimum=0)
    chunk_seconds: float = setting(ABSENT, minimum=0)
    text_form: Literal["sentence", "lower", "raw"] = setting(ABSENT)


@dataclass
class Asr(Open):
    """The ``asr`` group (``conf/asr/``)."""

    batch_size: int = setting(ABSENT, minimum=1)
    beam_size: int = setting(ABSENT, minimum=1)
    cpu_threads: int = setting(ABSENT, minimum=0)
    vad_filter: bool = setting(ABSENT)
    word_timestamps: bool = setting(ABSENT)


@dataclass
class Lodo:
    """Builds a :class:`werest.evaluation.lodo.LodoSettings`: the interval's keys and the held-out
    domains. Only ``experiment=lodo`` and its kin have it; they give every value (``panel``:
    ``${library:werest.features.agreement.PANEL_SIZE}``, the panel ``werest estimate`` uses)."""

    _target_: str = setting(ABSENT)
    level: float = setting(ABSENT, minimum=0, maximum=1, closed="neither")
    offset: float = setting(ABSENT, minimum=0)
    bins: Any = setting(ABSENT)
    min_cells: int = setting(ABSENT, minimum=1)
    held_out: Names | None = setting(ABSENT)
    panel: int | None = setting(
        ABSENT,
        "held-out systems compared with their N best-ranked others (null: every other)",
        minimum=1,
    )


#: ``werest evaluate``'s ablation: name -> feature columns, each fitted with ablation.model
#: (``ablation=null`` or ``{}`` skips the ablation)
ABLATION_FEATURE_SETS: dict[str, Any] = {
    "pwer only": ["pwer"],
    "pcer only": ["pcer"],
    "both": ["pwer", "pcer"],
    "both + lengths": ["pwer", "pcer", "hyp_words", "proxy_words", "hyp_chars", "proxy_chars"],
    "full text": "${features.columns}",
    # the text set with absolute lengths and counts instead of rates (werest's first design)
    "text with counts": [
        "pwer",
        "pcer",
        "hyp_words",
        "proxy_words",
        "hyp_chars",
        "proxy_chars",
        "pwer_sub",
        "pwer_del",
        "pwer_ins",
        "pcer_sub",
        "pcer_del",
        "pcer_ins",
        "n_others",
        "pwer_mean",
        "pwer_min",
        "pwer_max",
        "pwer_median",
        "pcer_mean",
        "pcer_min",
        "proxy_pwer_others",
        "proxy_pcer_others",
        "est_ref_words",
        "len_ratio",
        "len_ratio_others",
        "proxy_len_ratio",
    ],
}


# --------------------------------------------------------------------------- commands


@dataclass
class ImportSettings:
    format: str = setting(
        MISSING,
        (
            "dighr | thennal10 | sphinx | kaldi | sclite | afrispeech | mubench | svarah | verli "
            "| csv | manifest | hf"
        ),
    )
    paths: list[str] = setting(MISSING, "files or folders in the format's original layout")
    out: Path = setting(MISSING, ".parquet, .csv, .tsv or .jsonl")
    reference: Path | None = setting(
        None,
        (
            "kaldi/sclite: the reference file in the same format; verli: LibriSpeech references "
            "(dighr's 190423 folder or its actual.csv)"
        ),
    )
    dataset: str | None = setting(
        None,
        (
            "kaldi/sclite/sphinx/csv/manifest/hf/verli: dataset name (default from the layout; "
            "csv: the file's folder name)"
        ),
    )
    system: str | None = setting(
        None,
        (
            "kaldi/sclite/csv/manifest/hf: system name for a single hypothesis file (csv default: "
            "the file's stem)"
        ),
    )
    id_column: str = setting(
        "id",
        (
            "csv/manifest/hf: the utterance-id column (manifest default: utt_id, id or the "
            "audio file's stem; hf: guessed when there is no 'id')"
        ),
    )
    reference_column: str | None = setting(
        "reference",
        (
            "csv/manifest/hf: the reference column (null: none; blank cells = unlabelled; "
            "manifest default: text; hf: guessed when there is no 'reference')"
        ),
    )
    hypothesis_column: str = setting(
        "hypothesis",
        (
            "csv/manifest/hf: the hypothesis column (a blank cell = empty hypothesis; manifest "
            "default: pred_text and pred_text_<system>; hf: guessed when there is no "
            "'hypothesis')"
        ),
    )
    hypothesis_columns: Names | None = setting(
        None,
        (
            "manifest/hf: several hypothesis columns, one system each (named like the column; "
            "pred_text_<x>: x)"
        ),
    )
    streaming: bool = setting(False, "verli: also the streaming variants (<engine>-stream)")
    log_level: LogLevel = log_level_setting()
    progress: bool = progress_setting()


@dataclass
class ScoreSettings:
    cluster: Cluster = block(Cluster)
    partition: Partition = block(Partition)
    bootstrap: Bootstrap = block(Bootstrap)
    input: Path = setting(MISSING)
    output_dir: Path = setting(Path("outputs/score"))
    normaliser: Normaliser | None = auto_normaliser_setting()
    n_jobs: int = n_jobs_setting()
    log_level: LogLevel = log_level_setting()
    progress: bool = progress_setting()


@dataclass
class FeaturesSettings:
    cluster: Cluster = block(Cluster)
    partition: Partition = block(Partition)
    input: Path = setting(MISSING)
    out: Path = setting(MISSING)
    ranking: Path | None = setting(
        None, "a ranking.json from `werest score`; null: rank on the input's references"
    )
    proxy: str | None = setting(None, "an explicit proxy system for every target")
    targets: Names | None = setting(None, "target systems (default: all)")
    normaliser: Normaliser | None = auto_normaliser_setting()
    n_jobs: int = n_jobs_setting()
    log_level: LogLevel = log_level_setting()
    progress: bool = progress_setting()


@dataclass
class EmbedSettings:
    embedder: Embedder = block(Embedder)
    cluster: Cluster = block(Cluster)
    input: Path = setting(MISSING, "feature table: one row per (dataset, utt_id, system)")
    transcripts: Path = setting(MISSING, "transcripts table with `audio` (and `language`) columns")
    out: Path | None = setting(None, "default: rewrite `input` in place")
    text_column: str = setting("hypothesis")
    default_language: str | None = setting(
        None, "ISO 639-1 code for rows without `language`, e.g. en"
    )
    cache_dir: Path | None = embedding_cache_setting()
    audio: EmbedAudio = block(EmbedAudio, "the long-clip rule: werest.ingest.audio")
    log_level: LogLevel = log_level_setting()
    progress: bool = progress_setting()


@dataclass
class TranscribeSettings:
    asr: Asr = block(Asr)
    cluster: Cluster = block(Cluster)
    input: Path = setting(
        MISSING, "table with `audio` (utterance or transcripts table), or a folder of audio"
    )
    out: Path = setting(
        MISSING, ".parquet, .csv, .tsv or .jsonl; may already exist (rows kept, resumed)"
    )
    system: str | None = setting(None, "system name of the new rows; null: the backend's `name`")
    dataset: Names | None = setting(
        None, "folder input: its dataset name (default: folder name); table: keep these"
    )
    limit: int | None = setting(
        None, "transcribe only the first N utterances (after the dataset filter)", minimum=0
    )
    chunk_size: int = setting(50, "utterances between two (atomic) writes of `out`", minimum=1)
    audio_suffixes: list[str] = setting(
        ["wav", "flac", "mp3", "sph", "ogg"], "folder input: files to take"
    )
    audio: TranscribeAudio = block(
        TranscribeAudio, "loading (werest.ingest.audio): 16 kHz mono; bad clips get a status"
    )
    log_level: LogLevel = log_level_setting()
    progress: bool = progress_setting()


@dataclass
class AudioScoring:
    """``werest estimate``'s inline audio scoring (docs/audio.md): the Whisper likelihood of
    every hypothesis under its clip (the table's ``audio`` column), added before estimating,
    as ``werest embed embedder=whisper_likelihood`` adds it. Builds nothing itself: the scorer
    is a :class:`werest.features.likelihood.WhisperLikelihood` of ``model``."""

    enabled: bool = setting(
        False,
        (
            "score every hypothesis against its audio before estimating, for a model that reads "
            "the wl_* features (model_path=audio); off by default, measured: "
            "experiments/results/audio_default.md"
        ),
    )
    model: str = setting(
        "base",
        (
            "the Whisper scorer: base (99 languages, the scorer models/audio.skops was trained "
            "with) | tiny.en (English) | a CTranslate2 Whisper folder"
        ),
    )
    default_language: str | None = setting(
        None, "ISO 639-1 code for rows without `language`; null: Whisper identifies it per clip"
    )
    cache_dir: Path | None = embedding_cache_setting()


@dataclass
class EstimateSettings:
    cluster: Cluster = block(Cluster)
    partition: Partition = block(Partition)
    input: Path = setting(MISSING)
    target: Names | None = setting(
        LIBRARY,
        "a system, a list [a,b], or null: every system except the proxy",
        library=ESTIMATE_OPTIONS,
    )
    proxy: str | None = setting(
        LIBRARY,
        "one proxy for every target; default: the best other system by `ranking`",
        library=ESTIMATE_OPTIONS,
    )
    ranking: Path | None = setting(
        LIBRARY,
        (
            "proxy order: null = label-free (the systems' agreement, names unused); model = the "
            "model's saved ranking; references = the input's references; or a ranking.json from "
            "werest score"
        ),
        library=ESTIMATE_OPTIONS,
    )
    system_order: list[str] | None = setting(
        LIBRARY,
        (
            "your own order, best first, e.g. [large-v3,base,tiny]; unlisted systems follow, "
            "label-free"
        ),
        library=ESTIMATE_OPTIONS,
    )
    model_path: Path | None = model_path_setting()
    cer_model_path: Path | None = setting(None, "a CER model (target=cer) to add predicted_cer")
    trust_model: bool = trust_model_setting()
    output_dir: Path = setting(Path("outputs/estimate"))
    labels: Names | None = setting(
        None,
        (
            "a few references (docs/few_labels.md): the filled sheet of werest sample, several "
            "([s0.csv,s1.csv], read in the order of the sheet numbers they record), any table "
            "with dataset, utt_id, reference, or "
            "`input` (the input's own references where only some rows have one); every estimate "
            "becomes prediction-powered and winner.json decides"
        ),
    )
    few_labels: FewLabels = few_labels_block()
    winner: Winner = winner_block()
    cache_dir: Path | None = estimate_cache_setting()
    audio_scoring: AudioScoring = block(
        AudioScoring, "score the hypotheses against the table's audio inline (Whisper)"
    )
    missing_hypotheses: Literal["exclude", "deletions"] = setting(
        LIBRARY,
        (
            "a system's missing hypothesis for an utterance of its dataset: exclude (warned) | "
            "deletions (an empty output)"
        ),
        library=ESTIMATE_OPTIONS,
    )
    chunk_utterances: int = chunk_utterances_setting(ESTIMATE_OPTIONS)
    n_jobs: int = n_jobs_setting()
    seed: int = setting(LIBRARY, "bootstrap seed", minimum=0, library=ESTIMATE_OPTIONS)
    normaliser: Normaliser | None = model_normaliser_setting(ESTIMATE_OPTIONS)
    log_level: LogLevel = log_level_setting()
    progress: bool = progress_setting()


@dataclass
class LeaderboardSettings:
    cluster: Cluster = block(Cluster)
    partition: Partition = block(Partition)
    bootstrap: Bootstrap = block(Bootstrap)
    input: Path = setting(MISSING)
    output_dir: Path = setting(Path("outputs/leaderboard"))
    title: str | None = setting(
        None, "the web page's title (leaderboard.html; default: werest leaderboard)"
    )
    datasets: Names | None = setting(None, "keep only these datasets (null: all)")
    exclude_datasets: Names | None = setting([])
    model_path: Path | None = model_path_setting()
    cer_model_path: Path | None = setting(
        None, "a CER model adds estimated utterance CER statistics"
    )
    ranking: Path | None = setting(
        LIBRARY,
        (
            "proxy order as in werest estimate: null = label-free; model; references; or a "
            "ranking.json"
        ),
        library=LEADERBOARD_OPTIONS,
    )
    system_order: list[str] | None = setting(
        LIBRARY,
        "your own order, best first, e.g. [a,b,c]; unlisted systems follow, label-free",
        library=LEADERBOARD_OPTIONS,
    )
    trust_model: bool = trust_model_setting()
    labels: Names | None = setting(
        None,
        (
            "a few references (docs/few_labels.md): the filled sheet of werest sample, several "
            "([s0.csv,s1.csv]), any table with dataset, utt_id, reference, or `input` (the "
            "input's own references where only some rows have one); labelled datasets' "
            "estimates, the ranking and the neighbours' verdicts become prediction-powered, and "
            "the decision of winner.json leads (docs/winner.md)"
        ),
    )
    few_labels: FewLabels = few_labels_block()
    winner: Winner = winner_block()
    cache_dir: Path | None = estimate_cache_setting()
    chunk_utterances: int = chunk_utterances_setting(LEADERBOARD_OPTIONS)
    n_jobs: int = n_jobs_setting()
    fairness: Fairness = block(Fairness)
    normaliser: Normaliser | None = model_normaliser_setting(LEADERBOARD_OPTIONS)
    log_level: LogLevel = log_level_setting()
    progress: bool = progress_setting()


@dataclass
class TrainSettings:
    data: Data = block(Data)
    features: Features = block(Features)
    model: Model = block(Model)
    name: str = setting("default")
    output_dir: Path = setting(Path("models"))
    target: Literal["wer", "cer"] = setting("wer", "wer | cer")
    train_systems: Names | None = setting(
        None, "target systems whose rows train the model (null: all)"
    )
    normaliser: Normaliser | None = auto_normaliser_setting()
    two_system_views: bool = two_system_views_setting()
    proxies: Literal["label_free", "ranking"] = training_proxies_setting()
    n_jobs: int = n_jobs_setting(FIT_N_JOBS)
    seed: int = training_seed_setting()
    features_table: Path | None = features_table_setting()
    calibration: Path | None = setting(
        None, "a LODO cells CSV (werest evaluate experiment=lodo): conformal intervals"
    )
    interval: Interval = block(
        Interval, "werest.model.intervals: Mondrian bins of aWER, scale aWER + offset"
    )
    log_level: LogLevel = log_level_setting()
    progress: bool = progress_setting()


@dataclass
class ConvertModelSettings:
    model_path: Path = setting(MISSING)
    trust_model: bool = setting(
        False, "must be true: you vouch for the file (it is unpickled once)"
    )
    out: Path | None = setting(None, "default: model_path with the .skops suffix")
    log_level: LogLevel = log_level_setting()
    progress: bool = progress_setting()


@dataclass
class EvaluateSettings:
    name: str = setting("four_cases")
    protocol: Literal["four_cases", "lodo", "few_labels", "winner"] = setting(
        "four_cases",
        (
            "four_cases (the paper's) | lodo (leave one domain out: experiment=lodo) | "
            "few_labels | winner (which system is best: experiment=winner)"
        ),
    )
    output_dir: Path = setting(Path("experiments/results"))
    normaliser: Normaliser | None = auto_normaliser_setting()
    two_system_views: bool = two_system_views_setting()
    proxies: Literal["label_free", "ranking"] = training_proxies_setting()
    n_jobs: int = n_jobs_setting(FIT_N_JOBS)
    features_table: Path | None = features_table_setting()
    seed: int = training_seed_setting()
    predictions: Path | None = setting(
        None,
        (
            "a parquet of held-out predictions (one row per labelled target utterance): "
            "experiment=lodo writes them there; experiment=few_labels reads it when it exists, "
            "else writes it"
        ),
    )
    few_labels: Any | None = setting(
        None, "experiment=few_labels sets the budgets and draws (conf/experiment/few_labels.yaml)"
    )
    winner: Any | None = setting(
        None, "experiment=winner sets the simulated users (conf/experiment/winner.yaml)"
    )
    input: Path | None = setting(
        None,
        (
            "experiment=winner: your own table with references instead of the shared data (its "
            "zero-label estimates from model_path's model)"
        ),
    )
    cells: Path | None = setting(
        None,
        (
            "experiment=winner: the held-out cells experiment=lodo writes (dataset, system, "
            "domain, awer, wer)"
        ),
    )
    log_level: LogLevel = log_level_setting()
    progress: bool = progress_setting()
    cases: Cases = block(Cases, "set by the experiment")
    ablation: Any | None = setting({"feature_sets": ABLATION_FEATURE_SETS})
    bootstrap: Resamples = block(Resamples, "95 % aWER CIs per cell, seeded by `seed`")
    data: Data = block(Data)
    features: Features = block(Features)
    model: Model = block(Model)
    lodo: Lodo = block(Lodo, optional=True)


@dataclass
class DemoSettings:
    input: Path | None = setting(None, "another transcripts table, if you like")
    model_path: Path | None = model_path_setting()
    output_dir: Path = setting(Path("outputs/demo"))
    log_level: LogLevel = log_level_setting()
    progress: bool = progress_setting()


@dataclass
class SegmentationSettings:
    reference: Path = setting(MISSING)
    hypothesis: Path = setting(MISSING)
    tolerance: float = setting(
        0.02, "seconds: a boundary within this distance of a reference one is a hit", minimum=0
    )
    tier: str = setting("words", "the TextGrid interval tier holding words (else the first one)")
    reference_system: str | None = setting(
        None, "a transcripts table as reference: the system whose asr_words to use"
    )
    hypothesis_system: str | None = setting(
        None, "the same for the hypothesis (null: the table's only such system)"
    )
    output_dir: Path = setting(Path("outputs/segmentation"))
    log_level: LogLevel = log_level_setting()
    progress: bool = progress_setting()


@dataclass
class SampleSettings:
    input: Path = setting(MISSING)
    budget: int = setting(
        MISSING,
        (
            "utterances per dataset (active: draws, with replacement); a dataset of at most this "
            "many is taken whole"
        ),
        minimum=1,
    )
    out: Path = setting(
        Path("to_label.csv"),
        "the labelling sheet: fill its reference column (its config: <out>.config.yaml)",
    )
    strategy: Strategy = setting(
        "auto",
        (
            "auto: active where the input has two systems or more, else random | random: simple "
            "random sample | stratified: by the model's predicted WER | active: drawn more where "
            "the error is uncertain (the best measured: docs/few_labels.md) | winner: drawn where "
            "the contenders disagree, to decide which system is best (docs/winner.md)"
        ),
    )
    labels: Names | None = setting(
        None,
        (
            "every sheet labelled so far: the next sheet continues the design (winner: from "
            "the decision they support; random: from the utterances not labelled yet), takes "
            "the next sheet number and has the references they give filled in"
        ),
    )
    winner: Winner = winner_block()
    cache_dir: Path | None = estimate_cache_setting()
    seed: int = setting(0, "with each dataset's name, seeds that dataset's draw", minimum=0)
    uniform_share: float = setting(
        0.5,
        (
            "active: share in (0, 1] of each draw spread evenly over the dataset (bounds the "
            "weights)"
        ),
        minimum=0,
        maximum=1,
        closed="right",
    )
    strata: int = setting(
        4,
        "stratified: the most equal-count groups by mean predicted WER (never more than budget)",
        minimum=1,
    )
    model_path: Path | None = setting(
        None,
        (
            "stratified/active: the model that predicts each utterance's WER, a file or a shipped "
            "model's name (default, audio); null: default"
        ),
    )
    trust_model: bool = trust_model_setting()
    n_jobs: int = n_jobs_setting()
    log_level: LogLevel = log_level_setting()
    progress: bool = progress_setting()


#: command -> its settings
SCHEMAS: dict[str, type] = {
    "import": ImportSettings,
    "score": ScoreSettings,
    "features": FeaturesSettings,
    "embed": EmbedSettings,
    "transcribe": TranscribeSettings,
    "estimate": EstimateSettings,
    "leaderboard": LeaderboardSettings,
    "train": TrainSettings,
    "convert-model": ConvertModelSettings,
    "evaluate": EvaluateSettings,
    "demo": DemoSettings,
    "segmentation": SegmentationSettings,
    "sample": SampleSettings,
}


# --------------------------------------------------------------------------- reading them


@dataclass(frozen=True)
class Entry:
    """One key of a schema, flattened: its dotted key and its declaration."""

    key: str
    setting: Setting | None  # None: a block
    default: Any = ABSENT  # a block's: ABSENT
    help: str = ""
    open: bool = False  # a block whose extra keys are fine
    optional: bool = False  # a block the config may lack


_SIMPLE = {int: int, float: float, bool: bool, str: str, Path: "path", Any: "any"}


def setting_of(annotation: Any, metadata: typing.Mapping[str, Any]) -> Setting:
    """The :class:`Setting` a field's annotation and ``setting()`` keywords declare."""
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    members = typing.get_args(annotation) if union else (annotation,)
    nullable = type(None) in members
    kinds = [m for m in members if m is not type(None)]
    rules = {
        "minimum": metadata.get("minimum"),
        "maximum": metadata.get("maximum"),
        "closed": metadata.get("closed", "both"),
        "nonzero": metadata.get("nonzero", False),
        "why": metadata.get("why", ""),
    }
    if set(kinds) == {str, list[str]}:
        return Setting("names", nullable=nullable, **rules)
    if len(kinds) != 1:
        raise TypeError(f"no werest type for {annotation!r}")
    kind = kinds[0]
    if typing.get_origin(kind) is Literal:
        return Setting(str, nullable=nullable, choices=typing.get_args(kind), **rules)
    if kind == list[str]:
        return Setting("list", nullable=nullable, **rules)
    if kind not in _SIMPLE:
        raise TypeError(f"no werest type for {annotation!r}")
    return Setting(_SIMPLE[kind], nullable=nullable, **rules)


def entries(schema: type, prefix: str = "") -> list[Entry]:
    """The schema's keys and blocks, depth first, as dotted keys, in declaration order."""
    hints = typing.get_type_hints(schema)
    out: list[Entry] = []
    for item in fields(schema):
        key, annotation = f"{prefix}{item.name}", hints[item.name]
        if is_dataclass(annotation):
            out.append(
                Entry(
                    key,
                    None,
                    help=item.metadata.get("help", ""),
                    open=bool(getattr(annotation, "OPEN", False)),
                    optional=bool(item.metadata.get("optional")),
                )
            )
            out += entries(annotation, f"{key}.")
        else:
            declared = item.metadata
            out.append(
                Entry(
                    key,
                    setting_of(annotation, declared),
                    default=declared_default(schema, item),
                    help=declared["help"],
                )
            )
    return out


def settings_of(command: str) -> dict[str, Setting]:
    """``{dotted key: Setting}`` of a command (empty for an unknown command)."""
    schema = SCHEMAS.get(command)
    if schema is None:
        return {}
    return {entry.key: entry.setting for entry in entries(schema) if entry.setting is not None}


def help_texts(schema: type) -> dict[str, str]:
    """``{dotted key: help}`` of every declared setting and block that has a help text."""
    return {entry.key: entry.help for entry in entries(schema) if entry.help}


def defaults_of(schema: type) -> dict[str, Any]:
    """The schema's defaults as a plain mapping (``???`` for a required setting; paths as text),
    without what a config group gives (:data:`ABSENT`) and without optional blocks."""
    hints = typing.get_type_hints(schema)
    out: dict[str, Any] = {}
    for item in fields(schema):
        annotation = hints[item.name]
        if is_dataclass(annotation):
            if not item.metadata.get("optional"):
                out[item.name] = defaults_of(annotation)
            continue
        default = declared_default(schema, item)
        if default is ABSENT:
            continue
        out[item.name] = str(default) if isinstance(default, Path) else copy.deepcopy(default)
    return out
