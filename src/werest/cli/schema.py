"""The commands' settings as dataclass schemas: one place that says which keys a command has
and what type each one is.

Every ``conf/<command>.yaml`` is described by a schema here. After composition,
:func:`werest.cli.config.check_settings` checks the composed config against it both ways: a
key the YAML has and the schema lacks, or the reverse, is an error, so renaming a setting in
one place and not the other fails at once (and in ``tests/unit/test_config_schema.py``)
instead of silently losing its type check. Leaves are typed
``Any`` for OmegaConf, with the werest type in :class:`Setting` metadata: the check coerces
what a command line gives (``n_jobs='2'``) and words its errors for users ("n_jobs must be a
whole number other than 0, got 'x'").

Config-group nodes (``model``, ``asr``, ``embedder``, ``data``, ``features``) come from
``conf/<group>/*.yaml`` files with their own keys, so their blocks are *open*: only the typed
keys they hold are checked.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from typing import Any, ClassVar

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
NORMALISERS = ("whisper_english", "whisper_basic", "auto", "none")
SAMPLING_STRATEGIES = ("random", "stratified", "active")  # werest.estimation.sampling.STRATEGIES


@dataclass(frozen=True)
class Setting:
    """The type of one setting.

    Parameters
    ----------
    kind : ``int``, ``float``, ``bool``, ``str``, ``"path"`` (text; numbers become text),
        ``"names"`` (one name or a list of names, all text), ``"list"`` (a list of text) or
        ``"any"`` (a block the stage reads itself: only its presence is checked).
    minimum : the smallest allowed number (inclusive), if any.
    nullable : whether ``null`` is allowed.
    choices : the allowed values (compared case-insensitively for text), if restricted.
    nonzero : refuse 0 (``n_jobs``: -1 means every core, 0 means nothing).
    """

    kind: type | str
    minimum: float | None = None
    nullable: bool = False
    choices: tuple[str, ...] | None = None
    nonzero: bool = False


def typed(kind: type | str, **rules: Any) -> Any:
    """A schema field of werest type ``kind`` (see :class:`Setting`); ``Any`` to OmegaConf."""
    return field(default=None, metadata={"setting": Setting(kind, **rules)})


def block(schema: type, *, optional: bool = False) -> Any:
    """A nested block; ``optional``: the command's config may lack it (e.g. ``lodo`` outside
    ``experiment=lodo``)."""
    return field(default_factory=schema, metadata={"optional": optional})


class Open:
    """Marks a block filled by a config group: keys it holds beyond the typed ones are fine."""

    OPEN: ClassVar[bool] = True


def _whole() -> Any:
    return typed(int, minimum=0)


def _positive() -> Any:
    return typed(int, minimum=1)


def _seconds() -> Any:
    return typed(float, minimum=0)


def _path() -> Any:
    return typed("path")


def _optional_path() -> Any:
    return typed("path", nullable=True)


def _log_level() -> Any:
    return typed(str, choices=LOG_LEVELS)


def _n_jobs() -> Any:
    return typed(int, nonzero=True)


def _normaliser() -> Any:
    return typed(str, choices=NORMALISERS, nullable=True)


def _target() -> Any:
    """The class ``hydra.utils.instantiate`` builds a block into (``_target_``)."""
    return typed(str)


# --------------------------------------------------------------------------- blocks


@dataclass
class Bootstrap:
    """Builds a :class:`werest.stats.Bootstrap`."""

    _target_: Any = _target()
    n_resamples: Any = _whole()
    confidence: Any = typed(float, minimum=0)
    seed: Any = _whole()


@dataclass
class Resamples:
    """``evaluate``'s bootstrap: builds a :class:`werest.stats.Bootstrap` of the resamples of
    each cell's aWER CI (95 %, seeded by the run's ``seed``)."""

    _target_: Any = _target()
    n_resamples: Any = _whole()


@dataclass
class Audio:
    """Builds a :class:`werest.ingest.audio.AudioPolicy`."""

    _target_: Any = _target()
    sample_rate: Any = _positive()
    min_seconds: Any = _seconds()
    warn_seconds: Any = _seconds()
    max_seconds: Any = _seconds()
    long_clips: Any = typed(str, choices=("split", "reject"))
    segment_seconds: Any = _seconds()
    silence_peak: Any = _seconds()


@dataclass
class Model(Open):
    n_splits: Any = typed(int, minimum=2)
    ridge_alpha: Any = typed(float, minimum=0)
    alpha: Any = typed(float, minimum=0)
    clip_max: Any = typed(float, minimum=0, nullable=True)
    models: Any = typed("list")


@dataclass
class Data(Open):
    max_rows_per_domain: Any = typed(int, minimum=1, nullable=True)


@dataclass
class Features(Open):
    columns: Any = typed("list")


@dataclass
class Embedder(Open):
    batch_size: Any = _positive()
    cpu_threads: Any = _whole()
    chunk_seconds: Any = _seconds()
    text_form: Any = typed(str, choices=("sentence", "lower", "raw"))


@dataclass
class Asr(Open):
    batch_size: Any = _positive()
    beam_size: Any = _positive()
    cpu_threads: Any = _whole()
    vad_filter: Any = typed(bool)
    word_timestamps: Any = typed(bool)


@dataclass
class Interval:
    """Builds a :class:`werest.model.intervals.ConformalInterval`."""

    _target_: Any = _target()
    level: Any = typed(float, minimum=0)
    offset: Any = typed(float, minimum=0)
    bins: Any = typed("any")  # numbers, checked by ConformalInterval
    min_cells: Any = _positive()


@dataclass
class Lodo(Interval):
    """Builds a :class:`werest.evaluation.lodo.LodoSettings`: the interval's keys and the held-out
    domains."""

    held_out: Any = typed("names", nullable=True)
    panel: Any = typed(int, minimum=1, nullable=True)


@dataclass
class Cases:
    """Builds a :class:`werest.evaluation.four_cases.FourCases` (``experiment=lodo`` sets it to
    null)."""

    _target_: Any = _target()
    source_system: Any = typed(str)
    target_systems: Any = typed("names")
    benchmark_datasets: Any = typed("names")
    wild_datasets: Any = typed("names", nullable=True)
    unseen_wild_targets: Any = typed(bool)
    rationale: Any = typed(str, nullable=True)


@dataclass
class Fairness:
    """Builds a :class:`werest.evaluation.fairness.FairnessSettings`."""

    _target_: Any = _target()
    enabled: Any = typed(bool)
    categories: Any = typed("list")
    weights: Any = typed("any")
    min_group_size: Any = _positive()
    small_groups: Any = typed(str, choices=("pool", "drop"))
    alpha: Any = typed(float, minimum=0)
    dispersion: Any = typed(str, choices=("pearson", "none"))
    covariates: Any = typed("list")
    speaker: Any = typed(str, nullable=True)
    model: Any = typed(str, choices=("glm", "glmm"))
    quadrature_nodes: Any = _positive()


# --------------------------------------------------------------------------- commands


@dataclass
class ImportSettings:
    format: Any = typed(str)
    paths: Any = typed("list")
    out: Any = _path()
    reference: Any = _optional_path()
    dataset: Any = typed(str, nullable=True)
    system: Any = typed(str, nullable=True)
    id_column: Any = typed(str)
    reference_column: Any = typed(str, nullable=True)
    hypothesis_column: Any = typed(str)
    streaming: Any = typed(bool)
    log_level: Any = _log_level()


@dataclass
class Partition:
    """Bounded-memory runs (werest.partition.estimate)."""

    rows: Any = typed(int, minimum=0, nullable=True)
    count: Any = typed(int, minimum=1, nullable=True)
    dir: Any = _optional_path()
    per_process: Any = typed(int, minimum=0, nullable=True)


@dataclass
class Cluster:
    """Dask (werest.partition.cluster): ``conf/cluster/*.yaml``."""

    kind: Any = typed(str, choices=("none", "local"))
    address: Any = typed(str, nullable=True)
    workers: Any = _positive()
    retries: Any = _whole()


@dataclass
class ScoreSettings:
    input: Any = _path()
    output_dir: Any = _path()
    normaliser: Any = _normaliser()
    n_jobs: Any = _n_jobs()
    bootstrap: Bootstrap = block(Bootstrap)
    partition: Partition = block(Partition)
    cluster: Cluster = block(Cluster)
    log_level: Any = _log_level()


@dataclass
class FeaturesSettings:
    input: Any = _path()
    out: Any = _path()
    ranking: Any = _optional_path()
    proxy: Any = typed(str, nullable=True)
    targets: Any = typed("names", nullable=True)
    normaliser: Any = _normaliser()
    n_jobs: Any = _n_jobs()
    partition: Partition = block(Partition)
    cluster: Cluster = block(Cluster)
    log_level: Any = _log_level()


@dataclass
class EmbedSettings:
    embedder: Embedder = block(Embedder)
    input: Any = _path()
    transcripts: Any = _path()
    out: Any = _optional_path()
    text_column: Any = typed(str)
    default_language: Any = typed(str, nullable=True)
    cache_dir: Any = _optional_path()
    audio: Audio = block(Audio)
    cluster: Cluster = block(Cluster)
    log_level: Any = _log_level()


@dataclass
class TranscribeSettings:
    asr: Asr = block(Asr)
    input: Any = _path()
    out: Any = _path()
    system: Any = typed(str, nullable=True)
    dataset: Any = typed("names", nullable=True)
    limit: Any = typed(int, minimum=0, nullable=True)
    chunk_size: Any = _positive()
    audio_suffixes: Any = typed("list")
    audio: Audio = block(Audio)
    cluster: Cluster = block(Cluster)
    log_level: Any = _log_level()


@dataclass
class _Estimating:
    """What ``estimate`` and ``leaderboard`` share: the input, the models and how proxies are
    chosen."""

    input: Any = _path()
    output_dir: Any = _path()
    ranking: Any = _optional_path()
    system_order: Any = typed("list", nullable=True)
    model_path: Any = _optional_path()
    cer_model_path: Any = _optional_path()
    trust_model: Any = typed(bool)
    chunk_utterances: Any = _positive()
    n_jobs: Any = _n_jobs()
    normaliser: Any = _normaliser()
    log_level: Any = _log_level()


@dataclass
class FewLabels:
    """Builds a :class:`werest.estimation.labels.LabelSettings`."""

    _target_: Any = _target()
    interval: Any = typed(str, choices=("bootstrap", "t", "normal"))
    level: Any = typed(float, minimum=0)
    min_labels: Any = _positive()
    n_resamples: Any = _positive()
    recalibrate: Any = typed(bool)


@dataclass
class EstimateSettings(_Estimating):
    target: Any = typed("names", nullable=True)
    labels: Any = _optional_path()
    few_labels: FewLabels = block(FewLabels)
    proxy: Any = typed(str, nullable=True)
    missing_hypotheses: Any = typed(str, choices=("exclude", "deletions"))
    seed: Any = _whole()
    partition: Partition = block(Partition)
    cluster: Cluster = block(Cluster)


@dataclass
class LeaderboardSettings(_Estimating):
    title: Any = typed(str, nullable=True)
    labels: Any = _optional_path()
    few_labels: FewLabels = block(FewLabels)
    datasets: Any = typed("names", nullable=True)
    exclude_datasets: Any = typed("names", nullable=True)
    bootstrap: Bootstrap = block(Bootstrap)
    fairness: Fairness = block(Fairness)
    partition: Partition = block(Partition)
    cluster: Cluster = block(Cluster)


@dataclass
class TrainSettings:
    data: Data = block(Data)
    features: Features = block(Features)
    model: Model = block(Model)
    name: Any = typed(str)
    output_dir: Any = _path()
    target: Any = typed(str, choices=("wer", "cer"))
    train_systems: Any = typed("names", nullable=True)
    normaliser: Any = _normaliser()
    two_system_views: Any = typed(bool)
    proxies: Any = typed(str, choices=("label_free", "ranking"))
    n_jobs: Any = _n_jobs()
    seed: Any = _whole()
    features_table: Any = _optional_path()
    calibration: Any = _optional_path()
    interval: Interval = block(Interval)
    log_level: Any = _log_level()


@dataclass
class ConvertModelSettings:
    model_path: Any = _path()
    trust_model: Any = typed(bool)
    out: Any = _optional_path()
    log_level: Any = _log_level()


@dataclass
class EvaluateSettings:
    name: Any = typed(str)
    protocol: Any = typed(str, choices=("four_cases", "lodo", "few_labels"))
    predictions: Any = _optional_path()
    output_dir: Any = _path()
    normaliser: Any = _normaliser()
    two_system_views: Any = typed(bool)
    proxies: Any = typed(str, choices=("label_free", "ranking"))
    n_jobs: Any = _n_jobs()
    features_table: Any = _optional_path()
    seed: Any = _whole()
    log_level: Any = _log_level()
    cases: Cases = block(Cases)
    ablation: Any = typed("any", nullable=True)
    bootstrap: Resamples = block(Resamples)
    data: Data = block(Data)
    features: Features = block(Features)
    model: Model = block(Model)
    lodo: Lodo = block(Lodo, optional=True)
    few_labels: Any = typed("any", nullable=True)


@dataclass
class DemoSettings:
    input: Any = _optional_path()
    model_path: Any = _optional_path()
    output_dir: Any = _path()
    log_level: Any = _log_level()


@dataclass
class SegmentationSettings:
    reference: Any = _path()
    hypothesis: Any = _path()
    tolerance: Any = _seconds()
    tier: Any = typed(str)
    reference_system: Any = typed(str, nullable=True)
    hypothesis_system: Any = typed(str, nullable=True)
    output_dir: Any = _path()
    log_level: Any = _log_level()


@dataclass
class SampleSettings:
    input: Any = _path()
    budget: Any = _positive()
    out: Any = _path()
    strategy: Any = typed(str, choices=SAMPLING_STRATEGIES)
    seed: Any = _whole()
    uniform_share: Any = typed(float)  # in (0, 1]: werest.estimation.sampling.check_design
    strata: Any = _positive()
    model_path: Any = _optional_path()
    trust_model: Any = typed(bool)
    n_jobs: Any = _n_jobs()
    log_level: Any = _log_level()


#: command -> its schema
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


@dataclass(frozen=True)
class Entry:
    """One key of a schema, flattened: its dotted key and what is known about it."""

    key: str
    setting: Setting | None  # None: a block
    open: bool = False  # a block whose extra keys are fine
    optional: bool = False  # a block the config may lack


def entries(schema: type, prefix: str = "") -> list[Entry]:
    """The schema's keys and blocks, depth first, as dotted keys."""
    out: list[Entry] = []
    for item in fields(schema):
        key = f"{prefix}{item.name}"
        nested = item.default_factory if item.default_factory is not MISSING else None
        if nested is not None and is_dataclass(nested):
            is_open = bool(getattr(nested, "OPEN", False))
            out.append(Entry(key, None, open=is_open, optional=item.metadata.get("optional")))
            out += entries(nested, f"{key}.")
        else:
            out.append(Entry(key, item.metadata["setting"]))
    return out


def settings_of(command: str) -> dict[str, Setting]:
    """``{dotted key: Setting}`` of a command (empty for an unknown command)."""
    schema = SCHEMAS.get(command)
    if schema is None:
        return {}
    return {entry.key: entry.setting for entry in entries(schema) if entry.setting is not None}
