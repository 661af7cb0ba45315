"""werest.features.similarity: the real SONAR pipelines on a tiny random SONAR, end to end.

The SONAR tests build a tiny SONAR with sonar's own factories (tests/tiny_sonar.py), save it
with fairseq2 asset cards and load it back through ``SonarEmbedder`` exactly as real weights
load, then embed real audio from ../shared/data. The first block needs no torch: it runs the
table logic with a NumPy test double of the :class:`Embedder` protocol.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import soundfile as sf
from omegaconf import OmegaConf

from tests.conftest import SHARED_DATA
from werest.errors import ConfigError, InputError, WerestError
from werest.features.cache import EmbeddingCache
from werest.features.embedder import Embedder, build_embedder, cosine
from werest.features.embedding import embed_audio_files
from werest.features.similarity import add_similarity
from werest.ingest.audio import AudioPolicy

pytestmark = [pytest.mark.shared, pytest.mark.sonar, pytest.mark.cluster]

AN4_SPEAKER = ("an4", "wav", "an4test_clstk", "fcaw")


def shared(*parts: str) -> Path:
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs the shared data at {path} (../shared beside the repo); absent here")
    return path


def an4_clips(count: int = 4) -> list[Path]:
    return sorted(shared(*AN4_SPEAKER).glob("*.sph"))[:count]


# --------------------------------------------------------------------------- a NumPy double


class HashEmbedder:
    """A deterministic :class:`Embedder` without torch: vectors seeded by content hashes."""

    def __init__(self, dim: int = 8, languages: tuple[str, ...] = ("en",)) -> None:
        self.dim = dim
        self.languages = set(languages)
        self.calls = {"speech": 0, "text": 0}

    def _vector(self, data: bytes) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(data).digest()[:8], "little")
        return np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)

    def cache_name(self, modality: str, lang: str) -> str:
        if lang not in self.languages:
            raise ConfigError(f"no encoder for {lang!r}")
        return f"hash{self.dim}:{modality}:{lang}"

    def embed_speech(self, audio, lang):
        self.cache_name("speech", lang)
        self.calls["speech"] += len(audio)
        return np.stack([self._vector(np.asarray(a, np.float32).tobytes()) for a in audio])

    def embed_text(self, texts, lang):
        self.cache_name("text", lang)
        self.calls["text"] += len(texts)
        return np.stack([self._vector(t.encode()) for t in texts])


def tables(audio: dict[str, Path | None], language: str = "en") -> tuple[pd.DataFrame, ...]:
    """A transcripts table (2 systems per utterance) and its feature table."""
    rows = []
    for utt, path in audio.items():
        for system, text in (("ref_like", "enter seven two"), ("other", "go stop")):
            rows.append(
                {
                    "dataset": "an4",
                    "utt_id": utt,
                    "system": system,
                    "hypothesis": text,
                    "audio": None if path is None else str(path),
                    "language": language,
                }
            )
    transcripts = pd.DataFrame(rows)
    features = transcripts[["dataset", "utt_id", "system"]].assign(pwer=0.5, proxy="x")
    return transcripts, features


def test_cosine_is_bounded_and_scale_free():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((50, 16)), rng.standard_normal((50, 16))
    values = cosine(a, b)
    assert np.all((values >= -1) & (values <= 1))
    np.testing.assert_allclose(cosine(a, 3.0 * a), 1.0)
    np.testing.assert_allclose(cosine(a, -a), -1.0)
    np.testing.assert_allclose(cosine(a * 5, b * 0.1), values)
    assert np.isnan(cosine(np.zeros((1, 16)), b[:1]))[0]


def test_double_is_an_embedder():
    assert isinstance(HashEmbedder(), Embedder)
    assert not isinstance(object(), Embedder)


def test_add_similarity_statuses_without_torch(tmp_path):
    clips = an4_clips(2)
    silent = tmp_path / "silent.wav"
    sf.write(silent, np.zeros(16000, np.float32), 16000)
    transcripts, features = tables(
        {"u1": clips[0], "u2": clips[1], "gone": tmp_path / "gone.wav", "quiet": silent}
    )
    transcripts = transcripts[~((transcripts.utt_id == "u2") & (transcripts.system == "other"))]
    extra = pd.DataFrame([{"dataset": "an4", "utt_id": "noaudio", "system": "other"}])
    features = pd.concat([features, extra], ignore_index=True)
    out = add_similarity(features, transcripts, HashEmbedder())
    status = dict(zip(zip(out.utt_id, out.system, strict=True), out.similarity_status, strict=True))
    assert status[("u1", "ref_like")] == status[("u1", "other")] == "ok"
    assert status[("u2", "other")] == "no_hypothesis"
    assert status[("gone", "other")] == "missing"
    assert status[("quiet", "ref_like")] == "silent"
    assert status[("noaudio", "other")] == "no_audio"
    assert out.similarity.notna().tolist() == (out.similarity_status == "ok").tolist()
    assert len(out) == len(features) and list(out.columns[:5]) == list(features.columns)
    assert out.loc[out.utt_id == "u1", "audio_duration"].iloc[0] == pytest.approx(4.0)


def test_add_similarity_matches_the_embeddings(tmp_path):
    (clip,) = an4_clips(1)
    transcripts, features = tables({"u1": clip})
    embedder = HashEmbedder()
    out = add_similarity(features, transcripts, embedder)
    from werest.ingest.audio import load_audio

    speech = embedder.embed_speech(load_audio(clip).segments, "en")
    text = embedder.embed_text(["enter seven two", "go stop"], "en")
    expected = cosine(np.repeat(speech, 2, axis=0), text)
    np.testing.assert_allclose(out.similarity, expected, rtol=1e-6)


def test_cache_hits_skip_the_encoder(tmp_path):
    transcripts, features = tables({f"u{i}": p for i, p in enumerate(an4_clips(3))})
    first = HashEmbedder()
    before = add_similarity(features, transcripts, first, EmbeddingCache(tmp_path / "c"))
    assert first.calls == {"speech": 3, "text": 2}  # each clip and distinct text once
    again = HashEmbedder()
    after = add_similarity(features, transcripts, again, EmbeddingCache(tmp_path / "c"))
    assert again.calls == {"speech": 0, "text": 0}
    pd.testing.assert_frame_equal(before, after)


def test_interrupted_run_resumes_where_it_stopped(tmp_path):
    paths = [str(p) for p in an4_clips(5)]

    class Interrupting(HashEmbedder):
        def embed_speech(self, audio, lang):
            if self.calls["speech"] >= 2:
                raise KeyboardInterrupt
            return super().embed_speech(audio, lang)

    cache_dir, policy = tmp_path / "c", AudioPolicy()
    with pytest.raises(KeyboardInterrupt):
        embed_audio_files(paths, "en", Interrupting(), EmbeddingCache(cache_dir), policy, 2)
    resumed = HashEmbedder()
    out = embed_audio_files(paths, "en", resumed, EmbeddingCache(cache_dir), policy, 2)
    assert resumed.calls["speech"] == 3  # the first chunk of 2 was kept
    fresh = embed_audio_files(paths, "en", HashEmbedder(), EmbeddingCache(None), policy, 2)
    for path in paths:
        np.testing.assert_array_equal(out[path], fresh[path])


def test_unsupported_language_is_a_status_not_a_crash():
    transcripts, features = tables({"u1": an4_clips(1)[0]}, language="xx")
    out = add_similarity(features, transcripts, HashEmbedder())
    assert set(out.similarity_status) == {"unsupported_language"}
    assert out.similarity.isna().all()


def test_language_defaults_and_missing_columns():
    transcripts, features = tables({"u1": an4_clips(1)[0]})
    no_lang = transcripts.drop(columns="language")
    out = add_similarity(features, no_lang, HashEmbedder(), default_language="en")
    assert set(out.similarity_status) == {"ok"}
    with pytest.raises(InputError, match="language"):
        add_similarity(features, no_lang, HashEmbedder())
    with pytest.raises(InputError, match="audio"):
        add_similarity(features, transcripts.drop(columns="audio"), HashEmbedder())


def test_build_embedder_from_config():
    cfg = OmegaConf.create({"_target_": "tests.integration.test_similarity.HashEmbedder", "dim": 4})
    embedder = build_embedder(cfg)
    assert isinstance(embedder, HashEmbedder) and embedder.dim == 4
    with pytest.raises(ConfigError, match="not an Embedder"):
        build_embedder(OmegaConf.create({"_target_": "collections.OrderedDict"}))
    with pytest.raises(ConfigError):
        build_embedder(OmegaConf.create({"_target_": "werest.no_such.Thing"}))


def test_bad_sonar_config_is_a_config_error():
    cfg = {
        "_target_": "werest.features.sonar.SonarEmbedder",
        "speech_encoders": {"en": "x"},
        "text_languages": {"en": "eng_Latn"},
        "batch_size": 0,
    }
    with pytest.raises(ConfigError, match="batch_size"):
        build_embedder(OmegaConf.create(cfg))


# --------------------------------------------------------------------------- the tiny SONAR


@pytest.fixture(scope="session")
def sonar_installed():
    pytest.importorskip("torch", reason="needs the [sonar] extra")
    pytest.importorskip("sonar", reason="needs the [sonar] extra")
    import fairseq2n  # noqa: F401  (fails loudly without libsndfile1: that must not skip)


@pytest.fixture(scope="session")
def tiny_assets(sonar_installed, tmp_path_factory) -> Path:
    from tests.tiny_sonar import write_tiny_assets

    folder = tmp_path_factory.mktemp("tiny_sonar")
    write_tiny_assets(folder, seed=0)
    return folder


def tiny_sonar(folder: Path, **kwargs):
    from tests.tiny_sonar import LANGS
    from werest.features.sonar import SonarEmbedder

    speech = {iso: f"tiny_sonar_speech_{code[:3]}" for iso, code in LANGS.items()}
    options = {"device": "cpu", "batch_size": 4, "asset_dir": str(folder), **kwargs}
    return SonarEmbedder(speech, LANGS, "tiny_sonar_text", **options)


@pytest.fixture(scope="session")
def tiny(tiny_assets):
    return tiny_sonar(tiny_assets)


def clips_16k(paths) -> list[np.ndarray]:
    from werest.ingest.audio import load_audio

    return [load_audio(p).segments[0] for p in paths]


def test_speech_embeddings_of_real_audio(tiny):
    audio = clips_16k([*an4_clips(4), shared("thennal10", "samples", "en", "1.mp3")])
    vectors = tiny.embed_speech(audio, "en")
    assert vectors.shape == (5, 32) and vectors.dtype == np.float32
    assert np.isfinite(vectors).all()
    assert np.linalg.matrix_rank(vectors) == 5  # distinct clips, distinct vectors


@pytest.mark.parametrize("lang", ["ar", "ml"])
def test_each_language_has_its_own_speech_encoder(tiny, lang):
    audio = clips_16k([shared("thennal10", "samples", lang, "2.mp3")])
    own, english = tiny.embed_speech(audio, lang), tiny.embed_speech(audio, "en")
    assert own.shape == (1, 32)
    assert not np.allclose(own, english)


def test_speech_is_deterministic_and_batch_independent(tiny, tiny_assets):
    audio = clips_16k(an4_clips(6))  # different lengths: padding inside a batch
    batched = tiny.embed_speech(audio, "en")
    again = tiny_sonar(tiny_assets, batch_size=1).embed_speech(audio, "en")
    np.testing.assert_allclose(batched, again, atol=1e-5)
    np.testing.assert_array_equal(batched, tiny.embed_speech(audio, "en"))


def test_text_embeddings(tiny, tiny_assets):
    texts = ["enter seven two", "go stop", "", "enter seven two"]
    vectors = tiny.embed_text(texts, "en")
    assert vectors.shape == (4, 32) and vectors.dtype == np.float32
    np.testing.assert_array_equal(vectors[0], vectors[3])
    assert not np.allclose(vectors[0], vectors[1])
    single = tiny_sonar(tiny_assets, batch_size=1).embed_text(texts, "en")
    np.testing.assert_allclose(vectors, single, atol=1e-5)
    # the language token is part of the input: eng_Latn and arb_Arab differ
    assert not np.allclose(tiny.embed_text(texts[:1], "ar"), vectors[:1])


def test_cards_load_the_saved_weights(tiny, tiny_assets):
    from tests.tiny_sonar import LANGS, build_models
    from werest.features.sonar import SonarEmbedder

    models = build_models(tiny_assets / "rebuild", seed=0)
    memory = SonarEmbedder.from_models(
        {"en": models["speech"]}, models["text"], models["tokenizer"], LANGS, name="tiny0"
    )
    audio = clips_16k(an4_clips(2))
    np.testing.assert_allclose(memory.embed_speech(audio, "en"), tiny.embed_speech(audio, "en"))
    texts = ["one two three"]
    np.testing.assert_allclose(memory.embed_text(texts, "en"), tiny.embed_text(texts, "en"))


def test_similarity_end_to_end_with_cache(tiny_assets, tmp_path):
    long_clip = tmp_path / "long.flac"  # 66 s from AN4 clips: over max_seconds, so split
    joined = np.concatenate([sf.read(p, dtype="float32")[0] for p in an4_clips(20)])
    sf.write(long_clip, np.tile(joined, 2)[: 66 * 16000], 16000)
    audio = {"u1": an4_clips(1)[0], "u2": an4_clips(2)[1], "long": long_clip}
    transcripts, features = tables(audio)
    ar_t, ar_f = tables({"ar1": shared("thennal10", "samples", "ar", "1.mp3")}, language="ar")
    transcripts, features = pd.concat([transcripts, ar_t]), pd.concat([features, ar_f])
    embedder = tiny_sonar(tiny_assets)
    cache = tmp_path / "cache"
    out = add_similarity(features, transcripts, embedder, EmbeddingCache(cache))
    assert (out.similarity_status == "ok").sum() == 6
    assert (out.loc[out.utt_id == "long", "similarity_status"] == "split").all()
    assert out.similarity.between(-1, 1).all()
    assert out.loc[out.utt_id == "long", "audio_duration"].iloc[0] == pytest.approx(66.0)
    # the value is the cosine of the pipelines' own embeddings
    u1 = out[(out.utt_id == "u1") & (out.system == "other")].similarity.iloc[0]
    speech = embedder.embed_speech(clips_16k([audio["u1"]]), "en")
    assert u1 == pytest.approx(cosine(speech, embedder.embed_text(["go stop"], "en"))[0], abs=1e-5)
    # a second run reads every vector from the cache: no model is even loaded
    cold = tiny_sonar(tiny_assets)
    again = add_similarity(features, transcripts, cold, EmbeddingCache(cache))
    assert cold._speech == {} and cold._text is None
    pd.testing.assert_frame_equal(out, again)


# --------------------------------------------------------------------------- error paths


def test_unknown_card_says_how_to_get_weights(tiny_assets):
    embedder = tiny_sonar(tiny_assets)
    embedder.speech_encoders["en"] = "no_such_card"
    with pytest.raises(WerestError, match="no fairseq2 asset card named 'no_such_card'") as info:
        embedder.embed_speech(clips_16k(an4_clips(1)), "en")
    assert "docs/similarity.md" in str(info.value)


def test_missing_local_checkpoint_is_a_werest_error(tiny_assets, tmp_path):
    cards = tmp_path / "cards"
    cards.mkdir()
    (cards / "broken.yaml").write_text(
        "name: gone_speech\nmodel_family: sonar_speech\nmodel_arch: english\n"
        "checkpoint: /nonexistent/spenc.eng.pt\n"
        "---\n"
        "name: offline_speech\nbase: sonar_speech_encoder_base\nmodel_arch: english\n"
        "checkpoint: https://weights.invalid/spenc.eng.pt\n"
    )
    for card in ("gone_speech", "offline_speech"):  # a missing file; an unreachable server
        embedder = tiny_sonar(tiny_assets, asset_dir=str(cards))
        embedder.speech_encoders["en"] = card
        with pytest.raises(WerestError, match=f"cannot load the SONAR speech encoder '{card}'"):
            embedder.embed_speech(clips_16k(an4_clips(1)), "en")


def test_missing_asset_dir_and_bad_device_are_config_errors(tiny_assets, tmp_path):
    import torch

    with pytest.raises(ConfigError, match="no such folder"):
        tiny_sonar(tmp_path / "nowhere").embed_text(["x"], "en")
    with pytest.raises(ConfigError, match="not supported on CPU"):
        tiny_sonar(tiny_assets, dtype="float16").embed_text(["x"], "en")
    with pytest.raises(ConfigError, match="dtype"):
        tiny_sonar(tiny_assets, dtype="int8").embed_text(["x"], "en")
    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match="no CUDA"):
            tiny_sonar(tiny_assets, device="cuda").embed_text(["x"], "en")


def test_unconfigured_language_is_a_config_error(tiny):
    with pytest.raises(ConfigError, match="'xx'"):
        tiny.embed_text(["x"], "xx")
    with pytest.raises(ConfigError, match="'xx'"):
        tiny.embed_speech(clips_16k(an4_clips(1)), "xx")


# --------------------------------------------------------------------------- werest embed


def tiny_embed_args(tiny_assets: Path, folder: Path, clips: int, out: str, cache: str) -> list:
    """``werest embed`` of AN4 clips (two systems each) with the tiny SONAR, from ``folder``."""
    from werest.ingest.table import write_table

    transcripts, features = tables({p.stem: p for p in an4_clips(clips)})
    write_table(transcripts, folder / "transcripts.parquet")
    write_table(features, folder / "features.parquet")
    return [
        "embed",
        f"input={folder / 'features.parquet'}",
        f"transcripts={folder / 'transcripts.parquet'}",
        f"out={folder / out}",
        f"cache_dir={folder / cache}",
        f"embedder.asset_dir={tiny_assets}",
        "embedder.speech_encoders.en=tiny_sonar_speech_eng",
        "embedder.text_encoder=tiny_sonar_text",
        "embedder.text_tokenizer=tiny_sonar_text",
        "embedder.device=cpu",
    ]


def test_werest_embed_command(tiny_assets, tmp_path, capsys):
    from werest.cli.main import main
    from werest.ingest.table import read_table

    args = tiny_embed_args(tiny_assets, tmp_path, 3, "with_similarity.parquet", "cache")
    assert main(args) == 0
    out = read_table(tmp_path / "with_similarity.parquet", required=("dataset", "utt_id"))
    assert len(out) == 6 and (out.similarity_status == "ok").all()
    assert out.similarity.between(-1, 1).all() and "pwer" in out.columns

    # the default SONAR cards with an unreachable checkpoint: exit 2, one line, no traceback
    capsys.readouterr()
    cards = tmp_path / "offline"
    cards.mkdir()
    (cards / "offline.yaml").write_text(
        "name: sonar_speech_encoder_eng@user\ncheckpoint: https://weights.invalid/spenc.eng.pt\n"
    )
    kept = [a for a in args if not a.startswith(("embedder.", "cache_dir="))]
    offline = [
        *kept,
        f"embedder.asset_dir={cards}",
        f"cache_dir={tmp_path / 'cache2'}",
    ]
    assert main(offline) == 2
    err = capsys.readouterr().err
    (line,) = [x for x in err.splitlines() if x.startswith("werest embed: error:")]
    assert "Traceback" not in err
    assert "sonar_speech_encoder_eng" in line and "docs/similarity.md" in line


def test_werest_embed_on_a_local_cluster_equals_a_run_in_this_process(
    tiny_assets, tmp_path, monkeypatch
):
    """The tiny SONAR built on two Dask workers from its config, 2 utterances a task (5
    utterances: 3 tasks): the similarities of a run in this process, and the workers' cache
    shards serve a later run here, which embeds nothing again."""
    pytest.importorskip("distributed", reason="needs the [cluster] extra")
    from werest.cli.main import main
    from werest.features import similarity
    from werest.ingest.table import read_table

    monkeypatch.setattr(similarity, "UTTERANCES_PER_TASK", 2)
    here = tiny_embed_args(tiny_assets, tmp_path, 5, "here.parquet", "cache_here")
    assert main(here) == 0
    there = [a for a in here if not a.startswith(("out=", "cache_dir="))]
    there += [f"out={tmp_path / 'there.parquet'}", f"cache_dir={tmp_path / 'cache'}"]
    # the client builds no embedder with a cluster: only the workers' could embed
    assert main([*there, "cluster=local", "cluster.workers=2"]) == 0
    expected = read_table(tmp_path / "here.parquet", required=("dataset", "utt_id"))
    found = read_table(tmp_path / "there.parquet", required=("dataset", "utt_id"))
    assert len(found) == 10 and (found["similarity_status"] == "ok").all()
    # other batches on the workers: padding may move the last float digits
    pd.testing.assert_frame_equal(found, expected, check_exact=False, rtol=1e-5, atol=1e-6)
    shards = sorted((tmp_path / "cache").rglob("shard-*.npz"))
    assert shards
    kept = [a for a in there if not a.startswith("out=")]
    assert main([*kept, f"out={tmp_path / 'again.parquet'}"]) == 0  # in this process
    assert sorted((tmp_path / "cache").rglob("shard-*.npz")) == shards
    again = read_table(tmp_path / "again.parquet", required=("dataset", "utt_id"))
    pd.testing.assert_frame_equal(again, found)
