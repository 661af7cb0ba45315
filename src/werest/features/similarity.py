"""Speech–text similarity in SONAR's joint space: the ``similarity`` feature, ``werest embed``.

For each (utterance, target system) row of a feature table, ``similarity`` is the cosine, after
L2 normalisation, between the SONAR embedding of the utterance's audio and that of the target's
hypothesis (Waheed et al., 2025). A row that cannot get one (missing or bad audio, no language
encoder) gets NaN and says why in ``similarity_status``; the batch goes on.

The encoder is an :class:`Embedder`, built from config with ``hydra.utils.instantiate``
(``conf/embedder/*.yaml``): :class:`SonarEmbedder` runs sonar-space's own
``SpeechToEmbeddingModelPipeline`` and ``TextToEmbeddingModelPipeline``; a test double or
another encoder is swapped in by its ``_target_``. Embeddings go through
:class:`werest.features.cache.EmbeddingCache`, so nothing is embedded twice.

torch, fairseq2 and sonar are imported lazily: they come with the ``[sonar]`` extra
(``pip install -e ".[sonar]"``, see docs/similarity.md) and this module imports without them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from werest.audio import AudioPolicy, AudioStatus, LoadedAudio, load_audio
from werest.errors import ConfigError, InputError, WerestError
from werest.features.cache import EmbeddingCache, file_key, normalise_text, text_key
from werest.table import KEY

log = logging.getLogger(__name__)

SIMILARITY_COLUMNS = ["similarity", "similarity_status", "audio_duration"]

WEIGHTS_HELP = (
    "SONAR weights are not downloadable here. On a machine with internet, fairseq2 downloads "
    "them by card name on first use (into $FAIRSEQ2_CACHE_DIR, default "
    "~/.cache/fairseq2/assets); copy the .pt files to this machine and describe them with asset "
    "cards (YAML) in a folder given as embedder.asset_dir=DIR or $FAIRSEQ2_USER_ASSET_DIR: see "
    "docs/similarity.md"
)


@runtime_checkable
class Embedder(Protocol):
    """A speech and text encoder into one space (SONAR or anything that fits).

    ``embed_speech`` takes 16 kHz mono float32 waveforms; both methods return an ``(N, d)``
    float32 array, row ``i`` for input ``i``, not normalised. ``lang`` is an ISO 639-1 code
    (``en``) as in the transcripts table; the embedder maps it to its own codes and raises
    :class:`werest.errors.ConfigError` for a language it has no encoder for.
    ``cache_name`` names the encoder that would serve ``modality`` ("speech" or "text") and
    ``lang``: equal names must mean equal embeddings (it keys the cache).
    """

    def embed_speech(self, audio: Sequence[np.ndarray], lang: str) -> np.ndarray: ...

    def embed_text(self, texts: Sequence[str], lang: str) -> np.ndarray: ...

    def cache_name(self, modality: str, lang: str) -> str: ...


def cosine(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Row-wise cosine of two ``(N, d)`` arrays after L2 normalisation; NaN for a zero row."""
    left = np.asarray(left, dtype=np.float64)
    right = np.asarray(right, dtype=np.float64)
    norms = np.linalg.norm(left, axis=1) * np.linalg.norm(right, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.einsum("ij,ij->i", left, right) / norms
    return np.clip(np.where(norms > 0, values, np.nan), -1.0, 1.0)


# --------------------------------------------------------------------------- SONAR


def _torch_device(name: str) -> Any:
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        raise ConfigError(f"embedder.device: unknown device {name!r} (auto, cpu, cuda)") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError("embedder.device=cuda but torch sees no CUDA device; use auto or cpu")
    return device


def _torch_dtype(name: str, device: Any) -> Any:
    import torch

    if name == "auto":
        return torch.float16 if device.type == "cuda" else torch.float32
    dtypes = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
    if name not in dtypes:
        raise ConfigError(f"embedder.dtype: {name!r} is not one of auto, {', '.join(dtypes)}")
    if device.type == "cpu" and name != "float32":
        raise ConfigError(f"embedder.dtype={name} is not supported on CPU; use float32 or auto")
    return dtypes[name]


def require_sonar() -> None:
    """Import the ``[sonar]`` extra or raise a WerestError that says how to install it."""
    try:
        import fairseq2  # noqa: F401
        import sonar  # noqa: F401
        import torch  # noqa: F401
    except ImportError as error:
        raise WerestError(
            f"SONAR similarity needs the [sonar] extra ({error.name} is missing): "
            'pip install -e ".[sonar]" (docs/similarity.md)'
        ) from None
    except OSError as error:  # fairseq2n without libsndfile, torch without its CUDA libraries
        raise WerestError(f"the [sonar] extra does not load: {error}") from None


def asset_store(asset_dir: str | Path | None) -> Any:
    """fairseq2's asset store, plus the cards in ``asset_dir`` when given.

    The global store already holds sonar's cards (which download from Meta's server) and the
    cards in ``$FAIRSEQ2_USER_ASSET_DIR`` (or ``~/.config/fairseq2/assets``). ``asset_dir`` adds
    a folder of cards for this run only; a card named ``NAME@user`` there overrides fields
    (e.g. ``checkpoint``) of the card ``NAME``.
    """
    from fairseq2.assets import get_asset_store

    if asset_dir is None:
        return get_asset_store()
    folder = Path(asset_dir).expanduser()
    if not folder.is_dir():
        raise ConfigError(f"embedder.asset_dir: no such folder: {folder}")
    from fairseq2.assets import AssetMetadataSource, FileAssetMetadataSource, StandardAssetStore
    from fairseq2.runtime.dependency import get_dependency_resolver, wire_object

    resolver = get_dependency_resolver()
    local = wire_object(resolver, FileAssetMetadataSource, path=folder, not_exist_ok=False)
    sources = [local, *resolver.collection.resolve(AssetMetadataSource)]
    try:
        return StandardAssetStore([p for source in sources for p in source.load()])
    except Exception as error:
        raise ConfigError(f"asset cards in {folder} cannot be read: {error}") from error


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    cause = error.__cause__
    if cause is not None and str(cause).strip():
        text += f" ({str(cause).strip().splitlines()[0]})"
    return text.splitlines()[0]


def _checkpoint_identity(card: Any) -> str:
    """Where a card's checkpoint comes from; for a local file also its size and mtime."""
    try:
        uri = card.field("checkpoint").as_uri()
    except Exception:
        return ""
    text = str(uri)
    if getattr(uri, "scheme", "") == "file":
        path = Path(text.removeprefix("file://"))
        if path.exists():
            stat = path.stat()
            text += f":{stat.st_size}:{int(stat.st_mtime)}"
    return text


class SonarEmbedder:
    """SONAR speech and text encoders behind the :class:`Embedder` protocol.

    Parameters
    ----------
    speech_encoders : mapping
        ISO 639-1 code -> fairseq2 asset card of that language's speech encoder
        (``en: sonar_speech_encoder_eng``).
    text_languages : mapping
        ISO 639-1 code -> SONAR text language code (``en: eng_Latn``).
    text_encoder, text_tokenizer : str
        Asset cards of the text encoder and its tokenizer (``text_sonar_basic_encoder``).
    asset_dir : path or None
        A folder of extra asset cards (local checkpoints); see :func:`asset_store`.
    device : str
        ``auto`` (CUDA when present, else CPU), ``cpu``, ``cuda``, ``cuda:1``...
    dtype : str
        ``auto`` (float16 on CUDA, float32 on CPU), ``float32``, ``float16``, ``bfloat16``.
    batch_size : int
        Clips or texts per forward pass.
    """

    def __init__(
        self,
        speech_encoders: Mapping[str, str],
        text_languages: Mapping[str, str],
        text_encoder: str = "text_sonar_basic_encoder",
        text_tokenizer: str | None = None,
        asset_dir: str | None = None,
        device: str = "auto",
        dtype: str = "auto",
        batch_size: int = 8,
    ) -> None:
        if batch_size < 1:
            raise ConfigError(f"embedder.batch_size must be >= 1, not {batch_size}")
        self.speech_encoders = dict(speech_encoders)
        self.text_languages = dict(text_languages)
        self.text_encoder = text_encoder
        self.text_tokenizer = text_tokenizer or text_encoder
        self.asset_dir = asset_dir
        self.device = device
        self.dtype = dtype
        self.batch_size = int(batch_size)
        self._speech: dict[str, Any] = {}
        self._text: Any = None
        self._identity: dict[str, str] = {}
        self._store: Any = None

    @classmethod
    def from_models(
        cls,
        speech_models: Mapping[str, Any],
        text_model: Any,
        tokenizer: Any,
        text_languages: Mapping[str, str],
        name: str,
        batch_size: int = 8,
    ) -> SonarEmbedder:
        """An embedder on already built models (CPU, float32); ``name`` keys their cache."""
        require_sonar()
        from sonar.inference_pipelines.speech import SpeechToEmbeddingModelPipeline
        from sonar.inference_pipelines.text import TextToEmbeddingModelPipeline

        embedder = cls(
            {lang: f"{name}:speech:{lang}" for lang in speech_models},
            text_languages,
            text_encoder=f"{name}:text",
            device="cpu",
            dtype="float32",
            batch_size=batch_size,
        )
        embedder._identity = {card: "in-memory" for card in embedder.speech_encoders.values()}
        embedder._identity[embedder.text_encoder] = "in-memory"
        device = _torch_device("cpu")
        for lang, model in speech_models.items():
            embedder._speech[lang] = SpeechToEmbeddingModelPipeline(model, device=device)
        embedder._text = TextToEmbeddingModelPipeline(text_model.to(device), tokenizer, device)
        return embedder

    # ---------------------------------------------------------------- Embedder protocol

    def cache_name(self, modality: str, lang: str) -> str:
        """Card name + checkpoint identity (+ text language): the same before and after loading."""
        if modality == "speech":
            card = self._speech_card(lang)
            return f"sonar-speech:{card}:{self._checkpoint_of(card)}"
        if modality == "text":
            code = self._text_code(lang)
            return f"sonar-text:{self.text_encoder}:{self._checkpoint_of(self.text_encoder)}:{code}"
        raise ValueError(f"modality must be 'speech' or 'text', not {modality!r}")

    def embed_speech(self, audio: Sequence[np.ndarray], lang: str) -> np.ndarray:
        import torch

        pipeline = self._speech_pipeline(lang)
        if not len(audio):
            return np.zeros((0, 0), dtype=np.float32)
        order = np.argsort([len(clip) for clip in audio], kind="stable")
        tensors = [
            torch.from_numpy(np.ascontiguousarray(audio[i], np.float32))[None] for i in order
        ]
        with torch.inference_mode():
            out = pipeline.predict(tensors, batch_size=self.batch_size)
        result = np.empty((len(audio), out.shape[1]), dtype=np.float32)
        result[order] = out.float().cpu().numpy()
        return result

    def embed_text(self, texts: Sequence[str], lang: str) -> np.ndarray:
        code = self._text_code(lang)
        pipeline = self._text_pipeline()
        if not len(texts):
            return np.zeros((0, 0), dtype=np.float32)
        out = pipeline.predict(list(texts), source_lang=code, batch_size=self.batch_size)
        return out.float().cpu().numpy()

    # ---------------------------------------------------------------- loading

    def _speech_card(self, lang: str) -> str:
        if lang not in self.speech_encoders:
            known = ", ".join(sorted(self.speech_encoders)) or "none"
            raise ConfigError(
                f"no SONAR speech encoder configured for language {lang!r} (configured: {known});"
                f" add embedder.speech_encoders.{lang}=CARD"
            )
        return self.speech_encoders[lang]

    def _text_code(self, lang: str) -> str:
        if lang not in self.text_languages:
            known = ", ".join(sorted(self.text_languages)) or "none"
            raise ConfigError(
                f"no SONAR text language code configured for {lang!r} (configured: {known});"
                f" add embedder.text_languages.{lang}=xxx_Xxxx"
            )
        return self.text_languages[lang]

    def _checkpoint_of(self, card_name: str) -> str:
        """Where the card's checkpoint is (reads the card, not the weights)."""
        if card_name not in self._identity:
            self._card(card_name)
        return self._identity[card_name]

    def _device_and_dtype(self) -> tuple[Any, Any]:
        device = _torch_device(self.device)
        return device, _torch_dtype(self.dtype, device)

    def _card(self, name: str) -> Any:
        require_sonar()
        from fairseq2.assets import AssetNotFoundError

        if self._store is None:
            self._store = asset_store(self.asset_dir)
        try:
            card = self._store.retrieve_card(name)
        except AssetNotFoundError:
            where = f" or in {self.asset_dir}" if self.asset_dir else ""
            raise WerestError(
                f"no fairseq2 asset card named {name!r} (sonar's cards{where}). {WEIGHTS_HELP}"
            ) from None
        self._identity[name] = _checkpoint_identity(card)
        return card

    def _load(self, name: str, what: str, loader: Any) -> Any:
        card = self._card(name)
        try:
            return loader(card)
        except WerestError:
            raise
        except Exception as error:
            raise WerestError(
                f"cannot load the SONAR {what} {name!r}: {_first_line(error)}. {WEIGHTS_HELP}"
            ) from error

    def _speech_pipeline(self, lang: str) -> Any:
        card_name = self._speech_card(lang)
        if lang not in self._speech:
            require_sonar()
            from fairseq2.models import load_model
            from sonar.inference_pipelines.speech import SpeechToEmbeddingModelPipeline

            device, dtype = self._device_and_dtype()
            model = self._load(
                card_name,
                "speech encoder",
                lambda card: load_model(card, device=device, dtype=dtype, progress=False),
            )
            log.info("loaded SONAR speech encoder %s on %s (%s)", card_name, device, dtype)
            self._speech[lang] = SpeechToEmbeddingModelPipeline(model, device, dtype)
        return self._speech[lang]

    def _text_pipeline(self) -> Any:
        if self._text is None:
            require_sonar()
            from fairseq2.data.tokenizers import load_tokenizer
            from fairseq2.models import load_model
            from sonar.inference_pipelines.text import TextToEmbeddingModelPipeline

            device, dtype = self._device_and_dtype()
            model = self._load(
                self.text_encoder,
                "text encoder",
                lambda card: load_model(card, device=device, dtype=dtype, progress=False),
            )
            tokenizer = self._load(
                self.text_tokenizer, "tokenizer", lambda card: load_tokenizer(card, progress=False)
            )
            log.info("loaded SONAR text encoder %s on %s (%s)", self.text_encoder, device, dtype)
            self._text = TextToEmbeddingModelPipeline(model, tokenizer, device, dtype)
        return self._text


# --------------------------------------------------------------------------- embedding


def _batches(items: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def embed_audio_files(
    paths: Sequence[str],
    lang: str,
    embedder: Embedder,
    cache: EmbeddingCache,
    policy: AudioPolicy,
    chunk_size: int = 64,
) -> dict[str, LoadedAudio | np.ndarray]:
    """Embed each audio file once: path -> (d,) vector, or the LoadedAudio that failed.

    Files are keyed by the SHA-256 of their bytes, so a cache hit needs no decoding; misses
    are decoded, embedded and written to the cache ``chunk_size`` files at a time (an
    interrupted run keeps every finished chunk). A split clip's vector is the
    duration-weighted mean of its segments' vectors.
    """
    namespace = f"{embedder.cache_name('speech', lang)}|{policy.signature()}"
    results: dict[str, LoadedAudio | np.ndarray] = {}
    keys: dict[str, str] = {}
    for path in paths:
        try:
            keys[path] = file_key(path)
        except OSError as error:
            status = AudioStatus.MISSING if not Path(path).exists() else AudioStatus.UNREADABLE
            results[path] = LoadedAudio(path, status, message=error.strerror or str(error))
    hits = cache.get_many(namespace, set(keys.values()))
    results.update({path: hits[key] for path, key in keys.items() if key in hits})
    todo = [path for path in keys if path not in results]
    log.info("speech %s: %d files, %d cached, %d to embed", lang, len(paths), len(hits), len(todo))
    with tqdm(
        total=len(todo),
        desc=f"embed speech ({lang})",
        unit="clip",
        disable=True if not todo else None,
    ) as bar:
        for chunk in _batches(todo, chunk_size):
            results.update(
                _embed_audio_chunk(chunk, keys, lang, embedder, cache, namespace, policy)
            )
            bar.update(len(chunk))
    return results


def _embed_audio_chunk(
    paths: Sequence[str],
    keys: Mapping[str, str],
    lang: str,
    embedder: Embedder,
    cache: EmbeddingCache,
    namespace: str,
    policy: AudioPolicy,
) -> dict[str, LoadedAudio | np.ndarray]:
    loaded = {path: load_audio(path, policy) for path in paths}
    usable = [path for path, audio in loaded.items() if audio.status.usable]
    segments = [segment for path in usable for segment in loaded[path].segments]
    vectors = embedder.embed_speech(segments, lang) if segments else np.zeros((0, 0), np.float32)
    out: dict[str, LoadedAudio | np.ndarray] = {p: a for p, a in loaded.items() if p not in usable}
    start, new_keys, new_vectors = 0, [], []
    for path in usable:
        audio = loaded[path]
        count = len(audio.segments)
        vector = (audio.weights[:, None] * vectors[start : start + count]).sum(axis=0)
        start += count
        out[path] = vector.astype(np.float32)
        new_keys.append(keys[path])
        new_vectors.append(out[path])
    if new_keys:
        cache.put_many(namespace, new_keys, np.stack(new_vectors))
    return out


def embed_texts(
    texts: Sequence[str],
    lang: str,
    embedder: Embedder,
    cache: EmbeddingCache,
    chunk_size: int = 256,
) -> dict[str, np.ndarray]:
    """Embed each distinct normalised text once: normalised text -> (d,) vector."""
    namespace = embedder.cache_name("text", lang)
    unique = {text_key(text): normalise_text(text) for text in texts}
    vectors = cache.get_many(namespace, unique)
    todo = [key for key in unique if key not in vectors]
    log.info(
        "text %s: %d distinct, %d cached, %d to embed",
        lang,
        len(unique),
        len(unique) - len(todo),
        len(todo),
    )
    with tqdm(
        total=len(todo),
        desc=f"embed text ({lang})",
        unit="text",
        disable=True if not todo else None,
    ) as bar:
        for chunk in _batches(todo, chunk_size):
            embedded = embedder.embed_text([unique[key] for key in chunk], lang)
            cache.put_many(namespace, list(chunk), embedded)
            vectors.update(zip(chunk, embedded, strict=True))
            bar.update(len(chunk))
    return {unique[key]: vector for key, vector in vectors.items()}


# --------------------------------------------------------------------------- the feature


def _utterances(transcripts: pd.DataFrame, default_language: str | None) -> pd.DataFrame:
    """One row per (dataset, utt_id): its audio path and language."""
    if "audio" not in transcripts.columns:
        raise InputError("the transcripts table has no 'audio' column", column="audio")
    columns = ["dataset", "utt_id", "audio"] + (["language"] if "language" in transcripts else [])
    utterances = transcripts[columns].dropna(subset=["audio"])
    utterances = utterances.drop_duplicates(["dataset", "utt_id"]).copy()
    if "language" not in utterances:
        utterances["language"] = default_language
    elif default_language is not None:
        utterances["language"] = utterances["language"].fillna(default_language)
    if utterances["language"].isna().any():
        raise InputError("rows without a language and no default_language set", column="language")
    utterances["audio"] = utterances["audio"].astype(str)
    return utterances


def add_similarity(
    features: pd.DataFrame,
    transcripts: pd.DataFrame,
    embedder: Embedder,
    cache: EmbeddingCache | None = None,
    policy: AudioPolicy | None = None,
    text_column: str = "hypothesis",
    default_language: str | None = None,
) -> pd.DataFrame:
    """Add ``similarity``, ``similarity_status`` and ``audio_duration`` to a feature table.

    Parameters
    ----------
    features : one row per (dataset, utt_id, system); the target's hypothesis is looked up
        in ``transcripts`` by that key.
    transcripts : the transcripts table with ``audio`` (absolute paths) and, optionally,
        ``language`` (ISO 639-1; ``default_language`` fills gaps).
    embedder : an :class:`Embedder`.
    cache : where embeddings are kept (memory only when None).
    policy : the audio policy (the long-clip rule of :mod:`werest.audio`).

    Returns
    -------
    A copy of ``features`` with the three columns (replaced if present). ``similarity_status``
    is ``ok``, ``split`` (long clip, averaged segments), an audio status (``missing``,
    ``unreadable``, ``empty``, ``too_short``, ``silent``, ``too_long``), ``no_audio`` (no
    audio path for the utterance), ``no_hypothesis`` or ``unsupported_language``.
    """
    cache = cache or EmbeddingCache(None)
    policy = policy or AudioPolicy()
    missing = [c for c in KEY if c not in features.columns]
    if missing:
        raise InputError(f"the feature table lacks {missing}", column=missing[0])
    utterances = _utterances(transcripts, default_language)
    hypotheses = transcripts[[*KEY, text_column]].drop_duplicates(KEY)
    rows = features[KEY].merge(hypotheses, on=KEY, how="left", validate="many_to_one")
    rows = rows.merge(utterances, on=["dataset", "utt_id"], how="left", validate="many_to_one")
    similarity = np.full(len(rows), np.nan)
    duration = np.full(len(rows), np.nan)
    status = np.where(rows["audio"].isna(), "no_audio", "pending").astype(object)
    status[(status == "pending") & rows[text_column].isna().to_numpy()] = "no_hypothesis"
    for lang, group in rows[status == "pending"].groupby("language", sort=True):
        _fill_language(
            group, str(lang), embedder, cache, policy, text_column, similarity, duration, status
        )
    _log_statuses(status)
    out = features.drop(columns=SIMILARITY_COLUMNS, errors="ignore").reset_index(drop=True)
    out["similarity"], out["similarity_status"] = similarity, status.astype(str)
    out["audio_duration"] = duration
    return out


def _fill_language(
    group: pd.DataFrame,
    lang: str,
    embedder: Embedder,
    cache: EmbeddingCache,
    policy: AudioPolicy,
    text_column: str,
    similarity: np.ndarray,
    duration: np.ndarray,
    status: np.ndarray,
) -> None:
    index = group.index.to_numpy()
    try:
        embedder.cache_name("speech", lang)
        embedder.cache_name("text", lang)
    except ConfigError as error:
        log.warning("%d rows in language %r get no similarity: %s", len(index), lang, error)
        status[index] = "unsupported_language"
        return
    audio = embed_audio_files(sorted(set(group["audio"])), lang, embedder, cache, policy)
    texts = embed_texts(group[text_column].astype(str).tolist(), lang, embedder, cache)
    for row, path, text in zip(index, group["audio"], group[text_column].astype(str), strict=True):
        result = audio[path]
        if isinstance(result, LoadedAudio):
            status[row], duration[row] = str(result.status), result.duration
            continue
        similarity[row] = cosine(result[None], texts[normalise_text(text)][None])[0]
        status[row] = "ok"
    _fill_durations(group, audio, policy, duration, status)


def _fill_durations(
    group: pd.DataFrame,
    audio: Mapping[str, LoadedAudio | np.ndarray],
    policy: AudioPolicy,
    duration: np.ndarray,
    status: np.ndarray,
) -> None:
    """Duration and split status of embedded clips (read from headers: cheap on cache hits)."""
    import soundfile as sf

    info: dict[str, float] = {}
    for path in set(group["audio"]):
        if isinstance(audio[path], np.ndarray):
            try:
                info[path] = float(sf.info(path).duration)
            except Exception:
                info[path] = float("nan")
    for row, path in zip(group.index, group["audio"], strict=True):
        if path in info:
            duration[row] = info[path]
            if info[path] > policy.max_seconds:
                status[row] = "split"


def _log_statuses(status: np.ndarray) -> None:
    values, counts = np.unique(status.astype(str), return_counts=True)
    summary = ", ".join(f"{v}: {c}" for v, c in zip(values, counts, strict=True))
    log.info("similarity status: %s", summary)
    usable = any(v in ("ok", "split") for v in values)
    if usable and any(v not in ("ok", "split") for v in values):
        log.warning("rows without similarity (see similarity_status): %s", summary)


# --------------------------------------------------------------------------- werest embed


def build_embedder(cfg: Mapping) -> Embedder:
    """Instantiate ``cfg`` (a node with ``_target_``) and check it is an :class:`Embedder`."""
    from werest.build import instantiate_checked

    return instantiate_checked(cfg, Embedder, "embedder")


def likelihood_scorer(cfg: Mapping) -> Any:
    """The :class:`werest.features.likelihood.Scorer` that ``cfg`` builds, or None when its
    ``_target_`` is not a Scorer class (an :class:`Embedder`, built by :func:`build_embedder`)."""
    from hydra.utils import get_class

    from werest.build import instantiate_checked
    from werest.features.likelihood import Scorer

    try:
        target = get_class(str(cfg.get("_target_")))
    except Exception:
        return None  # build_embedder reports it
    if not isinstance(target, type) or not issubclass(target, Scorer):
        return None
    return instantiate_checked(cfg, Scorer, "embedder")


def no_similarity(table: pd.DataFrame) -> str:
    """The one-line error when no row got a similarity: the statuses' counts."""
    counts = table["similarity_status"].value_counts()
    summary = ", ".join(f"{status}: {count}" for status, count in counts.items())
    return f"no row got a similarity: all {len(table)} failed ({summary}); see docs/similarity.md"
