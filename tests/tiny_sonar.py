"""A tiny, randomly initialised SONAR built with sonar's own configs and factories.

Shared by the SONAR tests and ``experiments/bench_embed.py``. Nothing here is a stand-in for
SONAR's code: the speech encoder is ``SonarSpeechEncoderConfig`` (the ``english`` architecture,
shrunk) built by the registered model family, the text encoder is ``SonarTextEncoderConfig``
(``basic``, shrunk), and the tokenizer is fairseq2's NLLB tokenizer over a SentencePiece model
trained here on a few sentences. Only the widths, depths and vocabulary are small, and the
weights are random (seeded).

``write_tiny_assets(folder)`` saves both models and the tokenizer with fairseq2 asset cards,
so the whole weight-loading path (cards -> checkpoint -> model) runs as it does for real weights.

Run ``python -m tests.tiny_sonar DIR`` to write such a folder for ``werest embed
embedder.asset_dir=DIR embedder.speech_encoders.en=tiny_sonar_speech_eng ...``.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"

LANGS = {"en": "eng_Latn", "ar": "arb_Arab", "ml": "mal_Mlym"}
TINY = {"dim": 32, "speech_layers": 2, "pool_layers": 1, "heads": 2, "ffn": 64, "text_layers": 2}

# A few sentences per script: the toy tokenizer only needs to cover the characters.
CORPUS = [
    "the quick brown fox jumps over the lazy dog",
    "enter seven two one nine",
    "rubout go stop repeat help erase yes no",
    "my name is carnegie mellon university in pittsburgh",
    "what is the word error rate of this recogniser",
    "speech and text share one embedding space",
    "a b c d e f g h i j k l m n o p q r s t u v w x y z",
    "zero one two three four five six seven eight nine ten",
    "THE QUICK BROWN FOX, 1234567890. ? ! ' - \" ( ) : ;",
    "مرحبا بكم في هذا الاختبار الصغير للتعرف على الكلام",
    "اللغة العربية جميلة جدا والكتابة من اليمين إلى اليسار",
    "മലയാളം ഒരു ദ്രാവിഡ ഭാഷയാണ് കേരളത്തിൽ സംസാരിക്കുന്നു",
    "ഇത് ഒരു ചെറിയ പരീക്ഷണമാണ്",
]


def _speech_hub() -> Any:
    from sonar.models.sonar_speech import get_sonar_speech_encoder_hub

    return get_sonar_speech_encoder_hub()


def _text_hub() -> Any:
    from sonar.models.sonar_text import get_sonar_text_encoder_hub

    return get_sonar_text_encoder_hub()


def speech_overrides(size: dict[str, int] | None = None) -> dict[str, Any]:
    """The fields of the ``english`` architecture that shrink it (nested like the config)."""
    size = {**TINY, **(size or {})}
    return {
        "model_dim": size["dim"],
        "num_decoder_layers": size["pool_layers"],
        "num_decoder_attn_heads": size["heads"],
        "ffn_inner_dim": size["ffn"],
        "w2v2_encoder_config": {
            "model_dim": size["dim"],
            "num_encoder_layers": size["speech_layers"],
            "num_encoder_attn_heads": size["heads"],
            "ffn_inner_dim": size["ffn"],
            "depthwise_conv_kernel_size": 3,
        },
    }


def text_overrides(vocab_size: int, size: dict[str, int] | None = None) -> dict[str, Any]:
    """The fields of the ``basic`` text architecture that shrink it to ``vocab_size``."""
    size = {**TINY, **(size or {})}
    return {
        "model_dim": size["dim"],
        "num_encoder_layers": size["text_layers"],
        "num_decoder_layers": size["text_layers"],
        "num_encoder_attn_heads": size["heads"],
        "num_decoder_attn_heads": size["heads"],
        "ffn_inner_dim": size["ffn"],
        "vocab_info": {"size": vocab_size, "unk_idx": 1, "bos_idx": 2, "eos_idx": 3, "pad_idx": 0},
    }


def _apply(config: Any, overrides: dict[str, Any]) -> Any:
    """``dataclasses.replace`` recursively (nested dicts update nested dataclasses)."""
    changes = {}
    for name, value in overrides.items():
        current = getattr(config, name)
        if isinstance(value, dict) and dataclasses.is_dataclass(current):
            changes[name] = _apply(current, value)
        else:
            changes[name] = value
    return dataclasses.replace(config, **changes)


def speech_config(size: dict[str, int] | None = None) -> Any:
    """SONAR's ``english`` speech encoder config, shrunk (``size=None``: tiny; {}: as is)."""
    base = _speech_hub().get_arch_config("english")
    return base if size == {} else _apply(base, speech_overrides(size))


def text_config(vocab_size: int, size: dict[str, int] | None = None) -> Any:
    """SONAR's ``basic`` text encoder config with a ``vocab_size`` vocabulary, shrunk."""
    from fairseq2.data.tokenizers import VocabularyInfo

    base = _text_hub().get_arch_config("basic")
    overrides = text_overrides(vocab_size, size)
    if size == {}:
        overrides = {"vocab_info": overrides["vocab_info"]}
    config = _apply(base, {k: v for k, v in overrides.items() if k != "vocab_info"})
    return dataclasses.replace(config, vocab_info=VocabularyInfo(**overrides["vocab_info"]))


def train_tokenizer(folder: Path, vocab_size: int = 120) -> Path:
    """Train a toy SentencePiece model (NLLB-style ids) on :data:`CORPUS`; return its path."""
    import sentencepiece as spm

    folder.mkdir(parents=True, exist_ok=True)
    prefix = folder / "toy_spm"
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(CORPUS * 4),
        model_prefix=str(prefix),
        vocab_size=vocab_size,
        model_type="unigram",
        character_coverage=1.0,
        hard_vocab_limit=False,
        unk_id=0,
        bos_id=1,
        eos_id=2,
        pad_id=-1,
        num_threads=1,
        minloglevel=2,
    )
    return prefix.with_suffix(".model")


def load_tokenizer(model_path: Path) -> Any:
    """fairseq2's NLLB tokenizer over ``model_path`` for :data:`LANGS`."""
    from fairseq2.models.nllb.tokenizer import NllbTokenizerConfig, load_nllb_tokenizer

    langs = sorted(LANGS.values())
    return load_nllb_tokenizer(model_path, NllbTokenizerConfig(langs=langs, default_lang=langs[0]))


def build_models(folder: Path, seed: int = 0, size: dict[str, int] | None = None) -> dict:
    """Random SONAR speech + text encoders (seeded) and the toy tokenizer, in memory."""
    import torch

    tokenizer = load_tokenizer(train_tokenizer(folder))
    torch.manual_seed(seed)
    speech = _speech_hub().create_new_model(speech_config(size), device=torch.device("cpu"))
    text = _text_hub().create_new_model(
        text_config(tokenizer.vocab_info.size, size), device=torch.device("cpu")
    )
    return {"speech": speech.eval(), "text": text.eval(), "tokenizer": tokenizer}


def write_tiny_assets(folder: Path, seed: int = 0) -> dict[str, str]:
    """Save the tiny models + tokenizer with asset cards in ``folder``; return card names.

    Cards: ``tiny_sonar_speech_eng`` (and ``_arb``, ``_mal``: one random speech encoder per
    language, as SONAR has), ``tiny_sonar_text`` (text encoder and tokenizer).
    """
    import torch
    import yaml

    folder.mkdir(parents=True, exist_ok=True)
    models = build_models(folder, seed)
    vocab_size = models["tokenizer"].vocab_info.size
    cards: list[dict[str, Any]] = []
    names = {}
    for iso, code in LANGS.items():
        three = code.split("_")[0]
        name = f"tiny_sonar_speech_{three}"
        if iso != "en":
            torch.manual_seed(seed + len(names) + 1)
            model = _speech_hub().create_new_model(speech_config(), device=torch.device("cpu"))
        else:
            model = models["speech"]
        torch.save({"model": model.state_dict()}, folder / f"{name}.pt")
        cards.append(
            {
                "name": name,
                "model_family": "sonar_speech",
                "model_arch": "english",
                "checkpoint": f"{name}.pt",
                "model_config_override": speech_overrides(),
            }
        )
        names[iso] = name
    torch.save({"model": models["text"].state_dict()}, folder / "tiny_sonar_text.pt")
    cards.append(
        {
            "name": "tiny_sonar_text",
            "model_family": "transformer_encoder",
            "model_arch": "basic",
            "checkpoint": "tiny_sonar_text.pt",
            "model_config_override": text_overrides(vocab_size),
            "tokenizer": "toy_spm.model",
            "tokenizer_family": "nllb",
            "tokenizer_config_override": {
                "langs": sorted(LANGS.values()),
                "default_lang": "eng_Latn",
            },
        }
    )
    text = yaml.safe_dump_all(cards, sort_keys=False, allow_unicode=True)
    (folder / "tiny_sonar.yaml").write_text(text, encoding="utf-8")
    return {**{f"speech_{iso}": name for iso, name in names.items()}, "text": "tiny_sonar_text"}


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "tiny_sonar_assets")
    print(write_tiny_assets(target))
