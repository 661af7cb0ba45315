"""The blocks of settings several commands share, and the settings only the command line has
that several commands declare alike (:mod:`werest.cli.declare` says how).

A block that builds a library section is that section's fields (:func:`~werest.cli.declare.
section`): ``bootstrap.n_resamples`` has :class:`werest.settings.Bootstrap`'s default, bounds
and help, read from the class. A block gives a default of its own only where the command wants
another value on purpose (``evaluate``'s 200 resamples per cell, ``transcribe``'s hour-long
clips). Blocks filled by a config group (``model``, ``asr``, ``embedder``, ``data``,
``features``) are :class:`~werest.cli.declare.Open`: their options (``conf/<group>/*.yaml``) are
choices, not defaults, so these blocks declare only the types of the keys they may hold.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from werest.cli.declare import ABSENT, Names, Open, block, library, section, setting
from werest.estimation.settings import LabelSettings, WinnerSettings
from werest.evaluation.lodo_settings import LodoSettings
from werest.evaluation.settings import FairnessSettings, FourCases
from werest.features.settings import LENGTHS, RATES, TEXT_WITH_COUNTS
from werest.ingest.settings import AudioPolicy
from werest.model.settings import ConformalInterval
from werest.partition.settings import PartitionSettings
from werest.settings import Bootstrap as BootstrapSection
from werest.settings import n_jobs_param

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
#: werest.text.NORMALISERS (tests/unit/test_sections.py checks they agree)
Normaliser = Literal["whisper_english", "whisper_basic", "auto", "none"]
#: werest.estimation.sampling.STRATEGIES (tests/unit/test_sections.py checks they agree)
Strategy = Literal["auto", "random", "stratified", "active", "winner"]
#: worker processes of a command that predicts, scores or reads (estimate, leaderboard, score,
#: features, sample): one, so a small run starts no worker pool
N_JOBS = 1
#: worker processes of a command that fits models (train, evaluate): two, the cores a shared
#: development machine gives one job (``conf/model/*.yaml`` read it as ``${n_jobs}``)
FIT_N_JOBS = 2


def n_jobs_setting() -> Any:
    """``n_jobs`` of a command no section takes it from (:func:`werest.settings.n_jobs_param`)."""
    return library(n_jobs_param(N_JOBS))


#: command -> its settings class (:func:`command`; :mod:`werest.cli.schema` declares them)
SCHEMAS: dict[str, type] = {}


def command(name: str) -> Callable[[type], type]:
    """The settings class of command ``name``, as a dataclass with the settings every command
    has (``log_level``, ``progress``) last unless it declares them elsewhere, registered in
    :data:`SCHEMAS`."""

    def register(cls: type) -> type:
        if "log_level" not in cls.__annotations__:
            cls.__annotations__ = {**cls.__annotations__, "log_level": LogLevel, "progress": bool}
            cls.log_level, cls.progress = log_level_setting(), progress_setting()
        SCHEMAS[name] = dataclass(cls)
        return SCHEMAS[name]

    return register


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


def model_path_setting() -> Any:
    return setting(None, "a model file, or a shipped model's name (default, audio); null: default")


def trust_model_setting() -> Any:
    return setting(
        False, "load a model whose sha256 differs from its card (own files; types still checked)"
    )


def estimate_cache_setting() -> Any:
    """Where the label loop keeps a table's zero-label estimate between rounds."""
    return setting(
        Path(".werest-cache/estimates"),
        "the zero-label estimate of a table (and the winner's contests) is kept here by "
        "content, so the label loop's rounds (labels=, or sample with the model) estimate it "
        "once; null: no cache",
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


Partition = section(PartitionSettings, "werest.partition.engine.Partitioning")
Bootstrap = section(BootstrapSection, "werest.stats.Bootstrap")
#: ``evaluate``'s bootstrap: the resamples of each cell's aWER CI (95 %, seeded by ``seed``)
Resamples = section(
    BootstrapSection,
    "werest.stats.Bootstrap",
    default={"n_resamples": 200},
    help={"n_resamples": "resamples per CI (0: none)"},
    exclude=("confidence", "seed"),
)
EmbedAudio = section(AudioPolicy, "werest.ingest.audio.AudioPolicy")
#: transcribe keeps long recordings whole up to an hour; embed splits SONAR's at 60 s
TranscribeAudio = section(
    AudioPolicy,
    "werest.ingest.audio.AudioPolicy",
    default={"warn_seconds": 600.0, "max_seconds": 3600.0, "segment_seconds": 3600.0},
    help={"max_seconds": "longer clips are cut into equal pieces, each transcribed, texts joined"},
)
FewLabels = section(LabelSettings, "werest.estimation.labels.LabelSettings")
Winner = section(WinnerSettings, "werest.estimation.decision.WinnerSettings")
Fairness = section(FairnessSettings, "werest.evaluation.fairness.FairnessSettings")
#: the shipped model's Mondrian bins
Interval = section(
    ConformalInterval,
    "werest.model.intervals.ConformalInterval",
    default={"bins": [0.1, 0.25, 0.5]},
)
#: the experiment sets it (``experiment=lodo``: null); the names are required here
Cases = section(
    FourCases,
    "werest.evaluation.four_cases.FourCases",
    types={"target_systems": Names, "benchmark_datasets": Names, "wild_datasets": Names | None},
)
#: only ``experiment=lodo`` and its kin have it; they give every value (``panel``:
#: ``${library:werest.features.settings.PANEL_SIZE}``, the panel ``werest estimate`` uses)
Lodo = section(LodoSettings, "", absent=True, types={"held_out": Names | None})


def few_labels_block() -> Any:
    return block(FewLabels, "how labels= is used")


def winner_block() -> Any:
    return block(Winner, "which system is best: winner.json (docs/winner.md)")


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
class AudioScoring:
    """``werest estimate``'s inline audio scoring (docs/audio.md): the Whisper likelihood of
    every hypothesis under its clip (the table's ``audio`` column), added before estimating,
    as ``werest embed embedder=whisper_likelihood`` adds it. Builds nothing itself: the scorer
    is a :class:`werest.features.likelihood.WhisperLikelihood` of ``model``."""

    enabled: bool = setting(
        False,
        "score every hypothesis against its audio before estimating, for a model that reads "
        "the wl_* features (model_path=audio); off by default, measured: "
        "experiments/results/audio_default.md",
    )
    model: str = setting(
        "base",
        "the Whisper scorer: base (99 languages, the scorer models/audio.skops was trained "
        "with) | tiny.en (English) | a CTranslate2 Whisper folder",
    )
    default_language: str | None = setting(
        None, "ISO 639-1 code for rows without `language`; null: Whisper identifies it per clip"
    )
    cache_dir: Path | None = embedding_cache_setting()


#: ``werest evaluate``'s ablation: name -> feature columns, each fitted with ablation.model
#: (``ablation=null`` or ``{}`` skips the ablation); the names are the features stage's
ABLATION_FEATURE_SETS: dict[str, Any] = {
    "pwer only": [RATES[0]],
    "pcer only": [RATES[1]],
    "both": list(RATES),
    "both + lengths": [*RATES, *LENGTHS],
    "full text": "${features.columns}",
    "text with counts": list(TEXT_WITH_COUNTS),
}
