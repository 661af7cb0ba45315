"""Speech–text likelihood: how probable each system's hypothesis is under the audio.

``werest embed embedder=whisper_likelihood`` adds, per (utterance, system) row of a feature
table, what a Whisper model (CTranslate2, the ``[audio]`` extra; by default the bundled
tiny.en, English only; ``embedder.model=base`` scores any of Whisper base's 99 languages)
thinks of the hypothesis when it is *forced* to read it (teacher forcing with
``ctranslate2.models.Whisper.align``): every token's probability given the audio and the
tokens before it. Each clip is encoded once; all the texts of that clip are scored against the
same encoder output, so an extra system costs one decoder pass, not one encoder pass.

Columns (``wl_`` for Whisper likelihood):

=============================  ===============================================================
``wl_mean_logprob``            mean token log-probability
``wl_min_logprob``             the least likely token's log-probability
``wl_low_share``               share of tokens with p < 0.5
``wl_expected_errors``         Σ over words of (1 − p(word)), p(word) = product of its tokens'
                               probabilities, divided by the number of words: an expected
                               word error rate under the model
``wl_tokens``                  number of scored tokens
``wl_mean_logprob_vs_proxy``,  the row's value minus the proxy's on the same audio (the
``wl_expected_errors_vs_proxy`` feature table's ``proxy`` column). Agreement features are
                               symmetric (the target against the proxy says as much as the
                               proxy against the target); these say which of the two the
                               audio favours.
``wl_decode_pwer``,            pWER and pCER of the hypothesis against the scorer's *own*
``wl_decode_pcer``             transcript of the clip (greedy decoding of the same encoder
                               output; normalised with ``auto``): a reference that no system
                               wrote, so two systems are no longer each other's only judge.
                               Meaningless for the scorer's own system (0 by construction):
                               score with a model that is not one of the systems.
``wl_mean_logprob_vs_decode``  the row's mean token log-prob minus that of the scorer's own
                               transcript of the clip (scored the same way): how far the
                               hypothesis is from the text the audio supports best, with the
                               clip's difficulty and the language's tokenisation cancelled
``wl_language_prob``,          the scorer's language identification of the clip (Whisper's
``wl_language_mismatch``       ``detect_language`` on its first 30 s): the probability of the
                               row's language (the table's ``language``, else
                               ``default_language``) and 1 when another language is the most
                               likely. One value per clip, shared by its systems: it flags audio
                               that is not in the stated language (a mislabelled clip, music,
                               silence), where every hypothesis is suspect. NaN for an
                               English-only model (tiny.en), which identifies nothing.
``wl_status``                  ``ok``, ``split`` (clip above 30 s, scored in chunks), an audio
                               status (``missing``, ``unreadable``, ``too_short``...),
                               ``no_audio``, ``no_hypothesis``, ``empty_hypothesis`` (nothing
                               to score: the features are NaN) or ``unsupported_language``
=============================  ===============================================================

Formatting. Whisper writes sentence case, punctuation and digits; hypotheses arrive upper
case (AN4's dictionary), lower case (pocketsphinx's), or formatted (Whisper, commercial APIs).
Scored as written, upper-case text is several nats per token less likely than the same words
in sentence case, which would rank systems by their house style. So every text is scored in
one form, ``text_form``: ``sentence`` (default: case-folded, punctuation other than
apostrophes removed, first letter capitalised), ``lower`` (the same without the capital) or
``raw`` (as written). Digits are kept as the system wrote them: turning ``9169`` into words or
back is ambiguous (``nine one six nine`` / ``ninety-one sixty-nine``), and the ``_vs_proxy``
columns carry the remaining style difference between the two systems.

Long clips. Whisper sees 30 s at a time. A longer clip is cut into the fewest equal chunks of
at most ``chunk_seconds``; each text's words are shared out over the chunks in proportion to
their duration and each part is scored on its chunk (status ``split``). Words near a cut can
land in the wrong chunk and score low: the statistics of split rows are noisier.

Cache. The statistics of a (clip, text) pair are stored in the content-keyed
:class:`~werest.features.cache.EmbeddingCache` under the SHA-256 of the clip's bytes and of
the formatted text, in a namespace naming the model, compute type, language, text form and
audio policy: a rerun, or a new system on the same clips, scores only what is new. The
scorer's transcript of a clip is stored in the same cache (its token ids, in a ``|decode``
namespace, under the clip's key; its statistics like any text's), and so is its language
identification (``|language``), so each clip is decoded and identified once.

On a cluster (``werest embed ... cluster=``) batches of clips are tasks on Dask workers
(:func:`score_clips_on_worker`): each worker builds the scorer once and writes its shards to
the same ``cache_dir``, which must then be a folder every worker can write.
"""

from __future__ import annotations

import hashlib
import logging
import math
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from werest import logs
from werest.build import instantiate_once, kept
from werest.columns import KEY, UTTERANCE
from werest.errors import ConfigError, InputError
from werest.features.cache import EmbeddingCache, file_key
from werest.features.inputs import join_input_features
from werest.features.scorer import (
    LOW_PROBABILITY,
    SAMPLE_RATE,
    TEXT_FORMS,
    Scorer,
    TokenScores,
    format_text,
)
from werest.features.settings import (  # the columns' names, declared where --help reads them
    DECODE,
    DIFFS,
    LANGUAGE,
    LIKELIHOOD_COLUMNS,
    LIKELIHOOD_FEATURES,
    STATS,
    VS_DECODE,
)
from werest.features.whisper_likelihood import WhisperLikelihood, chunk_bounds, share_words
from werest.ingest.audio import AudioPolicy, load_audio, utterance_audio
from werest.text.counting import count_errors, error_rate
from werest.text.normalise import AUTO, normalise_many

# the scorer's protocol and statistics (werest.features.scorer), the Whisper scorer
# (werest.features.whisper_likelihood) and the columns' names (werest.features.settings) are
# importable from here too, as before they moved
__all__ = [
    "CLIPS_PER_TASK",
    "DECODE",
    "DIFFS",
    "LANGUAGE",
    "LIKELIHOOD_COLUMNS",
    "LIKELIHOOD_FEATURES",
    "LOW_PROBABILITY",
    "SAMPLE_RATE",
    "STATS",
    "TEXT_FORMS",
    "VS_DECODE",
    "PairScores",
    "Scorer",
    "ScoringJob",
    "TokenScores",
    "WhisperLikelihood",
    "add_likelihood",
    "chunk_bounds",
    "decode_agreement",
    "format_text",
    "no_likelihood",
    "score_clips_on_worker",
    "score_pairs",
    "score_table",
    "share_words",
]

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- the features


def _rows(features: pd.DataFrame, transcripts: pd.DataFrame, text_column: str) -> pd.DataFrame:
    """The (utterance, system) pairs to score: every row's system and its proxy."""
    pairs = [features[KEY]]
    if "proxy" in features.columns:
        proxies = features[[*UTTERANCE, "proxy"]].dropna(subset=["proxy"])
        pairs.append(proxies.rename(columns={"proxy": "system"}))
    wanted = pd.concat(pairs, ignore_index=True).drop_duplicates(KEY)
    wanted["system"] = wanted["system"].astype(str)
    texts = transcripts[[*KEY, text_column]].drop_duplicates(KEY)
    texts = texts.rename(columns={text_column: "text"})
    return wanted.merge(texts, on=KEY, how="left", validate="one_to_one")


#: one clip to score: its audio path, language and its rows' texts (in the scorer's form)
Clip = tuple[str, str, list[str]]
#: a clip's outcome: its rows' :data:`STATS`, its status, the scorer's transcript, that
#: transcript's :data:`STATS` (NaN without one) and the clip's :data:`LANGUAGE` values
ClipScores = tuple[np.ndarray, str, str | None, np.ndarray, np.ndarray]
#: batches of clips -> (the batch's position, its clips' scores), in any order
ClipRunner = Callable[[list[list[Clip]]], Iterable[tuple[int, list[ClipScores]]]]
#: clips per task on a cluster: enough to outweigh a task's overhead, few enough to share out
CLIPS_PER_TASK = 8


@dataclass(frozen=True)
class ScoringJob:
    """What every task on a cluster needs, sent to each worker once: the scorer's description
    (a plain mapping with ``_target_``), the cache folder (None: memory) and the audio policy.
    ``run`` tells one run from the next: a worker's cache is read from disk again per run."""

    scorer: dict[str, Any]
    cache_dir: str | None
    policy: AudioPolicy
    run: str = field(default_factory=lambda: uuid.uuid4().hex)


def score_clips_on_worker(clips: list[Clip], job: ScoringJob) -> list[ClipScores]:
    """:func:`_score_group` of each clip in a worker process, which builds the scorer and
    opens the cache once (:func:`werest.build.kept`) for all the tasks it runs."""
    scorer = instantiate_once(job.scorer, Scorer, "embedder")
    cache = kept("embedding-cache", job.run, lambda: EmbeddingCache(job.cache_dir))
    return [_score_group(*clip, scorer, cache, job.policy) for clip in clips]


@dataclass
class PairScores:
    """Per row of the scored pairs: :data:`STATS`, the status, the scorer's transcript of the
    clip (None when it cannot transcribe), that transcript's :data:`STATS` and the clip's
    :data:`LANGUAGE` values."""

    stats: np.ndarray
    status: np.ndarray
    decodes: np.ndarray
    decode_stats: np.ndarray
    language: np.ndarray


def score_pairs(
    pairs: pd.DataFrame,
    scorer: Scorer,
    cache: EmbeddingCache,
    policy: AudioPolicy,
    run_clips: ClipRunner | None = None,
) -> PairScores:
    """The :class:`PairScores` of each row of ``pairs`` (``audio``, ``language``, ``text``
    per (utterance, system)); clip by clip, cached by content. ``run_clips`` scores batches of
    :data:`CLIPS_PER_TASK` clips elsewhere (a Dask cluster) and gives them back in any order."""
    stats = np.full((len(pairs), len(STATS)), np.nan)
    status = np.full(len(pairs), "pending", dtype=object)
    decodes = np.full(len(pairs), None, dtype=object)
    decode_stats = np.full((len(pairs), len(STATS)), np.nan)
    language = np.full((len(pairs), len(LANGUAGE)), np.nan)
    status[pairs["audio"].isna().to_numpy()] = "no_audio"
    status[(status == "pending") & pairs["text"].isna().to_numpy()] = "no_hypothesis"
    forms = pairs["text"].fillna("").astype(str).map(scorer.prepare)
    status[(status == "pending") & (forms == "").to_numpy()] = "empty_hypothesis"
    todo = pairs[status == "pending"]
    groups = list(todo.groupby(["audio", "language"], sort=True))
    size = 1 if run_clips is None else CLIPS_PER_TASK
    clips = [(str(path), str(lang), forms[g.index].tolist()) for (path, lang), g in groups]
    batches = [clips[start : start + size] for start in range(0, len(clips), size)]
    run_clips = run_clips or (
        lambda parts: enumerate([_score_group(*c, scorer, cache, policy) for c in b] for b in parts)
    )
    clip_values: dict[tuple[str, str], ClipScores] = {}
    with logs.stage("embed (whisper likelihood)", total=len(groups), unit="clip") as bar:
        for position, results in run_clips(batches):
            for offset, done in enumerate(results):
                (path, lang), group = groups[position * size + offset]
                stats[group.index], status[group.index], decodes[group.index] = done[:3]
                decode_stats[group.index], language[group.index] = done[3], done[4]
                clip_values[(path, lang)] = done
            bar.update(len(results))
    # an empty hypothesis has no likelihood, but against the transcript it misses every word
    for i in np.flatnonzero(status == "empty_hypothesis"):
        done = clip_values.get((pairs["audio"].iat[i], pairs["language"].iat[i]))
        if done is not None:
            decodes[i], decode_stats[i], language[i] = done[2], done[3], done[4]
    return PairScores(stats, status, decodes, decode_stats, language)


def _score_group(
    path: str,
    lang: str,
    texts: Sequence[str],
    scorer: Scorer,
    cache: EmbeddingCache,
    policy: AudioPolicy,
) -> ClipScores:
    """One clip's rows (``texts``, in the scorer's form): their statistics, their status,
    the scorer's transcript, its statistics and the clip's language values (:data:`ClipScores`).
    The audio is read only when something is not in the cache."""
    nothing = np.full((len(texts), len(STATS)), np.nan)
    no_language = np.full(len(LANGUAGE), np.nan)
    try:
        namespace = f"{scorer.cache_name(lang)}|{policy.signature()}"
    except ConfigError as error:
        log.debug("%s: %s", path, error)
        return nothing, "unsupported_language", None, nothing[0], no_language
    try:
        audio_key = file_key(path)
    except OSError as error:
        log.debug("%s: %s", path, error)
        status = "missing" if not Path(path).exists() else "unreadable"
        return nothing, status, None, nothing[0], no_language
    samples = _clip_samples(path, policy)
    try:
        transcript = _cached_value(
            scorer, "decode_clip", cache, f"{namespace}|decode", audio_key, samples, lang
        )
        language = _cached_value(
            scorer, "language_scores", cache, f"{namespace}|language", audio_key, samples, lang
        )
        own = scorer.prepare(scorer.decode_text(transcript, lang)) if transcript is not None else ""
        keys = [_pair_key(audio_key, text) for text in texts]
        own_key = _pair_key(audio_key, own) if own else None
        wanted = [*zip(texts, keys, strict=True), *([(own, own_key)] if own_key else [])]
        hits = _cached_stats(scorer, cache, namespace, audio_key, samples, lang, wanted)
    except _Unusable as unusable:
        return nothing, str(unusable), None, nothing[0], no_language
    split = _duration(path) > getattr(scorer, "chunk_samples", math.inf) / SAMPLE_RATE
    text = scorer.decode_text(transcript, lang) if transcript is not None else None
    own_stats = hits[own_key] if own_key else nothing[0]
    language = language if language is not None else no_language
    return (
        np.stack([hits[key] for key in keys]),
        "split" if split else "ok",
        text,
        own_stats,
        language,
    )


def _clip_samples(path: str, policy: AudioPolicy) -> Callable[[], np.ndarray]:
    """The clip's samples, read on the first call only (then kept); :class:`_Unusable` when
    its audio cannot be used."""
    loaded: list[np.ndarray] = []

    def samples() -> np.ndarray:
        if not loaded:
            clip = load_audio(path, policy)
            if not clip.status.usable:
                raise _Unusable(str(clip.status))
            loaded.append(np.concatenate(clip.segments))
        return loaded[0]

    return samples


def _cached_stats(
    scorer: Scorer,
    cache: EmbeddingCache,
    namespace: str,
    audio_key: str,
    samples: Callable[[], np.ndarray],
    lang: str,
    wanted: list[tuple[str, str]],
) -> dict[str, np.ndarray]:
    """The :data:`STATS` of each (text, key) of ``wanted`` on the clip, by key: from the
    cache, the texts it lacks scored together (the audio read only then) and stored."""
    hits = cache.get_many(namespace, {key for _, key in wanted})
    missing = sorted({text for text, key in wanted if key not in hits})
    if missing:
        vectors = np.stack([s.stats() for s in scorer.score_clip(samples(), missing, lang)])
        new_keys = [_pair_key(audio_key, text) for text in missing]
        cache.put_many(namespace, new_keys, vectors)
        hits.update(zip(new_keys, vectors, strict=True))
    return hits


class _Unusable(Exception):
    """The clip's audio cannot be used (its status is the message)."""


def _cached_value(
    scorer: Scorer,
    method: str,
    cache: EmbeddingCache,
    namespace: str,
    audio_key: str,
    samples: Callable[[], np.ndarray | None],
    lang: str,
) -> np.ndarray | None:
    """``scorer.<method>(samples, lang)`` of the clip from the cache, computed and stored when
    absent; None when the scorer has no such method."""
    compute = getattr(scorer, method, None)
    if compute is None:
        return None
    found = cache.get_many(namespace, [audio_key])
    if audio_key not in found:
        value = np.asarray(compute(samples(), lang), dtype=np.float32)
        cache.put_many(namespace, [audio_key], value[None, :])
        return value
    return found[audio_key]


def _duration(path: str) -> float:
    """The clip's duration from its header (0 when unknown): cheap on cache hits."""
    import soundfile as sf

    try:
        return float(sf.info(path).duration)
    except Exception:
        return 0.0


def _pair_key(audio_key: str, text: str) -> str:
    return hashlib.sha256(f"{audio_key}|{text}".encode()).hexdigest()


def add_likelihood(
    features: pd.DataFrame,
    transcripts: pd.DataFrame,
    scorer: Scorer,
    cache: EmbeddingCache | None = None,
    policy: AudioPolicy | None = None,
    text_column: str = "hypothesis",
    default_language: str | None = None,
    run_clips: ClipRunner | None = None,
) -> pd.DataFrame:
    """A copy of ``features`` with the :data:`LIKELIHOOD_COLUMNS` (replaced if present).

    ``transcripts`` gives each system's text and each utterance's ``audio`` (and
    ``language``); the proxy's text is scored too when ``features`` has a ``proxy`` column.
    ``run_clips`` scores the clips elsewhere (:func:`score_pairs`).
    """
    missing = [c for c in KEY if c not in features.columns]
    if missing:
        raise InputError(f"the feature table lacks {missing}", column=missing[0])
    if text_column not in transcripts.columns:
        raise InputError("missing text column", column=text_column)
    pairs = _rows(features, transcripts, text_column)
    pairs = pairs.merge(utterance_audio(transcripts, default_language), on=UTTERANCE, how="left")
    scores = score_pairs(
        pairs, scorer, cache or EmbeddingCache(None), policy or AudioPolicy(), run_clips
    )
    scored = pairs[KEY].copy()
    scored[list(STATS)] = scores.stats
    scored[list(DECODE)] = decode_agreement(pairs["text"], scores.decodes, pairs["language"])
    scored["wl_mean_logprob_vs_decode"] = scores.stats[:, 0] - scores.decode_stats[:, 0]
    scored[list(LANGUAGE)] = scores.language
    scored["wl_status"] = scores.status.astype(str)
    out = features.drop(columns=list(LIKELIHOOD_COLUMNS), errors="ignore").reset_index(drop=True)
    out["system"] = out["system"].astype(str)
    out = out.merge(scored[[*KEY, "wl_status"]], on=KEY, how="left", validate="many_to_one")
    out = join_input_features(out, scored, LIKELIHOOD_FEATURES)
    _log_statuses(out["wl_status"])
    return out


def decode_agreement(texts: pd.Series, transcripts: np.ndarray, languages: pd.Series) -> np.ndarray:
    """:data:`DECODE`: pWER and pCER of each text against the scorer's transcript of its
    clip (the reference side), both normalised with ``auto`` for the row's language; NaN
    without a transcript, or where the normalised transcript is empty."""
    out = np.full((len(texts), len(DECODE)), np.nan)
    has = np.asarray([t is not None for t in transcripts]) & texts.notna().to_numpy()
    if not has.any():
        return out
    languages = languages[has].reset_index(drop=True)
    references = normalise_many(pd.Series(list(transcripts[has])), AUTO, languages)
    hypotheses = normalise_many(texts[has].astype(str).reset_index(drop=True), AUTO, languages)
    for column, unit in enumerate(("word", "char")):
        counts = count_errors(references, hypotheses, unit)
        errors = counts[["substitutions", "deletions", "insertions"]].sum(axis=1)
        out[has, column] = error_rate(errors, counts["reference_length"])
    return out


def _log_statuses(status: pd.Series) -> None:
    counts = status.value_counts()
    summary = ", ".join(f"{value}: {count}" for value, count in counts.items())
    log.info("whisper likelihood status: %s", summary)
    if set(counts.index) - {"ok", "split"} and set(counts.index) & {"ok", "split"}:
        log.warning("rows without a likelihood (see wl_status): %s", summary)


def score_table(
    table: pd.DataFrame,
    model: str | None,
    *,
    cache_dir: str | Path | None = None,
    default_language: str | None = None,
    path: str | Path | None = None,
) -> pd.DataFrame:
    """``table`` (one row per utterance and system, with ``audio``) with the Whisper likelihood
    of every hypothesis under its clip: ``werest embed embedder=whisper_likelihood`` on the
    table as both its feature table and its transcripts, in memory (``werest estimate
    audio_scoring.enabled=true``). ``model``: ``base``, ``tiny.en`` or a CTranslate2 folder.
    An InputError naming ``path`` when the table has no audio or no row could be scored."""
    if "audio" not in table.columns:
        raise InputError(
            "audio_scoring.enabled=true scores each hypothesis against its clip, and the table "
            "has no `audio` column (a path per utterance, relative to the table's folder)",
            path=path,
            column="audio",
        )
    from werest.ingest.asr.faster_whisper_asr import whisper_model_path

    folder = whisper_model_path(model, "audio_scoring.model")  # its errors name the setting
    scored = add_likelihood(
        table,
        table,
        WhisperLikelihood(model=str(folder)),
        EmbeddingCache(cache_dir),
        AudioPolicy(),
        default_language=default_language,
    )
    if len(scored) and not scored["wl_mean_logprob"].notna().any():
        raise InputError(no_likelihood(scored), path=path)
    return scored


def no_likelihood(table: pd.DataFrame) -> str:
    """The one-line error when no row got a likelihood: the statuses' counts."""
    counts = table["wl_status"].value_counts()
    summary = ", ".join(f"{status}: {count}" for status, count in counts.items())
    return f"no row got a likelihood: all {len(table)} failed ({summary})"
