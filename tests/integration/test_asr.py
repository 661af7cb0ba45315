"""werest.ingest.asr and ``werest transcribe``: real recognisers on real AN4 clips.

PocketSphinx (generic en-us, and AN4-tuned with AN4's own LM and dictionary) runs on the first
eight AN4 test utterances from ../shared/data; the transformers backend runs the real
``pipeline("automatic-speech-recognition")`` on a tiny randomly initialised Whisper built here
from a config (no download). The two test doubles below are real Transcribers that delegate to
PocketSphinx and count calls or stop like a Ctrl-C; no library is mocked.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest
import soundfile as sf
from omegaconf import OmegaConf

from tests.conftest import an4_test_utterances, shared_path
from werest.cli.commands.transcribe import run
from werest.cli.config import compose, load_settings
from werest.cli.main import _quote
from werest.errors import ConfigError, InputError
from werest.ingest.asr import Transcriber, build_transcriber
from werest.ingest.asr.pocketsphinx_asr import PocketSphinxTranscriber, clean_words, to_int16
from werest.ingest.table import read_table, write_table
from werest.text import corpus_rate
from werest.text.scoring import score_utterances

pytestmark = [pytest.mark.shared, pytest.mark.sonar, pytest.mark.asr]

N_CLIPS = 8


def an4_models() -> list[str]:
    """Overrides that point the AN4-tuned config at the shared data wherever pytest runs."""
    etc = shared_path("an4", "etc")
    return [f"asr.lm={_quote(str(etc / 'an4.ug.lm'))}", f"asr.dict={_quote(str(etc / 'an4.dic'))}"]


def transcribe(input_path: Path, out: Path, *overrides: str, asr: str = "pocketsphinx_an4"):
    """``werest transcribe`` in-process: its real settings, and run it."""
    extra = an4_models() if asr == "pocketsphinx_an4" else []
    cfg = load_settings(
        "transcribe",
        [
            f"input={_quote(str(input_path))}",
            f"out={_quote(str(out))}",
            f"asr={asr}",
            *extra,
            *overrides,
        ],
    )
    return run(cfg)


@pytest.fixture(scope="module")
def utterances(tmp_path_factory) -> Path:
    """The first AN4 test utterances as an utterance table (werest import sphinx)."""
    return an4_test_utterances(tmp_path_factory.mktemp("an4"), N_CLIPS)


@pytest.fixture(scope="module")
def both_systems(utterances, tmp_path_factory) -> Path:
    """Generic and AN4-tuned pocketsphinx on the clips, one after the other into one table."""
    out = tmp_path_factory.mktemp("asr") / "an4_asr.parquet"
    transcribe(utterances, out, asr="pocketsphinx")
    transcribe(utterances, out)
    return out


# --------------------------------------------------------------------------- pocketsphinx


def test_markup_is_stripped_and_raw_case_kept():
    words = ["<s>", "[NOISE]", "ENTER(2)", "<sil>", "++BREATH++", "NINE", "ONE(2)", "</s>"]
    assert clean_words(words) == "ENTER NINE ONE"
    assert clean_words(["<s>", "<sil>", "</s>"]) == ""


def test_int16_conversion_round_trips_16_bit_audio():
    pcm = np.array([-32768, -1, 0, 1, 32767], dtype="<i2")
    assert to_int16(pcm.astype(np.float32) / 32768.0) == pcm.tobytes()
    assert to_int16(np.array([2.0, -2.0], np.float32)) == np.array([32767, -32768], "<i2").tobytes()


def test_backends_build_from_config_and_fail_on_missing_models(tmp_path):
    cfg = compose("transcribe", ["input=x", "out=y", "asr=pocketsphinx"])
    transcriber = build_transcriber(cfg.asr)
    assert isinstance(transcriber, Transcriber) and transcriber.name == "pocketsphinx-en-us"
    cfg.asr.lm = str(tmp_path / "no.lm")
    with pytest.raises(ConfigError, match=r"asr\.lm: no such file .*no\.lm"):
        build_transcriber(cfg.asr)
    cfg = compose("transcribe", ["input=x", "out=y", "asr=pocketsphinx", "+asr.options.kws=x"])
    with pytest.raises(ConfigError, match="LM decoding only"):
        build_transcriber(cfg.asr)


def test_an4_tuned_system_beats_the_generic_one(both_systems):
    table = read_table(both_systems)
    assert sorted(table["system"].unique()) == ["pocketsphinx-an4", "pocketsphinx-en-us"]
    assert table.groupby("system").size().eq(N_CLIPS).all()
    for system, rows in table.groupby("system"):
        assert (rows["hypothesis"].str.strip() != "").sum() >= N_CLIPS - 2, system
        assert not rows["hypothesis"].str.contains(r"<s>|</s>|<sil>|\[|\+\+|\(\d\)").any()
    words = " ".join(table.loc[table["system"] == "pocketsphinx-an4", "hypothesis"]).split()
    assert words and all(w.isupper() or w.isdigit() or w == "'" for w in words)  # AN4's dict
    generic = " ".join(table.loc[table["system"] == "pocketsphinx-en-us", "hypothesis"])
    assert generic == generic.lower()  # the bundled dictionary is lower case: kept raw
    scored = score_utterances(table)
    wer = {
        system: corpus_rate(rows["word_errors"], rows["ref_words"])
        for system, rows in scored.groupby("system")
    }
    assert wer["pocketsphinx-an4"] < wer["pocketsphinx-en-us"]


def test_output_carries_the_utterance_and_records_rtfx(both_systems, utterances):
    table = read_table(both_systems)
    source = read_table(utterances, required=("dataset", "utt_id"))
    merged = table.merge(source, on=["dataset", "utt_id"], suffixes=("", "_in"))
    assert len(merged) == 2 * N_CLIPS
    for column in ("reference", "audio", "speaker", "split"):
        assert (merged[column] == merged[f"{column}_in"]).all(), column
    seconds = [sf.info(path).duration for path in merged["audio"]]
    assert np.allclose(merged["duration"], seconds, atol=1e-3)
    assert (table["processing_seconds"] > 0).all()
    records = json.loads(both_systems.with_name(f"{both_systems.name}.rtfx.json").read_text())
    assert sorted(r["system"] for r in records) == ["pocketsphinx-an4", "pocketsphinx-en-us"]
    for record in records:
        rows = table[table["system"] == record["system"]]
        assert record["utterances"] == N_CLIPS
        assert record["audio_seconds"] == pytest.approx(rows["duration"].sum(), abs=1e-3)
        expected = rows["duration"].sum() / rows["processing_seconds"].sum()
        assert record["rtfx"] == pytest.approx(expected, abs=0.01)
        resources = record["resources"]  # psutil's measurements of the run
        assert resources["cpu_seconds"] > 0 and resources["rss_mb_peak"] > 0
        assert resources["peak_memory_mb"] >= resources["rss_mb_peak"] - 1
    assert both_systems.with_name(f"{both_systems.name}.config.yaml").is_file()
    assert not both_systems.with_name(f"{both_systems.name}.failed.csv").exists()


# --------------------------------------------------------------------------- resuming


class CountingTranscriber:
    """PocketSphinx AN4-tuned, counting the clips it is given (class-wide, across builds)."""

    clips: ClassVar[list[int]] = [0]
    batch_size = 1

    def __init__(self, stop_after: int | None = None, **settings) -> None:
        self.inner = PocketSphinxTranscriber(**settings)
        self.name = self.inner.name
        self.stop_after = stop_after

    def transcribe(self, audio):
        if self.stop_after is not None and self.clips[0] >= self.stop_after:
            raise KeyboardInterrupt  # what Ctrl-C raises in the middle of a chunk
        self.clips[0] += len(audio)
        return self.inner.transcribe(audio)


def counting(stop_after: int | None = None) -> list[str]:
    etc = shared_path("an4", "etc")
    CountingTranscriber.clips[0] = 0
    return [
        f"asr._target_={__name__}.CountingTranscriber",
        f"+asr.stop_after={'null' if stop_after is None else stop_after}",
        f"asr.lm={_quote(str(etc / 'an4.ug.lm'))}",
        f"asr.dict={_quote(str(etc / 'an4.dic'))}",
    ]


def test_rerun_transcribes_nothing(both_systems, utterances):
    before = read_table(both_systems)
    stamp = both_systems.stat().st_mtime_ns
    transcribe(utterances, both_systems, *counting())
    assert CountingTranscriber.clips[0] == 0
    pd.testing.assert_frame_equal(before, read_table(both_systems))
    assert both_systems.stat().st_mtime_ns == stamp  # nothing new: not even rewritten


def test_interrupted_run_keeps_finished_chunks_and_resumes(utterances, both_systems, tmp_path):
    out = tmp_path / "partial.csv"
    with pytest.raises(KeyboardInterrupt):
        transcribe(utterances, out, "chunk_size=2", "limit=6", *counting(stop_after=3))
    assert CountingTranscriber.clips[0] == 3
    kept = read_table(out)
    assert len(kept) == 2  # the first chunk; the second was cut off before its write
    assert sorted(p.name for p in tmp_path.iterdir()) == ["partial.csv"]  # no temp files
    transcribe(utterances, out, "chunk_size=2", "limit=6", *counting())
    assert CountingTranscriber.clips[0] == 4  # only what was missing
    done = read_table(out)
    assert len(done) == 6
    first = done.set_index("utt_id").loc[kept["utt_id"], "processing_seconds"]
    assert np.allclose(first.astype(float), kept["processing_seconds"].astype(float))  # as before
    # each clip is decoded on its own: a resumed run gives what one uninterrupted run gave
    whole = read_table(both_systems).query("system == 'pocketsphinx-an4'").set_index("utt_id")
    resumed = done.set_index("utt_id")["hypothesis"].fillna("")
    assert resumed.to_dict() == whole.loc[resumed.index, "hypothesis"].to_dict()


# --------------------------------------------------------------------------- inputs and failures


def test_folder_input_with_corrupt_and_silent_files(tmp_path):
    folder = tmp_path / "clips"
    (folder / "nested").mkdir(parents=True)
    speaker = shared_path("an4", "wav", "an4test_clstk", "fcaw")
    for clip in sorted(speaker.glob("*.sph"))[:3]:
        shutil.copy(clip, folder / "nested" / clip.name)
    (folder / "corrupt.wav").write_bytes(b"RIFF not really a wave file")
    sf.write(folder / "silent.flac", np.zeros(16000, np.float32), 16000)
    (folder / "notes.txt").write_text("not audio")
    out = tmp_path / "out.jsonl"
    table = transcribe(folder, out, "dataset=my-clips")
    assert len(table) == 3 and set(table["dataset"]) == {"my-clips"}
    assert set(table["utt_id"]) == {p.stem for p in sorted(speaker.glob("*.sph"))[:3]}
    assert "reference" not in table.columns
    failed = pd.read_csv(tmp_path / "out.jsonl.failed.csv").set_index("utt_id")
    assert failed.loc["corrupt", "asr_status"] == "unreadable"
    assert failed.loc["silent", "asr_status"] == "silent"
    assert len(failed) == 2


def test_missing_audio_gets_a_status_and_the_rest_go_on(utterances, tmp_path):
    table = read_table(utterances, required=("dataset", "utt_id"))
    table.loc[1, "audio"] = str(tmp_path / "gone.sph")
    table.loc[2, "audio"] = None
    source = tmp_path / "utts.parquet"
    write_table(table.head(4), source)
    out = tmp_path / "out.parquet"
    result = transcribe(source, out)
    assert sorted(result["utt_id"]) == sorted(table["utt_id"].iloc[[0, 3]])
    failed = pd.read_csv(tmp_path / "out.parquet.failed.csv").set_index("utt_id")
    assert failed.loc[table["utt_id"][1], "asr_status"] == "missing"
    assert failed.loc[table["utt_id"][2], "asr_status"] == "no_audio"
    # a transcripts table as input: its rows are kept and the new system joins them
    again = transcribe(out, tmp_path / "more.parquet", "limit=2", asr="pocketsphinx")
    assert len(again) == 4  # its 2 rows kept; its 2 utterances transcribed by the new system
    assert set(again["system"]) == {"pocketsphinx-an4", "pocketsphinx-en-us"}


def test_bad_inputs_are_werest_errors(utterances, tmp_path):
    with pytest.raises(InputError, match="no such file"):
        transcribe(tmp_path / "nope.parquet", tmp_path / "o.parquet")
    with pytest.raises(ConfigError, match="dataset=an4-dev: not in the input"):
        transcribe(utterances, tmp_path / "o.parquet", "dataset=an4-dev")
    no_audio = tmp_path / "no_audio.csv"
    no_audio.write_text("dataset,utt_id,reference\nd,u1,hello\n")
    with pytest.raises(InputError, match="'audio'"):
        transcribe(no_audio, tmp_path / "o.parquet")
    with pytest.raises(InputError, match="no audio files"):
        transcribe(tmp_path, tmp_path / "o.parquet")
    assert not (tmp_path / "o.parquet").exists()
    unrelated = tmp_path / "unrelated.csv"
    unrelated.write_text("a,b\n1,x\n")
    with pytest.raises(InputError, match="out exists and is not a transcripts table"):
        transcribe(utterances, unrelated)
    assert unrelated.read_text() == "a,b\n1,x\n"  # never overwritten


# --------------------------------------------------------------------------- the CLI


def werest(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("werest")
    command = [str(script)] if script.is_file() else [sys.executable, "-m", "werest.cli"]
    return subprocess.run(
        [*command, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_cli_transcribes_and_reports_errors_in_one_line(utterances, tmp_path):
    out = tmp_path / "t.csv"
    result = werest(
        "transcribe",
        f"input={utterances}",
        f"out={out}",
        "asr=pocketsphinx_an4",
        "limit=2",
        *an4_models(),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert len(read_table(out)) == 2 and "RTFx" in result.stdout
    for args, fragment in [
        ((f"input={tmp_path / 'nope.parquet'}", f"out={tmp_path / 'o.parquet'}"), "no such file"),
        ((f"input={utterances}", f"out={tmp_path / 'o.parquet'}", "asr.lm=/no/lm"), "asr.lm"),
        ((f"input={utterances}",), "missing required setting(s) out"),
    ]:
        result = werest("transcribe", *args, cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("werest transcribe: error:"), lines
        assert fragment in lines[0]
    assert not (tmp_path / "o.parquet").exists()


# --------------------------------------------------------------------------- transformers


def test_transformers_backend_is_optional():
    module = importlib.import_module("werest.ingest.asr.transformers_asr")  # imports without it
    if importlib.util.find_spec("transformers") is not None:
        pytest.skip("transformers is installed: the missing-extra message is not reachable")
    with pytest.raises(ConfigError, match=r"\[asr\] extra"):
        module.TransformersTranscriber(model="x")


def build_tiny_whisper(folder: Path) -> Path:
    """A randomly initialised Whisper (d_model 16, one layer each side) with a byte-level
    tokenizer of 256 symbols + Whisper's special tokens, saved as a local checkpoint. Decoding
    is restricted to the letters a-z so the random output is readable text."""
    import torch
    from transformers import (
        WhisperConfig,
        WhisperFeatureExtractor,
        WhisperForConditionalGeneration,
        WhisperProcessor,
        WhisperTokenizer,
    )
    from transformers.models.gpt2.tokenization_gpt2 import bytes_to_unicode

    folder.mkdir(parents=True, exist_ok=True)
    symbols = list(bytes_to_unicode().values())
    (folder / "vocab.json").write_text(json.dumps({s: i for i, s in enumerate(symbols)}))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    eot = "<|endoftext|>"
    specials = ["<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|notimestamps|>"]
    tokenizer = WhisperTokenizer(
        str(folder / "vocab.json"),
        str(folder / "merges.txt"),
        unk_token=eot,
        bos_token=eot,
        eos_token=eot,
        pad_token=eot,
        additional_special_tokens=specials,
    )
    letters = {tokenizer.convert_tokens_to_ids(c) for c in "abcdefghijklmnopqrstuvwxyz"}
    end = tokenizer.convert_tokens_to_ids(eot)
    config = WhisperConfig(
        vocab_size=len(tokenizer),
        num_mel_bins=80,
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_source_positions=1500,
        max_target_positions=448,
        pad_token_id=end,
        bos_token_id=end,
        eos_token_id=end,
        decoder_start_token_id=tokenizer.convert_tokens_to_ids(specials[0]),
        suppress_tokens=None,
        begin_suppress_tokens=None,
    )
    torch.manual_seed(0)
    model = WhisperForConditionalGeneration(config)
    model.generation_config.suppress_tokens = [i for i in range(len(tokenizer)) if i not in letters]
    model.generation_config.begin_suppress_tokens = [end]
    model.save_pretrained(folder)
    WhisperProcessor(WhisperFeatureExtractor(feature_size=80), tokenizer).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_whisper(tmp_path_factory) -> Path:
    pytest.importorskip("transformers", reason="needs the [asr] extra (transformers)")
    pytest.importorskip("torch", reason="needs torch (the [asr] or [sonar] extra)")
    return build_tiny_whisper(tmp_path_factory.mktemp("models") / "tiny-whisper")


def test_tiny_whisper_pipeline_on_an4_clips_in_batches(tiny_whisper):
    from werest.ingest.asr.transformers_asr import TransformersTranscriber

    speaker = shared_path("an4", "wav", "an4test_clstk", "fcaw")
    clips = [sf.read(p, dtype="float32")[0] for p in sorted(speaker.glob("*.sph"))[:3]]
    transcriber = TransformersTranscriber(
        model=str(tiny_whisper), device="cpu", batch_size=2, generate_kwargs={"max_new_tokens": 6}
    )
    assert isinstance(transcriber, Transcriber) and transcriber.name == "tiny-whisper"
    texts = transcriber.transcribe(clips)
    assert len(texts) == 3
    assert all(isinstance(t, str) and t and t.isalpha() and t.islower() for t in texts), texts


def test_transcribe_with_the_transformers_backend(tiny_whisper, utterances, tmp_path):
    out = tmp_path / "whisper.parquet"
    table = transcribe(
        utterances,
        out,
        "limit=3",
        f"asr.model={_quote(str(tiny_whisper))}",
        "asr.device=cpu",
        "asr.batch_size=2",
        "+asr.generate_kwargs.max_new_tokens=6",
        asr="transformers",
    )
    assert list(table["system"].unique()) == ["tiny-whisper"] and len(table) == 3
    assert table["hypothesis"].str.len().gt(0).all()
    seconds = table["processing_seconds"].to_numpy()
    assert seconds[0] == seconds[1] > 0  # one batch of two: its time shared equally
    record = json.loads(out.with_name("whisper.parquet.rtfx.json").read_text())[0]
    assert record["system"] == "tiny-whisper" and record["rtfx"] > 0


def test_missing_checkpoint_says_how_to_get_it():
    pytest.importorskip("transformers", reason="needs the [asr] extra (transformers)")
    cfg = OmegaConf.create(
        {
            "_target_": "werest.ingest.asr.transformers_asr.TransformersTranscriber",
            "model": "werest-tests/no-such-model",
            "device": "cpu",
            "local_files_only": True,
        }
    )
    with pytest.raises(ConfigError, match="huggingface-cli download werest-tests/no-such-model"):
        build_transcriber(cfg)
