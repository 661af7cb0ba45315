"""``werest segmentation reference=PATH hypothesis=PATH``: word-boundary quality."""

from __future__ import annotations

from werest.cli.commands._common import print_blocks, save_config
from werest.cli.schema import SegmentationSettings
from werest.errors import InputError
from werest.io import atomic_path, check_output, staged_output
from werest.text.segmentation import evaluate, format_scores, read_words

#: What a run writes in ``output_dir`` (an earlier run's, replaced whole)
OUTPUTS = ("segmentation.csv", "segmentation_utterances.csv", "config.yaml")


def run(settings: SegmentationSettings) -> dict[str, float]:
    """Score, show, and write ``segmentation{,_utterances}.csv`` and the config."""
    import pandas as pd

    check_output(settings.output_dir, owned=OUTPUTS)  # one that cannot be replaced: refused now
    tier = settings.tier
    reference = read_words(settings.reference, tier, settings.reference_system, "reference_system")
    hypothesis = read_words(
        settings.hypothesis, tier, settings.hypothesis_system, "hypothesis_system"
    )
    corpus, per_utterance = evaluate(reference, hypothesis, float(settings.tolerance))
    if corpus["utterances"] == 0:
        raise InputError(
            "no utterance id is in both the reference and the hypothesis", path=settings.hypothesis
        )
    with staged_output(settings.output_dir, owned=OUTPUTS) as folder:  # in place as one
        with atomic_path(folder / "segmentation.csv") as tmp:
            pd.DataFrame([corpus]).to_csv(tmp, index=False)
        with atomic_path(folder / "segmentation_utterances.csv") as tmp:
            per_utterance.to_csv(tmp, index=False)
        save_config(settings, folder / "config.yaml")
    print_blocks(format_scores(corpus))
    return corpus
