"""werest.features.cache: content keys, atomic shards, resume, damaged shards (no torch needed)."""

from __future__ import annotations

import numpy as np
import pytest

from werest.features import cache as cache_module
from werest.features.cache import (
    EmbeddingCache,
    file_key,
    namespace_dir,
    normalise_text,
    text_key,
)

pytestmark = [pytest.mark.sonar]


def vectors(n: int, d: int = 4, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)


def test_round_trip_across_instances(tmp_path):
    first = EmbeddingCache(tmp_path)
    first.put_many("enc|en", ["a", "b"], vectors(2))
    second = EmbeddingCache(tmp_path)
    got = second.get_many("enc|en", ["a", "b", "c"])
    assert sorted(got) == ["a", "b"]
    np.testing.assert_array_equal(np.stack([got["a"], got["b"]]), vectors(2))
    assert got["a"].dtype == np.float32


def test_namespaces_do_not_mix(tmp_path):
    cache = EmbeddingCache(tmp_path)
    cache.put_many("speech:eng", ["k"], vectors(1, seed=1))
    cache.put_many("speech:arb", ["k"], vectors(1, seed=2))
    fresh = EmbeddingCache(tmp_path)
    np.testing.assert_array_equal(fresh.get_many("speech:eng", ["k"])["k"], vectors(1, seed=1)[0])
    np.testing.assert_array_equal(fresh.get_many("speech:arb", ["k"])["k"], vectors(1, seed=2)[0])
    assert namespace_dir(tmp_path, "a/b") != namespace_dir(tmp_path, "a_b")


def test_memory_only_cache_writes_nothing(tmp_path):
    cache = EmbeddingCache(None)
    cache.put_many("ns", ["x"], vectors(1))
    assert "x" in cache.get_many("ns", ["x"])
    assert not any(tmp_path.iterdir())


def test_half_written_shard_is_never_read(tmp_path):
    cache = EmbeddingCache(tmp_path)
    cache.put_many("ns", ["done"], vectors(1))
    folder = namespace_dir(tmp_path, "ns")
    # what an interrupt during np.savez leaves behind: a temporary file, never renamed
    (folder / ".tmp-abcdef.npz").write_bytes(b"PK\x03\x04 truncated")
    got = EmbeddingCache(tmp_path).get_many("ns", ["done", "pending"])
    assert list(got) == ["done"]


def test_interrupted_write_leaves_no_shard_and_earlier_shards_survive(tmp_path, monkeypatch):
    cache = EmbeddingCache(tmp_path)
    cache.put_many("ns", ["first"], vectors(1))

    def interrupted_replace(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(cache_module.os, "replace", interrupted_replace)
    with pytest.raises(KeyboardInterrupt):
        cache.put_many("ns", ["second"], vectors(1, seed=3))
    monkeypatch.undo()
    folder = namespace_dir(tmp_path, "ns")
    assert len(list(folder.glob("shard-*.npz"))) == 1
    assert not list(folder.glob(".tmp-*"))  # the temporary file is cleaned up
    resumed = EmbeddingCache(tmp_path)
    assert list(resumed.get_many("ns", ["first", "second"])) == ["first"]


def test_damaged_shard_is_skipped_with_a_warning(tmp_path, caplog):
    cache = EmbeddingCache(tmp_path)
    cache.put_many("ns", ["good"], vectors(1))
    cache.put_many("ns", ["bad"], vectors(1, seed=5))
    shards = sorted(namespace_dir(tmp_path, "ns").glob("shard-*.npz"))
    bad = next(s for s in shards if "bad" in _keys(s))
    bad.write_bytes(bad.read_bytes()[:40])
    got = EmbeddingCache(tmp_path).get_many("ns", ["good", "bad"])
    assert list(got) == ["good"]
    assert "skipping unreadable cache shard" in caplog.text


def _keys(shard) -> list[str]:
    with np.load(shard) as data:
        return data["keys"].tolist()


def test_mismatched_lengths_are_refused(tmp_path):
    with pytest.raises(ValueError, match="2 keys for 1 vectors"):
        EmbeddingCache(tmp_path).put_many("ns", ["a", "b"], vectors(1))


def test_file_key_is_content_not_name(tmp_path):
    one, two, other = tmp_path / "1.wav", tmp_path / "copy.wav", tmp_path / "2.wav"
    one.write_bytes(b"same bytes")
    two.write_bytes(b"same bytes")
    other.write_bytes(b"other bytes")
    assert file_key(one) == file_key(two) != file_key(other)
    with pytest.raises(OSError):
        file_key(tmp_path / "missing.wav")


def test_text_key_ignores_spacing_and_unicode_form_only():
    assert normalise_text("  hello \t world\n") == "hello world"
    assert text_key("caf\u00e9") == text_key("cafe\u0301")  # NFC
    assert text_key("hello world") == text_key(" hello  world ")
    assert text_key("Hello world") != text_key("hello world")  # case is content for SONAR
