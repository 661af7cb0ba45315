"""Real systems on the shared audio, and whether the Whisper likelihood can tell them apart.

    make audio-systems     # AN4 test (+ a train sample) and thennal10 en/ar/ml
    .venv/bin/python experiments/audio_systems.py      # AN4 test + thennal10 en/ar/ml

Transcribes (``werest transcribe``, resumable: a rerun only does what is missing)
  * AN4 (``--an4-splits``, default test): pocketsphinx generic (``pocketsphinx-en-us``),
    pocketsphinx with AN4's LM and dictionary (``pocketsphinx-an4``), Whisper tiny.en
    (``asr=faster_whisper``) and Whisper base (``asr=whisper_base``);
  * thennal10-en: its four shipped systems plus tiny.en, pocketsphinx generic and base;
  * thennal10-ar and -ml: their four shipped systems plus base (in the table's language).
Then scores every (utterance, system) with ``embedder=whisper_likelihood`` and
``embedder.model=`` ``--scorer`` (default ``base``, 99 languages; each system's proxy
is the system ranked next to it on the references, as ``werest features`` picks it), and
reports per system the true corpus WER (Whisper English normaliser), RTFx, the mean likelihood
features, and for each pair of systems whether the audio ranks them like the truth (on average,
scored as each other's proxy; and per utterance where their WERs differ: the pick rate).

Empty hypotheses (a system that heard nothing) get no likelihood; in the system means they
count as ``wl_expected_errors = 1`` (every word missed) and are left out of log-prob means.

Writes the tables to ``outputs/audio_systems/`` and the report to
``experiments/results/audio_systems.md``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from werest.ingest.importers import import_table
from werest.ingest.table import read_table, write_table
from werest.text import corpus_rate
from werest.text.scoring import score_utterances
from werest_cli import run, value

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
OUT = ROOT / "outputs" / "audio_systems"
RESULTS = ROOT / "experiments" / "results"
FEATURE_KEY = ("dataset", "utt_id", "system")


def transcribe(source: Path, out: Path, *overrides: str) -> None:
    """``werest transcribe``, written every 10 clips (an interrupted run keeps them)."""
    run("transcribe", f"input={value(source)}", f"out={value(out)}", "chunk_size=10", *overrides)


def an4_tables(splits: list[str], train_utterances: int | None = None) -> Path:
    """AN4 utterances of ``splits`` transcribed by the three systems into one table; at most
    ``train_utterances`` of the train split (a seeded sample across its speakers)."""
    out = OUT / "an4.parquet"
    utterances = OUT / "an4_utterances.parquet"
    table = import_table("sphinx", [SHARED / "an4"])
    table = table[table["dataset"].isin([f"an4-{s}" for s in splits])]
    train = table["dataset"] == "an4-train"
    if train_utterances and train.sum() > train_utterances:
        sample = table[train].sample(train_utterances, random_state=0)
        table = pd.concat([table[~train], sample]).sort_index()
    write_table(table, utterances)
    if out.exists():  # a smaller sample than last time: drop rows outside it
        done = read_table(out)
        keep = done.merge(table[["dataset", "utt_id"]], on=["dataset", "utt_id"])
        write_table(keep, out)
    etc = SHARED / "an4" / "etc"
    tuned = [f"asr.lm={value(etc / 'an4.ug.lm')}", f"asr.dict={value(etc / 'an4.dic')}"]
    transcribe(utterances, out, "asr=pocketsphinx")
    transcribe(utterances, out, "asr=pocketsphinx_an4", *tuned)
    transcribe(utterances, out, "asr=faster_whisper")
    transcribe(utterances, out, "asr=whisper_base")
    return out


def thennal10_table(language: str) -> Path:
    """thennal10-<language>'s shipped systems plus Whisper base on its audio (English: also
    tiny.en and pocketsphinx)."""
    out = OUT / f"thennal10_{language}.parquet"
    shipped = OUT / f"thennal10_{language}_shipped.parquet"
    table = import_table("thennal10", [SHARED / "thennal10"])
    write_table(table[table["dataset"] == f"thennal10-{language}"], shipped)
    transcribe(shipped, out, "asr=whisper_base")
    if language == "en":
        transcribe(out, out, "asr=faster_whisper")
        transcribe(out, out, "asr=pocketsphinx")
    return out


#: the likelihood scorer's model (``--scorer``)
SCORER = {"model": "base"}


def embed_likelihood(input_path: Path, transcripts: Path, out: Path) -> None:
    """``werest embed embedder=whisper_likelihood`` with the shared cache (a pair scored once)."""
    run(
        "embed",
        "embedder=whisper_likelihood",
        f"embedder.model={SCORER['model']}",
        f"input={value(input_path)}",
        f"transcripts={value(transcripts)}",
        f"out={value(out)}",
        "default_language=en",
        f"cache_dir={value(OUT / 'cache')}",
    )


def likelihood(transcripts: Path, name: str) -> tuple[pd.DataFrame, float]:
    """Feature table with the wl_* columns (proxy: ranked on the references); scoring seconds.

    Also writes ``<name>_scored.parquet``: the transcripts with each row's wl_* statistics
    (no proxy), the input of ``werest train data=audio_shared features=audio``."""
    features = OUT / f"{name}_features.parquet"
    run("features", f"input={value(transcripts)}", f"out={value(features)}")
    started = time.perf_counter()
    embed_likelihood(features, transcripts, features)
    seconds = time.perf_counter() - started
    embed_likelihood(transcripts, transcripts, OUT / f"{name}_scored.parquet")
    return read_table(features, required=FEATURE_KEY), seconds


def pair_likelihood(transcripts: pd.DataFrame, a: str, b: str, name: str) -> pd.DataFrame:
    """a's rows with b as proxy and b's with a as proxy (from the cache: no new scoring)."""
    rows = transcripts[transcripts["system"].isin([a, b])][list(FEATURE_KEY)].copy()
    rows["proxy"] = rows["system"].map({a: b, b: a})
    path = OUT / f"{name}_pair.parquet"
    write_table(rows, path)
    embed_likelihood(path, OUT / f"{name}.parquet", path)
    return read_table(path, required=FEATURE_KEY)


def system_summary(transcripts: pd.DataFrame, scored: pd.DataFrame, name: str) -> pd.DataFrame:
    """Per system: true WER, RTFx (when transcribed here) and the mean likelihood features."""
    truth = score_utterances(transcripts)
    wer = truth.groupby("system").apply(
        lambda r: corpus_rate(r["word_errors"], r["ref_words"]), include_groups=False
    )
    rtfx_path = OUT / f"{name}.parquet.rtfx.json"
    rtfx = {r["system"]: r["rtfx"] for r in json.loads(rtfx_path.read_text())}
    all_rows = scored.copy()
    empty = all_rows["wl_status"] == "empty_hypothesis"
    all_rows.loc[empty, "wl_expected_errors"] = 1.0
    means = all_rows.groupby("system")[["wl_mean_logprob", "wl_expected_errors", "wl_low_share"]]
    summary = means.mean().join(wer.rename("wer"))
    summary["rtfx"] = [rtfx.get(s, np.nan) for s in summary.index]
    summary["empty"] = all_rows[empty].groupby("system").size().reindex(summary.index).fillna(0)
    merged = all_rows.merge(truth[[*FEATURE_KEY, "wer"]], on=list(FEATURE_KEY))
    summary["spearman_err_wer"] = merged.groupby("system").apply(
        lambda r: r["wl_expected_errors"].corr(r["wer"], method="spearman"), include_groups=False
    )
    # agreement with the scorer's own transcript (0 for the scorer's own system by construction)
    summary["decode_pwer"] = all_rows.groupby("system")["wl_decode_pwer"].mean()
    summary["spearman_decode_wer"] = merged.groupby("system").apply(
        lambda r: r["wl_decode_pwer"].corr(r["wer"], method="spearman"), include_groups=False
    )
    return summary.sort_values("wer")


def pick_rate(scored: pd.DataFrame, truth: pd.DataFrame, a: str, b: str) -> tuple[float, int]:
    """Over utterances where a's and b's true WER differ, the share where the higher mean
    token log-prob belongs to the lower WER; and how many such utterances there are."""
    rows = scored.merge(truth[[*FEATURE_KEY, "wer"]], on=list(FEATURE_KEY))
    wide = rows.pivot_table(index="utt_id", columns="system", values=["wl_mean_logprob", "wer"])
    logprob = wide["wl_mean_logprob"][a] - wide["wl_mean_logprob"][b]
    wer = wide["wer"][a] - wide["wer"][b]
    differ = (wer != 0) & logprob.notna() & wer.notna()
    return float(((logprob[differ] > 0) == (wer[differ] < 0)).mean()), int(differ.sum())


def pairwise(
    transcripts: pd.DataFrame, summary: pd.DataFrame, scored: pd.DataFrame, name: str
) -> list[dict]:
    """For each system pair, scored as each other's proxy: does the audio pick the better one?"""
    results = []
    truth = score_utterances(transcripts)
    for a, b in itertools.combinations(summary.index, 2):
        pair = pair_likelihood(transcripts, a, b, name)
        both = pair[pair["wl_mean_logprob_vs_proxy"].notna()]
        a_rows = both[both["system"] == a]
        diff = float(a_rows["wl_mean_logprob_vs_proxy"].mean())
        diff_err = float(a_rows["wl_expected_errors_vs_proxy"].mean())
        truly_a_better = summary.loc[a, "wer"] < summary.loc[b, "wer"]
        rate, differing = pick_rate(scored, truth, a, b)
        results.append(
            {
                "a": a,
                "b": b,
                "wer_a": summary.loc[a, "wer"],
                "wer_b": summary.loc[b, "wer"],
                "utterances": len(a_rows),
                "mean_logprob_a_minus_b": diff,
                "expected_errors_a_minus_b": diff_err,
                "logprob_ranks_correctly": bool((diff > 0) == truly_a_better),
                "expected_errors_rank_correctly": bool((diff_err < 0) == truly_a_better),
                "utterances_wer_differs": differing,
                "utterance_pick_rate": rate,
            }
        )
    return results


def report(sections: list[tuple[str, pd.DataFrame, list[dict], float]]) -> str:
    lines = ["# Real systems on the shared audio and the Whisper likelihood", ""]
    lines += ["Produced by `make audio-systems` (experiments/audio_systems.py).", ""]
    lines += [f"Likelihood scorer: Whisper `{SCORER['model']}`.", ""]
    for name, summary, pairs, seconds in sections:
        lines += [f"## {name}", ""]
        table = summary.copy()
        table["wer"] = (100 * table["wer"]).round(1)
        lines += [table.round(3).to_markdown(), ""]
        lines += [f"Likelihood scoring this run (cached pairs not rescored): {seconds:.1f} s", ""]
        lines += [pd.DataFrame(pairs).round(3).to_markdown(index=False), ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--an4-splits", nargs="+", default=["test"], choices=["test", "train"])
    parser.add_argument(
        "--an4-train-utterances", type=int, default=None, help="sample of the train split"
    )
    parser.add_argument("--scorer", default="base", help="the likelihood scorer's model")
    parser.add_argument(
        "--languages", nargs="+", default=["en", "ar", "ml"], help="thennal10 languages"
    )
    args = parser.parse_args()
    if not SHARED.exists():
        raise SystemExit(f"needs the shared data at {SHARED} (../shared beside the repo)")
    SCORER["model"] = args.scorer
    OUT.mkdir(parents=True, exist_ok=True)
    sections = []
    tables = [("an4", an4_tables(args.an4_splits, args.an4_train_utterances))]
    tables += [(f"thennal10_{lang}", thennal10_table(lang)) for lang in args.languages]
    for name, path in tables:
        transcripts = read_table(path)
        scored, seconds = likelihood(path, name)
        summary = system_summary(transcripts, scored, name)
        pairs = pairwise(transcripts, summary, scored, name)
        sections.append((name, summary, pairs, seconds))
        print(summary.round(3).to_string())
        print(pd.DataFrame(pairs).round(3).to_string())
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "audio_systems.md").write_text(report(sections), encoding="utf-8")
    print(f"wrote {RESULTS / 'audio_systems.md'}")


if __name__ == "__main__":
    main()
