"""SONAR's speech and text encoders behind the :class:`~werest.features.embedder.Embedder`
protocol: finding fairseq2 asset cards (local checkpoints too), loading the models on a device
and dtype, and running sonar-space's own ``SpeechToEmbeddingModelPipeline`` and
``TextToEmbeddingModelPipeline``.

torch, fairseq2 and sonar are imported lazily: they come with the ``[sonar]`` extra
(``pip install -e ".[sonar]"``, see docs/similarity.md) and this module imports without them.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from werest.errors import ConfigError, WerestError

log = logging.getLogger(__name__)

WEIGHTS_HELP = (
    "SONAR weights are not downloadable here. On a machine with internet, fairseq2 downloads "
    "them by card name on first use (into $FAIRSEQ2_CACHE_DIR, default "
    "~/.cache/fairseq2/assets); copy the .pt files to this machine and describe them with asset "
    "cards (YAML) in a folder given as embedder.asset_dir=DIR or $FAIRSEQ2_USER_ASSET_DIR: see "
    "docs/similarity.md"
)


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


def _configured(values: Mapping[str, str], lang: str, what: str, setting: str, form: str) -> str:
    """``values[lang]``; a ConfigError naming the languages configured and the setting to add."""
    if lang not in values:
        known = ", ".join(sorted(values)) or "none"
        raise ConfigError(
            f"no SONAR {what} configured for language {lang!r} (configured: {known});"
            f" add embedder.{setting}.{lang}={form}"
        )
    return values[lang]


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
        return _configured(self.speech_encoders, lang, "speech encoder", "speech_encoders", "CARD")

    def _text_code(self, lang: str) -> str:
        return _configured(
            self.text_languages, lang, "text language code", "text_languages", "xxx_Xxxx"
        )

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
