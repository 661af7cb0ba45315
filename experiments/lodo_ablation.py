"""Ablation of werest's model design, leave one domain out (issues 10 and 23).

    python experiments/lodo_ablation.py [variant ...]

Each variant (a feature set and a model) is trained and evaluated in the same LODO folds as
``werest evaluate experiment=lodo`` (``conf/data/all_shared.yaml``), but features are built
once per fold from one alignment of every system pair (``outputs/lodo_cache``) and reused by
every variant, so a variant costs only its fits. Corpus estimates, raw pWER, Spearman, utterance
MAE and cross-conformal coverage are computed as in :mod:`werest.evaluation.lodo` (no bootstrap
part).
Writes ``experiments/results/lodo_ablation.{md,csv}``.
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from werest.estimation.corpus import estimated_sample
from werest.evaluation.lodo import (
    LodoSettings,
    cross_conformal,
    domain_summary,
    fold_training_rows,
    overall_summary,
)
from werest.features.agreement import add_dataset_context, pairwise_agreement, two_system_view
from werest.formatting import markdown_table, percent
from werest.ingest.table import KEY
from werest.model.training import (
    TrainingOptions,
    build_regressor,
    domain_of,
    fit_model,
    load_sources,
    prepare_training_rows,
    training_frame,
)
from werest.text import AUTO
from werest.text.scoring import utterance_labels
from werest_cli import config

log = logging.getLogger("lodo_ablation")
REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / "outputs" / "lodo_cache"
RESULTS = REPO / "experiments" / "results"

OLD_TEXT = [
    "pwer", "pcer", "pwer_sub_rate", "pwer_del_rate", "pwer_ins_rate", "pcer_sub_rate",
    "pcer_del_rate", "pcer_ins_rate", "pwer_mean", "pwer_min", "pwer_max", "pwer_median",
    "pcer_mean", "pcer_min", "proxy_pwer_others", "proxy_pcer_others", "len_ratio",
    "len_ratio_others", "proxy_len_ratio",
]  # fmt: skip
TRI = ["tri_wer", "tri_cer", "tri_wer_proxy", "utt_disagreement"]
CONTEXT = ["ctx_tri_wer", "ctx_pwer", "ctx_disagreement"]
HGB = {
    "_target_": "sklearn.ensemble.HistGradientBoostingRegressor",
    "max_iter": 200,
    "learning_rate": 0.05,
    "max_leaf_nodes": 31,
    "min_samples_leaf": 40,
    "l2_regularization": 1.0,
    "random_state": 0,
}


HALLUCINATION = ["rep_ngram_rate", "rep_ngram_excess", "script_mismatch"]


def anchored(shrinkage: float, **settings) -> dict:
    """conf/model/anchored.yaml (the shipped estimator) with another shrinkage."""
    model = config("train", "model=anchored")["model"]
    return {**model, "shrinkage": shrinkage, **settings}


def clipped_target(inner: dict, clip_max: float) -> dict:
    """``inner`` fitted on the utterance WER clipped to [0, clip_max] (as the stack clips it)."""
    return {
        "_target_": "sklearn.compose.TransformedTargetRegressor",
        "regressor": inner,
        "func": {"_target_": "numpy.clip", "_partial_": True, "a_min": 0.0, "a_max": clip_max},
        "inverse_func": {"_target_": "numpy.asarray", "_partial_": True},
        "check_inverse": False,
    }


def shipped_stack(clip_max: float | None) -> dict:
    """conf/model/hgb.yaml (the shipped model's estimator) with another target clip."""
    model = config("train", "model=hgb")["model"]
    return {**model, "clip_max": clip_max}


ANCHORED = OLD_TEXT + TRI + HALLUCINATION + ["proxy_words"]
#: name -> (features, model config, training rows: ``train`` = the fold's training rows with
#: proxies from the labelled ranking, as ``werest train`` builds them; ``label_free`` = the
#: other domains' rows with the proxies a user gets, the systems' label-free order)
VARIANTS: dict[str, tuple[list[str], dict, str]] = {
    "pwer only (hgb)": (["pwer"], HGB, "train"),
    "old text set (hgb)": (OLD_TEXT, HGB, "train"),
    "text + triangulation (hgb)": (OLD_TEXT + TRI, HGB, "train"),
    "text + tri + context (hgb)": (OLD_TEXT + TRI + CONTEXT, HGB, "train"),
    "text + tri (hgb), target clipped at 1": (OLD_TEXT + TRI, clipped_target(HGB, 1.0), "train"),
    "text + tri, shipped stack (clip 1)": (OLD_TEXT + TRI, shipped_stack(1.0), "train"),
    "text + tri, shipped stack (clip 3)": (OLD_TEXT + TRI, shipped_stack(3.0), "train"),
    "raw pWER (anchored, shrinkage 0)": (ANCHORED, anchored(0.0), "train"),
    **{
        f"anchored, shrinkage {s}": (ANCHORED, anchored(s, evidence=None), "train")
        for s in (0.25, 0.5, 0.75, 1.0)
    },
    **{
        f"anchored, label-free training, shrinkage {s}": (
            ANCHORED,
            anchored(s, evidence=None),
            "label_free",
        )
        for s in (0.25, 0.5, 0.75, 1.0)
    },
    "shipped: anchored, label-free training, shrinkage 0.5, correction ≤ pwer": (
        ANCHORED,
        anchored(0.5),
        "label_free",
    ),
    "shipped without hallucination signals": (
        OLD_TEXT + TRI + ["proxy_words"],
        anchored(0.5),
        "label_free",
    ),
    **{
        f"shipped with {signal} only": (
            OLD_TEXT + TRI + signals + ["proxy_words"],
            anchored(0.5),
            "label_free",
        )
        for signal, signals in (
            ("repeated 3-grams", ["rep_ngram_rate", "rep_ngram_excess"]),
            ("script mismatch", ["script_mismatch"]),
        )
    },
    "shipped + dataset context": (ANCHORED + CONTEXT, anchored(0.5), "label_free"),
    "shipped, proxies of training rows from the labelled ranking": (
        ANCHORED,
        anchored(0.5),
        "train",
    ),
    "shipped + n_others in the support check": (
        [*ANCHORED, "n_others"],
        anchored(0.5, support_only=["n_others"]),
        "label_free",
    ),
    **{
        f"anchored, label-free training, shrinkage {s}, correction ≤ {k} × disagreement": (
            ANCHORED,
            anchored(s, evidence="utt_disagreement", evidence_scale=k),
            "label_free",
        )
        for s in (0.5, 0.75, 1.0)
        for k in (0.5, 1.0)
    },
    **{
        f"anchored, label-free training, shrinkage {s}, correction ≤ {k} × {column}": (
            ANCHORED,
            anchored(s, evidence=column, evidence_scale=k),
            "label_free",
        )
        for s in (0.5, 1.0)
        for k in (0.5, 1.0)
        for column in ("pwer", "pwer_mean")
    },
}


def lodo_interval():
    """The interval of ``werest evaluate experiment=lodo`` (its ``lodo:`` block)."""
    lodo = config("evaluate", "experiment=lodo")["lodo"]
    return LodoSettings(**{k: v for k, v in lodo.items() if k != "_target_"}).interval


LODO_INTERVAL = lodo_interval()


def cached(name: str, build) -> pd.DataFrame:
    path = CACHE / f"{name}.parquet"
    if path.exists():
        return pd.read_parquet(path)
    frame = build()
    CACHE.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(path)
    return frame


def fold_frames(table, labels, pairs):
    """Per held-out domain: the training frame and the held-out frame (features + labels)."""
    folds = {}
    for domain in sorted(table["domain"].unique()):
        held = table[table["domain"] == domain]
        if held["system"].nunique() < 2:
            continue

        def build(domain=domain):
            from werest.estimation.estimate import choose_ranking
            from werest.model.files import Models, TrainedModel

            ranking, train = fold_training_rows(
                table,
                domain,
                TrainingOptions(normaliser=AUTO, two_system_views=True, proxies="ranking"),
                labels=labels,
                pairs=pairs,
            )
            train = train.assign(part="train")
            held_table = table[table["domain"] == domain]
            user_ranking = choose_ranking(
                Models(TrainedModel(None, [], normaliser="auto", ranking=ranking)), held_table
            )
            test = training_frame(
                held_table,
                user_ranking,
                normaliser=AUTO,
                labels=labels,
                pairs=pairs[pairs["domain"] == domain],
            ).assign(part="test")
            return pd.concat([train, test], ignore_index=True)

        folds[domain] = cached(f"fold_{domain}", build)
    return folds


def with_context(frame: pd.DataFrame) -> pd.DataFrame:
    """Dataset context for fold frames cached before it existed (views: as two_system_view)."""
    if "ctx_pwer" in frame.columns:
        return frame
    whole = frame[frame["view"] == "all"] if "view" in frame else frame
    parts = [add_dataset_context(part) for _, part in whole.groupby("part")]
    context = pd.concat(parts)[[*KEY, "part", *CONTEXT]]
    frame = frame.drop(columns=CONTEXT, errors="ignore").merge(
        context, on=[*KEY, "part"], how="left"
    )
    frame.loc[frame["view"] == "pair", ["ctx_tri_wer", "ctx_disagreement"]] = np.nan
    return frame


def training_rows(folds: dict, domain: str, rows: str) -> pd.DataFrame:
    """The fold's training rows (``train``), or every other domain's held-out-style rows, whose
    proxies follow the label-free order a user gets (``label_free``)."""
    if rows == "train":
        frame = with_context(folds[domain])
        return frame[frame["part"] == "train"]
    others = [with_context(f) for d, f in folds.items() if d != domain]
    frame = pd.concat([f[f["part"] == "test"].assign(view="all") for f in others])
    pairs = two_system_view(frame[frame["n_others"] > 1]).assign(view="pair")
    return pd.concat([frame, pairs], ignore_index=True)


def evaluate_variant(name, features, model, folds, data, training="train") -> pd.DataFrame:
    cells = []
    for domain, frame in folds.items():
        frame = with_context(frame)
        train = prepare_training_rows(training_rows(folds, domain, training), data, seed=0)
        fitted = fit_model(train, features, build_regressor(model))
        test = frame[frame["part"] == "test"].copy()
        test["pred"] = fitted.predict(test).to_numpy()
        test["proxy_errors"] = test[["pwer_sub", "pwer_del", "pwer_ins"]].sum(axis=1)
        for (dataset, system), rows in test.groupby(["dataset", "system"]):
            wer = rows["word_errors"].sum() / max(rows["ref_words"].sum(), 1)
            awer = estimated_sample(rows, "pred").rate()
            pwer = rows["proxy_errors"].sum() / max(rows["proxy_words"].sum(), 1)
            cells.append(
                {
                    "variant": name,
                    "domain": domain,
                    "dataset": dataset,
                    "system": system,
                    "proxy": rows["proxy"].mode().iat[0],
                    "n_scored": len(rows),
                    "wer": wer,
                    "awer": awer,
                    "pwer": pwer,
                    "error": awer - wer,
                    "abs_error": abs(awer - wer),
                    "abs_error_raw": abs(pwer - wer),
                    "mae": float((rows["pred"] - rows["wer"]).abs().mean()),
                    "mae_raw": float((rows["pwer"] - rows["wer"]).abs().mean()),
                    "ci_low": np.nan,
                    "ci_high": np.nan,
                }
            )
    frame = pd.DataFrame(cells)
    frame[["ci_low", "ci_high"]] = frame[["awer", "awer"]].to_numpy()
    return cross_conformal(frame, LODO_INTERVAL)


def main(names: list[str]) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    data = config("evaluate", "experiment=lodo")["data"]
    table = cached("table", lambda: load_sources(data))
    table["domain"] = domain_of(table["dataset"], data.get("domains")).to_numpy()
    labels = cached("labels", lambda: utterance_labels(table, AUTO, n_jobs=2))
    pairs = cached("pairs", lambda: pairwise_agreement(table, normaliser=AUTO, n_jobs=2))
    domain = table.drop_duplicates("dataset").set_index("dataset")["domain"]
    pairs["domain"] = pairs["dataset"].map(domain).to_numpy()
    folds = fold_frames(table, labels, pairs)
    rows, all_cells = [], []
    for name in names or list(VARIANTS):
        features, model, training = VARIANTS[name]
        start = time.perf_counter()
        cells = evaluate_variant(name, features, model, folds, data, training)
        overall = overall_summary(cells)
        log.info("%s: %s", name, overall)
        all_cells.append(cells)
        domains = domain_summary(cells)
        rows.append(
            {
                "variant": name,
                "mean err": percent(overall["mean_abs_error"]),
                "max err": percent(overall["max_abs_error"]),
                "domain-mean err": percent(overall["domain_mean_abs_error"]),
                "raw mean err": percent(overall["mean_abs_error_raw"]),
                "beats raw": f"{overall['domains_beating_raw']}/{overall['domains']}",
                "worst excess over raw": percent(overall["worst_excess_over_raw"]),
                "pairwise order (raw)": f"{overall['pairwise_order']:.1%} "
                f"({overall['pairwise_order_raw']:.1%})",
                "Spearman": f"{overall['mean_spearman']:.3f}",
                "utt MAE": f"{overall['mae']:.4f}",
                "coverage": f"{overall['coverage']:.1%}",
                "width": percent(overall["mean_width"]),
                "worst domain": domains.sort_values("mean_abs_error").iloc[-1]["domain"],
                "seconds": round(time.perf_counter() - start),
            }
        )
        print(markdown_table(pd.DataFrame(rows[-1:])), flush=True)
    write_results(pd.DataFrame(rows), pd.concat(all_cells))


def write_results(rows: pd.DataFrame, cells: pd.DataFrame) -> None:
    """Merge this run's variants into the committed results (a variant run again replaces its
    rows), so that variants can be run separately or in parallel."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    summary_path, cells_path = RESULTS / "lodo_ablation_summary.csv", RESULTS / "lodo_ablation.csv"
    if summary_path.exists():
        old = pd.read_csv(summary_path, dtype=str)
        rows = pd.concat([old[~old["variant"].isin(rows["variant"])], rows.astype(str)])
    if cells_path.exists():
        old = pd.read_csv(cells_path)
        cells = pd.concat([old[~old["variant"].isin(cells["variant"])], cells])
    rows.to_csv(summary_path, index=False)
    cells.to_csv(cells_path, index=False, float_format="%.6g")
    # lodo_ablation.md is the hand-written discussion; this file is the machine-made table.
    (RESULTS / "lodo_ablation_runs.md").write_text(
        "# LODO ablation (`python experiments/lodo_ablation.py [variant ...]`)\n\n"
        "Corpus errors in WER points over the (domain, dataset, system) cells of the held-out "
        "domains; raw = pWER against the same proxies; worst excess = the largest amount by "
        "which a domain's mean error exceeds raw's; pairwise order = share of same-dataset "
        "pairs of systems whose true WERs differ by ≥ 2 points put in the true order; coverage "
        "and width of the 95 % cross-conformal interval (`werest evaluate experiment=lodo`'s "
        "Mondrian bins). Rows of earlier runs keep the columns they had.\n\n"
        + markdown_table(rows)
        + "\n",
        encoding="utf-8",
    )


if __name__ == "__main__":
    main(sys.argv[1:])
