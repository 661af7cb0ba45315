"""An on-disk embedding cache keyed by content and encoder, safe against interruption.

Layout (one folder per *namespace*, i.e. per encoder + language + preprocessing)::

    <root>/
      <slug>-<hash8>/            slug: the namespace made file-system safe; hash8: of its full name
        namespace.txt            the full namespace (for people)
        shard-<time>-<uuid>.npz  keys (n,) str: content hashes; vectors (n, d) float32

A shard is written to ``.tmp-*.npz`` in the same folder, flushed to disk, then renamed into
place (``os.replace`` is atomic on POSIX): readers only ever list ``shard-*.npz``, so a shard
cut off by an interrupt or a full disk is never read back, and everything embedded before the
interrupt (earlier shards) is reused by the next run. A shard that cannot be read (e.g. damaged
later) is skipped with a warning and its items are recomputed.

Keys are SHA-256 digests of the content: :func:`file_key` of an audio file's bytes (decoding
is not needed to find a hit) and :func:`text_key` of the normalised text.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import tempfile
import time
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from werest.text.normalise import normalise_text

# normalise_text (werest.text.normalise) is importable from here too, as before it moved
__all__ = ["EmbeddingCache", "file_key", "namespace_dir", "normalise_text", "text_key"]

log = logging.getLogger(__name__)

_CHUNK = 1 << 20


def file_key(path: str | Path) -> str:
    """SHA-256 of a file's bytes (hex); raises OSError when it cannot be read."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def text_key(text: str) -> str:
    """SHA-256 (hex) of :func:`normalise_text` of ``text``."""
    return hashlib.sha256(normalise_text(text).encode("utf-8")).hexdigest()


def namespace_dir(root: Path, namespace: str) -> Path:
    """The folder of ``namespace`` below ``root`` (readable slug + hash of the full name)."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", namespace).strip("._")[:80] or "ns"
    digest = hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:8]
    return root / f"{slug}-{digest}"


class EmbeddingCache:
    """Content-keyed embedding store; ``root=None`` keeps it in memory only.

    Parameters
    ----------
    root : path or None
        The cache folder (created on first write).
    """

    def __init__(self, root: str | Path | None) -> None:
        self.root = Path(root) if root is not None else None
        self._loaded: dict[str, dict[str, np.ndarray]] = {}

    def get_many(self, namespace: str, keys: Iterable[str]) -> dict[str, np.ndarray]:
        """The cached vectors of those ``keys`` that are present (key -> (d,) float32)."""
        table = self._table(namespace)
        return {key: table[key] for key in keys if key in table}

    def put_many(self, namespace: str, keys: Sequence[str], vectors: np.ndarray) -> None:
        """Store ``vectors[i]`` under ``keys[i]``: one new shard, written atomically."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if len(keys) != len(vectors):
            raise ValueError(f"{len(keys)} keys for {len(vectors)} vectors")
        if not len(keys):
            return
        if self.root is not None:
            self._write_shard(namespace, keys, vectors)
        table = self._table(namespace)
        table.update(zip(keys, vectors, strict=True))

    def _table(self, namespace: str) -> dict[str, np.ndarray]:
        if namespace not in self._loaded:
            self._loaded[namespace] = self._read_all(namespace)
        return self._loaded[namespace]

    def _read_all(self, namespace: str) -> dict[str, np.ndarray]:
        table: dict[str, np.ndarray] = {}
        if self.root is None:
            return table
        folder = namespace_dir(self.root, namespace)
        for shard in sorted(folder.glob("shard-*.npz")):
            try:
                with np.load(shard, allow_pickle=False) as data:
                    keys, vectors = data["keys"], data["vectors"]
                if len(keys) != len(vectors) or vectors.ndim != 2:
                    raise ValueError("keys and vectors disagree")
            except Exception as error:  # a damaged shard costs a recomputation, not the run
                log.warning("skipping unreadable cache shard %s: %s", shard, error)
                continue
            table.update(zip(keys.tolist(), vectors.astype(np.float32, copy=False), strict=True))
        if table:
            log.info("cache %s: %d vectors from %s", namespace, len(table), folder)
        return table

    def _write_shard(self, namespace: str, keys: Sequence[str], vectors: np.ndarray) -> Path:
        assert self.root is not None
        folder = namespace_dir(self.root, namespace)
        folder.mkdir(parents=True, exist_ok=True)
        label = folder / "namespace.txt"
        if not label.exists():
            from werest.io import atomic_path

            with atomic_path(label) as tmp:
                tmp.write_text(namespace + "\n", encoding="utf-8")
        name = f"shard-{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:12]}.npz"
        handle, tmp_name = tempfile.mkstemp(prefix=".tmp-", suffix=".npz", dir=folder)
        try:
            with os.fdopen(handle, "wb") as stream:
                np.savez(stream, keys=np.asarray(list(keys), dtype=str), vectors=vectors)
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(tmp_name, folder / name)
        finally:
            Path(tmp_name).unlink(missing_ok=True)
        return folder / name
