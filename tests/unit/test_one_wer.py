"""One definition of WER: a labelled utterance counts the same errors in ``werest estimate
labels=…`` as in ``werest score``, in every script.

Each table labels every utterance (a census), so the labels-only estimate (``classical_wer``,
Σ errors / Σ reference words over the labelled draws) must be the true corpus WER that
``werest score`` reports. The expected rates are counted by hand under the row language's
normaliser (docs/normalisation.md: ``auto`` gives ``whisper_basic`` with the language, which
keeps combining marks, adds Arabic's letter rules and scores Chinese on characters). Labels
scored without their rows' language fall back to the English normaliser, which strips tone
marks, splits Devanagari words at their vowel signs and scores Chinese sentences as one word.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pandas as pd
import pytest

import werest
from tests.helpers import run_cli
from werest.estimation.labels import LabelSettings
from werest.text import AUTO
from werest.text.scoring import utterance_labels


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


#: Per script: language, references, each system's hypotheses, and its corpus WER counted by
#: hand (errors / reference words; for Chinese, characters).
CASES = {
    # Yoruba: tone marks and under-dots are letters, kept by whisper_basic. 5 + 4 + 4 + 5 = 18.
    "yoruba": (
        "yo",
        [
            nfc("Ọjọ́ àìkú ni mo lọ."),
            nfc("Ẹ kú àárọ̀ o"),
            nfc("Mo fẹ́ jẹun báyìí"),
            nfc("Ilé wa tóbi gan an"),
        ],
        {
            # no tone mark or dot: ojo aiku lo / e ku aaro / fe jeun bayii / ile tobi
            "toneless": (
                ["Ojo aiku ni mo lo", "E ku aaro o", "Mo fe jeun bayii", "Ile wa tobi gan an"],
                11 / 18,
            ),
            # the same letters decomposed (NFD) and upper case: only the deletions count
            "decomposed": (
                [
                    nfd("ỌJỌ́ ÀÌKÚ NI MO LỌ"),
                    nfd("Ẹ kú àárọ̀"),
                    nfd("Mo fẹ́ jẹun báyìí"),
                    nfd("Ilé wa tóbi"),
                ],
                3 / 18,
            ),
            # mo -> a; kú -> kù (a tone); báyìí inserted
            "words": (
                [
                    nfc("Ọjọ́ àìkú ni a lọ"),
                    nfc("Ẹ kù àárọ̀ o"),
                    nfc("Mo fẹ́ jẹun báyìí báyìí"),
                    "Ilé wa tóbi gan an",
                ],
                3 / 18,
            ),
        },
    ),
    # Arabic: diacritics and tatweel dropped; أ/إ/آ -> ا, ى -> ي, ة -> ه. 3 + 4 + 3 + 2 = 12.
    "arabic": (
        "ar",
        ["ذهبت إلى المدرسة", "هذه مدينة جميلة جدا", "أنا أحب القراءة", "السلام عليكم"],
        {
            # letter variants only, and one inserted word
            "variants": (
                [
                    "ذهبت الى المدرسه",
                    "هذة مدينه جميله جدا",
                    "انا احب القراءه",
                    "السلام عليكم ورحمة",
                ],
                1 / 12,
            ),
            # vowelled and stretched: equal; الكتابة substituted, عليكم deleted
            "vowelled": (
                ["ذَهَبْتُ إِلَى المَدْرَسَةِ", "هذه مدينة جميـــلة جدا", "أنا أحب الكتابة", "السلام"],
                2 / 12,
            ),
            # البيت substituted; كبيرة substituted and جدا deleted
            "words": (
                ["ذهبت الى البيت", "هذه مدينه كبيرة", "انا احب القراءة", "السلام عليكم"],
                3 / 12,
            ),
        },
    ),
    # Amharic (Ethiopic): the gemination mark U+135F is a combining mark, kept by
    # whisper_basic; ። and ፣ are punctuation. 2 + 3 + 4 + 5 = 14.
    "amharic": (
        "am",
        ["ሰላም ነው", "እኔ ቡና እፈ\u135fልጋለሁ።", "ዛሬ አየሩ ጥሩ ነው", "አዲስ አበባ ትልቅ ከተማ ናት"],
        {
            # the mark left out; ናት -> ነች
            "unmarked": (
                ["ሰላም ነው", "እኔ ቡና እፈልጋለሁ", "ዛሬ አየሩ ጥሩ ነው", "አዲስ አበባ ትልቅ ከተማ ነች"],
                2 / 14,
            ),
            # ነው -> ነህ; ትልቅ deleted
            "marked": (
                ["ሰላም ነህ", "እኔ ቡና እፈ\u135fልጋለሁ", "ዛሬ አየሩ ጥሩ ነው።", "አዲስ አበባ ከተማ ናት"],
                2 / 14,
            ),
            # two words run together twice: a substitution and a deletion each
            "joined": (
                ["ሰላምነው", "እኔ ቡና እፈ\u135fልጋለሁ፣", "ዛሬ አየሩ ጥሩ ነው", "አዲስአበባ ትልቅ ከተማ ናት"],
                4 / 14,
            ),
        },
    ),
    # Hindi (Devanagari): vowel signs, nukta and candrabindu are kept. 6 + 5 + 3 = 14.
    "hindi": (
        "hi",
        ["मैं आज बाज़ार जा रहा हूँ।", "यह किताब बहुत अच्छी है", "कल बारिश होगी"],
        {
            # बाजार without its nukta
            "nukta": (["मैं आज बाजार जा रहा हूँ", "यह किताब बहुत अच्छी है", "कल बारिश होगी"], 1 / 14),
            # हूं for हूँ; अच्छा for अच्छी
            "anusvara": (
                ["मैं आज बाज़ार जा रहा हूं", "यह किताब बहुत अच्छा है", "कल बारिश होगी।"],
                2 / 14,
            ),
            # रही for रहा; बहुत deleted; नहीं inserted
            "words": (
                ["मैं आज बाज़ार जा रही हूँ", "यह किताब अच्छी है", "कल बारिश नहीं होगी"],
                3 / 14,
            ),
        },
    ),
    # Chinese: scored on characters, punctuation and spaces aside. 6 + 3 + 8 = 17.
    "chinese": (
        "zh",
        ["我今天去学校。", "你好吗？", "北京是中国的首都"],
        {
            # 今 -> 明
            "substitution": (["我明天去学校", "你好吗", "北京是中国的首都"], 1 / 17),
            # words spaced apart; 的 deleted
            "spaced": (["我 今天 去 学校", "你 好 吗", "北京 是 中国 首都"], 1 / 17),
            # 了 inserted; 吗 deleted; 城市 inserted
            "characters": (["我今天去学校了", "你好", "北京是中国的首都城市"], 4 / 17),
        },
    ),
}


def case_table(script: str) -> tuple[pd.DataFrame, dict[str, float]]:
    """The script's transcripts table (every row with its reference and language) and each
    system's hand-counted corpus WER."""
    language, references, systems = CASES[script]
    rows = [
        {
            "dataset": f"{script}-test",
            "utt_id": f"u{i}",
            "system": system,
            "hypothesis": hypothesis,
            "reference": references[i],
            "language": language,
        }
        for system, (hypotheses, _) in systems.items()
        for i, hypothesis in enumerate(hypotheses)
    ]
    return pd.DataFrame(rows), {system: rate for system, (_, rate) in systems.items()}


def census_sheet(table: pd.DataFrame) -> pd.DataFrame:
    """A filled labelling sheet naming every utterance of ``table``."""
    return table.drop_duplicates(["dataset", "utt_id"])[["dataset", "utt_id", "reference"]]


@pytest.mark.parametrize("script", list(CASES))
def test_labels_only_wer_of_a_census_is_werest_score(script):
    """Every utterance labelled: ``classical_wer`` of ``werest.estimate(…, labels=sheet)`` is
    ``werest.score``'s WER, and both are the hand count; so are the labels training, the LODO
    harness and ``experiment=few_labels`` read (``utterance_labels``)."""
    table, expected = case_table(script)
    scores = werest.score(table, n_resamples=10).set_index("system")["wer"]
    assert scores.to_dict() == pytest.approx(expected, rel=1e-12, abs=0)
    held_out = utterance_labels(table, AUTO).groupby("system")[["word_errors", "ref_words"]].sum()
    lodo = held_out["word_errors"] / held_out["ref_words"]
    assert lodo.to_dict() == pytest.approx(expected, rel=1e-12, abs=0)
    result = werest.estimate(
        table.drop(columns="reference"),
        labels=census_sheet(table),
        few_labels=LabelSettings(min_labels=1),
        n_resamples=10,
    )
    summary = result.summary.set_index("system")
    assert set(summary["method"]) == {"ppi"}
    assert (summary["n_labelled"] == table["utt_id"].nunique()).all()
    assert summary["classical_wer"].to_dict() == pytest.approx(expected, rel=1e-12, abs=0)


def test_the_commands_agree_on_a_table_of_five_scripts(tmp_path, monkeypatch, capsys):
    """One table, one dataset per script: ``werest estimate labels=sheet.csv`` gives every
    dataset and system the labels-only WER that ``werest score`` writes, the truth it shows
    beside it (``wer``) is the same number, and so is the estimate of a census."""
    monkeypatch.chdir(tmp_path)
    tables = [case_table(script) for script in CASES]
    table = pd.concat([t for t, _ in tables], ignore_index=True)
    table.to_csv("input.csv", index=False)
    census_sheet(table).to_csv("sheet.csv", index=False)
    status, _, err = run_cli(capsys, "score", "input=input.csv", "output_dir=scored")
    assert status == 0, err
    scores = pd.read_csv(Path("scored") / "scores.csv").set_index(["dataset", "system"])["wer"]
    expected = {
        (f"{script}-test", system): rate
        for script, (_, rates) in zip(CASES, tables, strict=True)
        for system, rate in rates.items()
    }
    assert scores.to_dict() == pytest.approx(expected, rel=1e-12, abs=0)
    status, _, err = run_cli(
        capsys,
        "estimate",
        "input=input.csv",
        "labels=sheet.csv",
        "few_labels.min_labels=1",
        "output_dir=est",
    )
    assert status == 0, err
    records = json.loads(Path("est", "summary.json").read_text())
    assert len(records) == len(expected)
    for record in records:
        cell = (record["dataset"], record["system"])
        assert record["classical_wer"] == pytest.approx(expected[cell], rel=1e-12, abs=0), cell
        assert record["wer"] == pytest.approx(expected[cell], rel=1e-12, abs=0), cell
        assert record["estimated_wer"] == pytest.approx(expected[cell], rel=1e-9), cell
