"""A model file that is no skops file gets a message of its own (issue 43): an old pickle the
command that converts it, another format's file and corrupt bytes not a word of unpickling.
Nothing here is ever unpickled: the checks read the first bytes only."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import pickle
import random
import zipfile
import zlib
from importlib import metadata
from pathlib import Path

import pytest

from werest.cli.main import main
from werest.model.convert import convert_model
from werest.model.files import ModelError, file_kind, load_model, sha256_of

RANDOM = random.Random(43).randbytes(2000)
PICKLE = pickle.dumps({"estimator": None, "feature_names": ["pwer"]}, protocol=4)


def foreign_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("archive/data.pkl", b"\x80\x02}q\x00.")  # a PyTorch checkpoint's layout
    return buffer.getvalue()


def with_card(folder: Path, name: str, data: bytes, *, card: bool = True) -> Path:
    """``data`` as ``folder/name`` with a card whose sha256 matches it (what a swapped file and
    a forged card look like)."""
    path = folder / name
    path.write_bytes(data)
    if card:
        path.with_suffix(".json").write_text(
            json.dumps(
                {
                    "sha256": sha256_of(path),
                    "features": ["pwer"],
                    "target": "wer",
                    "versions": {"scikit-learn": metadata.version("scikit-learn")},
                }
            ),
            encoding="utf-8",
        )
    return path


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (PICKLE, "pickle"),
        (pickle.dumps([1, 2], protocol=2), "pickle"),
        (zlib.compress(PICKLE), "pickle"),  # joblib compress=3 (zlib)
        (gzip.compress(PICKLE, mtime=0), "pickle"),
        (bz2.compress(PICKLE), "pickle"),
        (lzma.compress(PICKLE), "pickle"),
        (b"PK\x03\x04" + RANDOM, "skops"),  # a zip as far as its magic goes: the audit decides
        (b"\x89PNG\r\n\x1a\n" + RANDOM, "foreign"),
        (b'{"sha256": "x"}', "foreign"),
        (b"hello, model\n", "foreign"),
        (gzip.compress(b"not a pickle", mtime=0), "foreign"),
        (b"\x80" + RANDOM, "corrupt"),  # PROTO's opcode, but no protocol werest knows
        (RANDOM, "corrupt"),
        (b"", "corrupt"),
    ],
)
def test_file_kind_reads_the_first_bytes(tmp_path, data, kind):
    path = tmp_path / "m.skops"
    path.write_bytes(data)
    assert file_kind(path).kind == kind


@pytest.fixture
def no_unpickling(monkeypatch):
    """Fail the test if anything is unpickled."""

    def refuse(*args, **kwargs):
        raise AssertionError("unpickled")

    import joblib

    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(joblib, "load", refuse)


@pytest.mark.parametrize("card", [True, False])
@pytest.mark.parametrize("trust", [True, False])
def test_an_old_pickle_gets_the_convert_hint_with_or_without_its_card(
    tmp_path, no_unpickling, card, trust
):
    path = with_card(tmp_path, "old.joblib", zlib.compress(PICKLE), card=card)
    with pytest.raises(ModelError) as raised:
        load_model(path, trust_model=trust)
    message = str(raised.value)
    assert "\n" not in message and "old pickle-based (joblib) model" in message
    assert f"werest convert-model model_path={path} trust_model=true" in message
    assert ("needs the model's card old.json" in message) is not card
    assert "no model card" not in message


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (RANDOM, "corrupt model file: bytes of no known format (it begins "),
        (b"", "corrupt model file: an empty file"),
        (b"\x89PNG\r\n\x1a\n" + RANDOM, "not a model file: a PNG image"),
        (b'{"features": []}', "not a model file: JSON text (a model card?"),
        (foreign_zip(), "a zip archive without skops's schema.json"),
        (b"PK\x03\x04" + RANDOM, "damaged skops file"),
    ],
)
@pytest.mark.parametrize("trust", [True, False])
def test_what_is_no_pickle_is_never_called_one(tmp_path, no_unpickling, data, fragment, trust):
    """Random bytes named .skops, with a card and trust_model=true, were once "an old
    pickle-based (joblib) model" with a hint to unpickle them."""
    path = with_card(tmp_path, "m.skops", data)
    with pytest.raises(ModelError) as raised:
        load_model(path, trust_model=trust)
    message = str(raised.value)
    if data.startswith(b"PK") and not trust:  # a zip is checked against its card first
        assert "differs from its card" not in message  # the card matches: the audit speaks
    assert fragment in message and "\n" not in message
    assert "pickle-based" not in message and "convert-model" not in message


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (RANDOM, "corrupt model file"),
        (b"hello\n", "not a model file: a text file"),
        (b"PK\x03\x04" + RANDOM, "already a skops model file"),
    ],
)
def test_convert_model_unpickles_only_a_pickle(tmp_path, no_unpickling, data, fragment):
    path = with_card(tmp_path, "m.pkl", data)
    with pytest.raises(ModelError, match=fragment) as raised:
        convert_model(path)
    assert "convert-model model_path" not in str(raised.value)
    assert not path.with_suffix(".skops").exists()


def test_the_cli_says_it_in_one_line(tmp_path, capsys, monkeypatch, no_unpickling):
    monkeypatch.chdir(tmp_path)
    with_card(tmp_path, "m.skops", RANDOM)
    status = main(
        [
            "convert-model",
            "model_path=m.skops",
            "trust_model=true",
        ]
    )
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1, err
    assert err.startswith("werest convert-model: error: ") and "corrupt model file" in err
