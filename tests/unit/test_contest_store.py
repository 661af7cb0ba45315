"""The winner's contests and their distances kept by content in ``cache_dir``
(:mod:`werest.estimation.contest_store`): a later process reads back exactly what the first
one built and aligned, and a damaged entry is built again."""

from __future__ import annotations

import numpy as np
import pandas as pd

from werest.estimation.contest_store import contests_folder
from werest.estimation.winner import build_contests
from werest.text import as_normaliser

NORMALISER = as_normaliser("whisper_basic")


def table() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    words = ["a", "b", "c", "d", "e", "f"]
    rows = []
    for dataset, systems in (("one", 3), ("two", 2), ("solo", 1)):
        for u in range(40):
            reference = list(rng.choice(words, rng.integers(2, 9)))
            for s in range(systems):
                noisy = [w if rng.random() > 0.2 * s else "x" for w in reference]
                rows.append((dataset, f"u{u}", f"s{s}", " ".join(noisy), "en"))
    return pd.DataFrame(rows, columns=["dataset", "utt_id", "system", "hypothesis", "language"])


def same(first, second) -> None:
    assert first.keys() == second.keys()
    for name, a in first.items():
        b = second[name]
        assert (a.dataset, a.systems, a.unit, a.words) == (b.dataset, b.systems, b.unit, b.words)
        assert a.utterances.equals(b.utterances) and a.utterances.dtype == b.utterances.dtype
        assert np.array_equal(a.codes, b.codes) and a.codes.dtype == b.codes.dtype
        assert a.texts.dtype == b.texts.dtype and a.texts.tolist() == b.texts.tolist()
        assert (a.contenders, a.zero_label) == (b.contenders, b.zero_label)


def test_a_later_process_reads_the_contests_and_distances_back(tmp_path):
    rows = table()
    contenders = {"one": ["s0", "s1"]}
    built = build_contests(rows, NORMALISER, contenders=contenders, cache_dir=tmp_path)
    assert set(built) == {"one", "two"}
    same(build_contests(rows, NORMALISER, contenders=contenders), built)
    computed = built["one"].distance(0, 2)
    read = build_contests(rows, NORMALISER, contenders=contenders, cache_dir=tmp_path)
    same(read, built)
    folder = contests_folder(tmp_path, rows, NORMALISER)
    assert (folder / "0-0-2.npy").exists() and read["one"].store == folder
    stored = read["one"].distance(2, 0)
    assert "encoded" not in read["one"]._distances  # read, not aligned again
    assert stored.dtype == computed.dtype and np.array_equal(stored, computed)
    assert np.array_equal(read["two"].distance(0, 1), built["two"].distance(0, 1))


def test_another_table_or_a_damaged_entry_is_built_again(tmp_path):
    rows = table()
    built = build_contests(rows, NORMALISER, cache_dir=tmp_path)
    built["one"].distance(0, 1)
    other = rows.assign(hypothesis=rows["hypothesis"].str.replace("a", "b"))
    assert contests_folder(tmp_path, other, NORMALISER) != built["one"].store
    folder = built["one"].store
    (folder / "0-codes.npy").write_bytes(b"not an array")
    (folder / "0-0-1.npy").write_bytes(b"nor this")
    again = build_contests(rows, NORMALISER, cache_dir=tmp_path)
    same(again, built)
    assert np.array_equal(again["one"].distance(0, 1), built["one"].distance(0, 1))
    same(build_contests(rows, NORMALISER, cache_dir=tmp_path), built)  # stored again
    assert np.load(folder / "0-codes.npy").shape == built["one"].codes.shape


def test_a_later_process_reads_the_encoded_texts_back_and_aligns_as_the_first(tmp_path):
    """The texts as the alignments read them are kept with the contest: a later process (a
    new vocabulary of word code points) reads them instead of encoding again, and its
    consensus gaps and new distances are the first process's; a damaged file is encoded
    again."""
    import werest.text.counting as text

    rows = table()
    built = build_contests(rows, NORMALISER, cache_dir=tmp_path)
    gaps = built["one"].consensus_gap(0, 1)
    folder = contests_folder(tmp_path, rows, NORMALISER)
    assert (folder / "0-encoded.parquet").exists()
    text._ENCODER.clear()  # as in another process
    text.word_strings(["z y x w"])  # whose vocabulary numbers the words otherwise
    read = build_contests(rows, NORMALISER, cache_dir=tmp_path)
    assert read["one"]._encoded() == built["one"]._encoded()
    assert np.array_equal(read["one"].consensus_gap(0, 1), gaps)
    assert np.array_equal(read["one"].distance(1, 2), built["one"].distance(1, 2))
    (folder / "0-encoded.parquet").write_bytes(b"not parquet")
    again = build_contests(rows, NORMALISER, cache_dir=tmp_path)
    assert np.array_equal(again["one"].consensus_gap(0, 1), gaps)
