"""CMU PocketSphinx 5 (PyPI ``pocketsphinx``) as a :class:`~werest.ingest.asr.base.Transcriber`.

The wheel ships a US English acoustic model (``en-us``), a trigram language model
(``en-us.lm.bin``) and the CMU dictionary; it runs offline on a CPU. ``hmm``, ``lm`` and
``dict`` replace any of them, so the same acoustic model with a task's own language model and
dictionary (AN4's ``etc/an4.ug.lm`` + ``etc/an4.dic``) is a second, domain-tuned system.

Output words are the decoder's segment words with its markup removed: sentence markers
(``<s>``, ``</s>``), silence (``<sil>``), fillers (``[NOISE]``, ``++BREATH++``) and
alternate-pronunciation suffixes (``ENTER(2)`` -> ``ENTER``). Case is the dictionary's (the
bundled one is lower case, AN4's upper case): normalisation happens at scoring time.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from werest.errors import ConfigError
from werest.ingest.asr.base import existing_file
from werest.io import first_line

log = logging.getLogger(__name__)

_ALTERNATE = re.compile(r"\(\d+\)$")


def is_markup(word: str) -> bool:
    """True for a decoder token that is not a word: ``<s>``, ``<sil>``, ``[NOISE]``, ``++UH++``."""
    return (
        not word
        or (word.startswith("<") and word.endswith(">"))
        or (word.startswith("[") and word.endswith("]"))
        or (word.startswith("++") and word.endswith("++"))
    )


def clean_words(words: Sequence[str]) -> str:
    """Decoder segment words as a transcript: markup dropped, ``WORD(2)`` -> ``WORD``."""
    return " ".join(_ALTERNATE.sub("", w) for w in words if not is_markup(w))


def to_int16(samples: np.ndarray) -> bytes:
    """Float samples in [-1, 1] as little-endian 16-bit PCM bytes (what the decoder reads).

    Scaled by 32768, the inverse of soundfile's int16 -> float, so 16-bit files round-trip.
    """
    scaled = np.round(np.asarray(samples, dtype=np.float64) * 32768.0)
    return np.clip(scaled, -32768, 32767).astype("<i2").tobytes()


class PocketSphinxTranscriber:
    """PocketSphinx decoding one 16 kHz waveform at a time.

    Parameters
    ----------
    name : str
        The default system name of its hypotheses.
    hmm, lm, dict : str or None
        Acoustic model folder, language model (ARPA or binary) and pronunciation dictionary;
        None takes the bundled US English one. Relative paths are taken from the working
        directory.
    options : mapping
        Further pocketsphinx settings (``beam``, ``lw``, ...), passed as they are. Keyword
        spotting (``keyphrase``, ``kws``) and grammars (``jsgf``) are refused: this backend
        transcribes with a language model.
    """

    batch_size = 1

    def __init__(
        self,
        name: str = "pocketsphinx",
        hmm: str | None = None,
        lm: str | None = None,
        dict: str | None = None,  # pocketsphinx's own name for the setting
        options: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.hmm = hmm
        self.lm = lm
        self.dict = dict
        self.options = {str(k): v for k, v in (options or {}).items()}
        self._decoder = self._build_decoder()
        self._initial_cmn = self._decoder.get_cmn()

    def _settings(self) -> dict[str, Any]:
        from pocketsphinx import get_model_path

        bundled = Path(get_model_path()) / "en-us"
        refused = {"keyphrase", "kws", "jsgf", "fsg", "allphone"} & set(self.options)
        if refused:
            raise ConfigError(f"asr.options: {sorted(refused)} not supported (LM decoding only)")
        settings: dict[str, Any] = {
            "hmm": str(bundled / "en-us") if self.hmm is None else self._folder(self.hmm),
            "lm": str(bundled / "en-us.lm.bin")
            if self.lm is None
            else existing_file(self.lm, "asr.lm"),
            "dict": str(bundled / "cmudict-en-us.dict")
            if self.dict is None
            else existing_file(self.dict, "asr.dict"),
            "samprate": 16000,
            "loglevel": "FATAL",
        }
        settings.update(self.options)
        return settings

    @staticmethod
    def _folder(value: str) -> str:
        path = Path(value).expanduser()
        if not path.is_dir():
            raise ConfigError(f"asr.hmm: no such acoustic model folder {value!r}")
        return str(path.resolve())

    def _build_decoder(self) -> Any:
        try:
            from pocketsphinx import Config, Decoder
        except ImportError:
            raise ConfigError(
                "asr=pocketsphinx needs the pocketsphinx package: pip install -e '.[asr]'"
            ) from None
        settings = self._settings()
        try:
            return Decoder(Config(**settings))
        except (RuntimeError, ValueError, KeyError) as error:
            files = ", ".join(f"{k}={settings[k]}" for k in ("hmm", "lm", "dict"))
            raise ConfigError(
                f"asr: pocketsphinx could not load its models ({files}): {first_line(error)}"
            ) from None

    def transcribe(self, audio: Sequence[np.ndarray]) -> list[str]:
        """Decode each waveform as one utterance."""
        return [self._decode(samples) for samples in audio]

    def _decode(self, samples: np.ndarray) -> str:
        decoder = self._decoder
        decoder.reinit_feat()  # each clip on its own: no CMN state from the last one
        decoder.start_utt()
        decoder.process_raw(to_int16(samples), no_search=False, full_utt=True)
        decoder.end_utt()
        if decoder.hyp() is None:
            return ""
        return clean_words([segment.word for segment in decoder.seg()])

    def __repr__(self) -> str:
        return f"PocketSphinxTranscriber(name={self.name!r}, lm={self.lm!r}, dict={self.dict!r})"
