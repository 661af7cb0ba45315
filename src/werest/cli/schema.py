"""Each command's settings: one dataclass per command whose fields carry each setting's type
(the annotation: how the command line's text is read), default, bounds and ``--help`` text.

A setting the library takes is declared once, on its section, and named here
(``seed: int = library(EstimateOptions, "seed")``); a block that builds a section is that
section's fields (:mod:`werest.cli.blocks`); the rest are the command line's own
(:func:`~werest.cli.declare.setting`). :mod:`werest.cli.declare` reads them for Hydra's
defaults, :func:`werest.cli.config.check_settings` and ``--help``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from werest.cli.blocks import (
    ABLATION_FEATURE_SETS,
    FIT_N_JOBS,
    Asr,
    AudioScoring,
    Bootstrap,
    Cases,
    Cluster,
    Data,
    EmbedAudio,
    Embedder,
    Fairness,
    Features,
    FewLabels,
    Interval,
    Lodo,
    LogLevel,
    Model,
    Normaliser,
    Partition,
    Resamples,
    Strategy,
    TranscribeAudio,
    Winner,
    auto_normaliser_setting,
    command,
    embedding_cache_setting,
    estimate_cache_setting,
    features_table_setting,
    few_labels_block,
    log_level_setting,
    model_path_setting,
    n_jobs_setting,
    progress_setting,
    trust_model_setting,
    winner_block,
)
from werest.cli.blocks import (
    SCHEMAS as SCHEMAS,  # re-exported: the classes below fill it (@command)
)
from werest.cli.declare import MISSING, Names, block, library, setting
from werest.estimation.settings import EstimateOptions
from werest.model.settings import TrainingOptions
from werest.ranking.settings import LeaderboardOptions


@command("import")
class ImportSettings:
    format: str = setting(
        MISSING,
        "dighr | thennal10 | sphinx | kaldi | sclite | afrispeech | mubench | svarah | verli "
        "| csv | manifest | hf",
    )
    paths: list[str] = setting(MISSING, "files or folders in the format's original layout")
    out: Path = setting(MISSING, ".parquet, .csv, .tsv or .jsonl")
    reference: Path | None = setting(
        None,
        "kaldi/sclite: the reference file in the same format; verli: LibriSpeech references "
        "(dighr's 190423 folder or its actual.csv)",
    )
    dataset: str | None = setting(
        None,
        "kaldi/sclite/sphinx/csv/manifest/hf/verli: dataset name (default from the layout; "
        "csv: the file's folder name)",
    )
    system: str | None = setting(
        None,
        "kaldi/sclite/csv/manifest/hf: system name for a single hypothesis file (csv default: "
        "the file's stem)",
    )
    id_column: str = setting(
        "id",
        "csv/manifest/hf: the utterance-id column (manifest default: utt_id, id or the "
        "audio file's stem; hf: guessed when there is no 'id')",
    )
    reference_column: str | None = setting(
        "reference",
        "csv/manifest/hf: the reference column (null: none; blank cells = unlabelled; "
        "manifest default: text; hf: guessed when there is no 'reference')",
    )
    hypothesis_column: str = setting(
        "hypothesis",
        "csv/manifest/hf: the hypothesis column (a blank cell = empty hypothesis; manifest "
        "default: pred_text and pred_text_<system>; hf: guessed when there is no "
        "'hypothesis')",
    )
    hypothesis_columns: Names | None = setting(
        None,
        "manifest/hf: several hypothesis columns, one system each (named like the column; "
        "pred_text_<x>: x)",
    )
    streaming: bool = setting(False, "verli: also the streaming variants (<engine>-stream)")


@command("score")
class ScoreSettings:
    cluster: Cluster = block(Cluster)
    partition: Partition = block(Partition)
    bootstrap: Bootstrap = block(Bootstrap)
    input: Path = setting(MISSING)
    output_dir: Path = setting(Path("outputs/score"))
    normaliser: Normaliser | None = auto_normaliser_setting()
    n_jobs: int = n_jobs_setting()


@command("features")
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


@command("embed")
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


@command("transcribe")
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


@command("estimate")
class EstimateSettings:
    cluster: Cluster = block(Cluster)
    partition: Partition = block(Partition)
    input: Path = setting(MISSING)
    target: Names | None = library(EstimateOptions, "target")
    proxy: str | None = library(EstimateOptions, "proxy")
    ranking: Path | None = library(EstimateOptions, "ranking")
    system_order: list[str] | None = library(EstimateOptions, "system_order")
    model_path: Path | None = model_path_setting()
    cer_model_path: Path | None = setting(None, "a CER model (target=cer) to add predicted_cer")
    trust_model: bool = trust_model_setting()
    output_dir: Path = setting(Path("outputs/estimate"))
    labels: Names | None = setting(
        None,
        "a few references (docs/few_labels.md): the filled sheet of werest sample, several "
        "([s0.csv,s1.csv], read in the order of the sheet numbers they record), any table "
        "with dataset, utt_id, reference, or "
        "`input` (the input's own references where only some rows have one); every estimate "
        "becomes prediction-powered and winner.json decides",
    )
    few_labels: FewLabels = few_labels_block()
    winner: Winner = winner_block()
    cache_dir: Path | None = estimate_cache_setting()
    audio_scoring: AudioScoring = block(
        AudioScoring, "score the hypotheses against the table's audio inline (Whisper)"
    )
    missing_hypotheses: str = library(EstimateOptions, "missing_hypotheses")
    chunk_utterances: int = library(EstimateOptions, "chunk_utterances")
    n_jobs: int = library(EstimateOptions, "n_jobs")
    seed: int = library(EstimateOptions, "seed")
    normaliser: Normaliser | None = library(EstimateOptions, "normaliser")


@command("leaderboard")
class LeaderboardSettings:
    cluster: Cluster = block(Cluster)
    partition: Partition = block(Partition)
    bootstrap: Bootstrap = block(Bootstrap)
    input: Path = setting(MISSING)
    output_dir: Path = setting(Path("outputs/leaderboard"))
    title: str | None = setting(
        None, "the web page's title (leaderboard.html; default: werest leaderboard)"
    )
    datasets: Names | None = library(LeaderboardOptions, "datasets")
    exclude_datasets: Names | None = library(LeaderboardOptions, "exclude_datasets")
    model_path: Path | None = model_path_setting()
    cer_model_path: Path | None = setting(
        None, "a CER model adds estimated utterance CER statistics"
    )
    ranking: Path | None = library(LeaderboardOptions, "ranking")
    system_order: list[str] | None = library(LeaderboardOptions, "system_order")
    trust_model: bool = trust_model_setting()
    labels: Names | None = setting(
        None,
        "a few references (docs/few_labels.md): werest sample's filled sheets ([s0.csv,s1.csv]), "
        "any table with dataset, utt_id, reference, or `input`; labelled datasets' estimates, "
        "the ranking and the neighbours' verdicts become prediction-powered, and the decision "
        "of winner.json leads (docs/winner.md)",
    )
    few_labels: FewLabels = few_labels_block()
    winner: Winner = winner_block()
    cache_dir: Path | None = estimate_cache_setting()
    chunk_utterances: int = library(LeaderboardOptions, "chunk_utterances")
    n_jobs: int = library(LeaderboardOptions, "n_jobs")
    fairness: Fairness = block(Fairness)
    normaliser: Normaliser | None = library(LeaderboardOptions, "normaliser")


@command("train")
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
    two_system_views: bool = library(TrainingOptions, "two_system_views")
    proxies: str = library(TrainingOptions, "proxies")
    n_jobs: int = library(TrainingOptions, "n_jobs", default=FIT_N_JOBS)
    seed: int = library(TrainingOptions, "seed")
    features_table: Path | None = features_table_setting()
    calibration: Path | None = setting(
        None, "a LODO cells CSV (werest evaluate experiment=lodo): conformal intervals"
    )
    interval: Interval = block(
        Interval, "werest.model.intervals: Mondrian bins of aWER, scale aWER + offset"
    )


@command("convert-model")
class ConvertModelSettings:
    model_path: Path = setting(MISSING)
    trust_model: bool = setting(
        False, "must be true: you vouch for the file (it is unpickled once)"
    )
    out: Path | None = setting(None, "default: model_path with the .skops suffix")


@command("evaluate")
class EvaluateSettings:
    name: str = setting("four_cases")
    protocol: Literal["four_cases", "lodo", "few_labels", "winner"] = setting(
        "four_cases",
        "four_cases (the paper's) | lodo (leave one domain out: experiment=lodo) | "
        "few_labels | winner (which system is best: experiment=winner)",
    )
    output_dir: Path = setting(Path("experiments/results"))
    normaliser: Normaliser | None = auto_normaliser_setting()
    two_system_views: bool = library(TrainingOptions, "two_system_views")
    proxies: str = library(TrainingOptions, "proxies")
    n_jobs: int = library(TrainingOptions, "n_jobs", default=FIT_N_JOBS)
    features_table: Path | None = features_table_setting()
    seed: int = library(TrainingOptions, "seed")
    predictions: Path | None = setting(
        None,
        "a parquet of held-out predictions (one row per labelled target utterance): "
        "experiment=lodo writes them there; experiment=few_labels reads it when it exists, "
        "else writes it",
    )
    few_labels: Any | None = setting(
        None, "experiment=few_labels sets the budgets and draws (conf/experiment/few_labels.yaml)"
    )
    winner: Any | None = setting(
        None, "experiment=winner sets the simulated users (conf/experiment/winner.yaml)"
    )
    input: Path | None = setting(
        None,
        "experiment=winner: your own table with references instead of the shared data (its "
        "zero-label estimates from model_path's model)",
    )
    cells: Path | None = setting(
        None,
        "experiment=winner: the held-out cells experiment=lodo writes (dataset, system, "
        "domain, awer, wer)",
    )
    log_level: LogLevel = log_level_setting()  # here, as its saved configs have it
    progress: bool = progress_setting()
    cases: Cases = block(Cases, "set by the experiment")
    ablation: Any | None = setting({"feature_sets": ABLATION_FEATURE_SETS})
    bootstrap: Resamples = block(Resamples, "95 % aWER CIs per cell, seeded by `seed`")
    data: Data = block(Data)
    features: Features = block(Features)
    model: Model = block(Model)
    lodo: Lodo = block(Lodo, optional=True)


@command("demo")
class DemoSettings:
    input: Path | None = setting(None, "another transcripts table, if you like")
    model_path: Path | None = model_path_setting()
    output_dir: Path = setting(Path("outputs/demo"))


@command("segmentation")
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


@command("sample")
class SampleSettings:
    input: Path = setting(MISSING)
    budget: int = setting(
        MISSING,
        "utterances per dataset (active: draws, with replacement); a dataset of at most this "
        "many is taken whole",
        minimum=1,
    )
    out: Path = setting(
        Path("to_label.csv"),
        "the labelling sheet: fill its reference column (its config: <out>.config.yaml)",
    )
    strategy: Strategy = setting(
        "auto",
        "auto: active where the input has two systems or more, else random | random: simple "
        "random sample | stratified: by the model's predicted WER | active: drawn more where "
        "the error is uncertain (the best measured: docs/few_labels.md) | winner: drawn where "
        "the contenders disagree, to decide which system is best (docs/winner.md)",
    )
    labels: Names | None = setting(
        None,
        "every sheet labelled so far: the next sheet continues the design (winner: from "
        "the decision they support; random: from the utterances not labelled yet), takes "
        "the next sheet number and has the references they give filled in",
    )
    winner: Winner = winner_block()
    cache_dir: Path | None = estimate_cache_setting()
    seed: int = setting(0, "with each dataset's name, seeds that dataset's draw", minimum=0)
    uniform_share: float = setting(
        0.5,
        "active: share in (0, 1] of each draw spread evenly over the dataset (bounds the weights)",
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
        "stratified/active: the model that predicts each utterance's WER, a file or a shipped "
        "model's name (default, audio); null: default",
    )
    trust_model: bool = trust_model_setting()
    n_jobs: int = n_jobs_setting()
