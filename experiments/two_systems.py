"""Estimating with only two systems: does training on two-system views help?

    .venv/bin/python experiments/two_systems.py

Leave one benchmark dataset out (the default four-case B: dighr 190515, 190423, 190301). In
each fold, rank the systems and train on the source system's rows (google) of the other two
datasets, once on the rows as they are and once with their two-system views added
(``two_system_views``); both with ``conf/model/hgb.yaml`` for speed. Then evaluate every system
of the held-out dataset as if it and its proxy were the only systems there (the input a user
with one reference system has). Reports per cell the corpus error |aWER − WER| and utterance
MAE of raw pWER and both models. No wild data is used. Writes
``experiments/results/two_systems.md``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from werest.estimation.corpus import estimated_sample
from werest.features.agreement import agreement_features
from werest.features.proxy import Ranking, choose_proxies, rank_on
from werest.ingest.importers import import_table
from werest.model.training import build_regressor, fit_model, training_frame
from werest.text import Normaliser
from werest.text.scoring import utterance_labels
from werest_cli import config

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
RESULTS = Path(__file__).resolve().parent / "results"
B = ["dighr-190515", "dighr-190423", "dighr-190301"]
SOURCE = "google"
NORMALISER = Normaliser("whisper_english")


def corpus(pred: np.ndarray, frame: pd.DataFrame) -> float:
    return estimated_sample(frame.assign(pred=pred), "pred").rate()


def main() -> None:
    settings = config("train", "model=hgb", "n_jobs=2")  # as werest train would read them
    columns = list(settings["features"]["columns"])
    table = import_table("dighr", [SHARED / "dighr" / "en"])
    table = table[table["dataset"].isin(B)].reset_index(drop=True)
    labels = utterance_labels(table, NORMALISER, 2)
    rows = []
    for held in B:
        train = table[table["dataset"].isin([d for d in B if d != held])]
        ranking = rank_on(train, NORMALISER, labels=labels)
        models = {}
        for views in (False, True):
            frame = training_frame(
                train,
                ranking,
                normaliser=NORMALISER,
                targets=[SOURCE],
                labels=labels,
                two_system_views=views,
            )
            models[views] = fit_model(frame, columns, build_regressor(settings["model"]))
        test = table[table["dataset"] == held]
        proxies = choose_proxies(test, ranking)
        for system, proxy in proxies.groupby("system")["proxy"].agg(lambda p: p.mode()[0]).items():
            pair = test[test["system"].isin([system, proxy])]
            chosen = choose_proxies(pair, Ranking.from_order([proxy]), targets=[system])
            features = agreement_features(pair, chosen, normaliser=NORMALISER)
            features = features.merge(labels, on=["dataset", "utt_id", "system"])
            features = features[(features["status"] == "ok") & features["wer"].notna()]
            truth = features["word_errors"].sum() / features["ref_words"].sum()
            raw = (
                features[["pwer_sub", "pwer_del", "pwer_ins"]].sum().sum()
                / features["proxy_words"].clip(lower=1).sum()
            )
            record = {
                "held-out": held,
                "system": system,
                "proxy": proxy,
                "n": len(features),
                "WER %": 100 * truth,
                "raw pWER err": 100 * abs(raw - truth),
            }
            for views, model in models.items():
                pred = model.predict(features).to_numpy()
                name = "with views" if views else "without views"
                record[f"{name} err"] = 100 * abs(corpus(pred, features) - truth)
                record[f"{name} MAE"] = float(np.mean(np.abs(pred - features["wer"])))
            rows.append(record)
    result = pd.DataFrame(rows)
    summary = result[["raw pWER err", "without views err", "with views err"]].agg(["median", "max"])
    report = "\n".join(
        [
            "# Two systems only: corpus error with and without two-system training views",
            "",
            "`python experiments/two_systems.py` (HistGBM stack, text features, S = google, "
            "leave one of dighr 190515/190423/190301 out; each held-out system estimated with only "
            "its proxy present). Errors in WER points.",
            "",
            "```",
            result.round(3).to_string(index=False),
            "",
            summary.round(2).to_string(),
            "```",
            "",
        ]
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "two_systems.md").write_text(report, encoding="utf-8")
    print(report)


if __name__ == "__main__":
    main()
