"""Hugging Face ASR checkpoints through ``transformers.pipeline("automatic-speech-recognition")``.

Needs the ``[asr]`` extra (``pip install -e ".[asr]"``: transformers; torch comes with it or
with ``[sonar]``). transformers and torch are imported when a transcriber is built, so the core
install imports this module without them.

A checkpoint is a local folder (``save_pretrained`` output) or a Hub id. A Hub id is looked up
in the Hugging Face cache (``$HF_HOME``, default ``~/.cache/huggingface``); with
``local_files_only: false`` (the default) a missing one is downloaded, otherwise, or when the
download fails (no internet), the error says how to get the files.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from werest.errors import ConfigError
from werest.ingest.asr.base import SAMPLE_RATE
from werest.io import first_line

log = logging.getLogger(__name__)


def model_help(model: str) -> str:
    """How to make ``model`` available on a machine without internet."""
    return (
        f"on a connected machine run `huggingface-cli download {model}` and copy the Hugging "
        f"Face cache (~/.cache/huggingface, or $HF_HOME) here, or save the checkpoint with "
        f"save_pretrained and give asr.model=/path/to/folder"
    )


def torch_device(name: str) -> str:
    """``auto`` -> ``cuda`` when torch sees a GPU, else ``cpu``; other names pass through."""
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError(f"asr.device={name}: torch sees no CUDA device; use device=cpu")
    return name


def torch_dtype(name: str, device: str) -> Any:
    """``auto`` -> float16 on a GPU, float32 otherwise; else the torch dtype of that name."""
    import torch

    if name == "auto":
        name = "float16" if device.startswith("cuda") else "float32"
    dtype = getattr(torch, str(name), None)
    if not isinstance(dtype, torch.dtype):
        raise ConfigError(f"asr.dtype: unknown torch dtype {name!r}; use float32 or float16")
    return dtype


class TransformersTranscriber:
    """A transformers ASR pipeline, fed batches of 16 kHz waveforms.

    Parameters
    ----------
    model : str
        A local checkpoint folder or a Hugging Face Hub id (``openai/whisper-tiny``).
    name : str or None
        The default system name; None takes the model's last path component.
    device : str
        ``auto`` (CUDA when present, else CPU), ``cpu``, ``cuda``, ``cuda:1``...
    dtype : str
        ``auto`` (float16 on a GPU, float32 on the CPU), ``float32``, ``float16``, ``bfloat16``.
    batch_size : int
        Clips per forward pass.
    chunk_length_s : float or None
        Long-form chunking for clips above the model's window (Whisper: 30 s).
    generate_kwargs : mapping or None
        Passed to ``generate`` for sequence-to-sequence models, e.g. ``{language: en}``.
    local_files_only : bool
        Never download: a Hub id must already be in the Hugging Face cache.
    """

    def __init__(
        self,
        model: str = "openai/whisper-tiny",
        name: str | None = None,
        device: str = "auto",
        dtype: str = "auto",
        batch_size: int = 8,
        chunk_length_s: float | None = None,
        generate_kwargs: Mapping[str, Any] | None = None,
        local_files_only: bool = False,
    ) -> None:
        if int(batch_size) < 1:
            raise ConfigError(f"asr.batch_size must be at least 1, got {batch_size!r}")
        self.model = str(model)
        self.name = name or Path(self.model.rstrip("/")).name
        self.device = device
        self.dtype = dtype
        self.batch_size = int(batch_size)
        self.chunk_length_s = chunk_length_s
        self.generate_kwargs = dict(generate_kwargs or {})
        self.local_files_only = bool(local_files_only)
        self._pipeline = self._build_pipeline()

    def _checkpoint(self) -> str:
        """The local folder, the cached snapshot of a Hub id, or the id itself (to download)."""
        if Path(self.model).expanduser().is_dir():
            return str(Path(self.model).expanduser())
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError

        try:
            return snapshot_download(self.model, local_files_only=True)
        except (LocalEntryNotFoundError, OSError, ValueError):
            if self.local_files_only:
                raise ConfigError(
                    f"asr.model={self.model}: not a folder and not in the Hugging Face cache; "
                    + model_help(self.model)
                ) from None
            return self.model

    def _build_pipeline(self) -> Any:
        try:
            from transformers import pipeline
        except ImportError:
            raise ConfigError(
                "asr=transformers needs the [asr] extra: pip install -e '.[asr]' (transformers)"
            ) from None
        device = torch_device(str(self.device))
        options: dict[str, Any] = {"device": device, "dtype": torch_dtype(self.dtype, device)}
        if self.chunk_length_s:
            options["chunk_length_s"] = float(self.chunk_length_s)
        checkpoint = self._checkpoint()
        try:
            asr = pipeline("automatic-speech-recognition", model=checkpoint, **options)
        except OSError as error:
            raise ConfigError(
                f"asr.model={self.model}: cannot load it ({first_line(error)[:160]}); "
                + model_help(self.model)
            ) from None
        except (ValueError, KeyError, TypeError) as error:
            raise ConfigError(
                f"asr.model={self.model}: not a usable ASR checkpoint: {first_line(error)[:200]}"
            ) from None
        log.info("transformers ASR %s on %s (%s)", self.model, device, options["dtype"])
        return asr

    def transcribe(self, audio: Sequence[np.ndarray]) -> list[str]:
        """Transcribe a batch of waveforms; one stripped string per waveform."""
        inputs = [
            {"raw": np.asarray(samples, dtype=np.float32), "sampling_rate": SAMPLE_RATE}
            for samples in audio
        ]
        options: dict[str, Any] = {"batch_size": self.batch_size}
        if self.generate_kwargs:
            options["generate_kwargs"] = dict(self.generate_kwargs)
        outputs = self._pipeline(inputs, **options)
        return [str(output.get("text", "")).strip() for output in outputs]

    def __repr__(self) -> str:
        return f"TransformersTranscriber(model={self.model!r}, device={self.device!r})"
