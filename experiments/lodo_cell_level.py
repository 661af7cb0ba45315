"""How much label-free signal is there at the corpus level? (issue 10)

    python experiments/lodo_ablation.py "pwer only (hgb)"   # builds outputs/lodo_cache first
    python experiments/lodo_cell_level.py

Per held-out (domain, dataset, system) cell of the LODO folds: the true corpus WER, the corpus
pWER, the n̂-weighted triangulated error (``tri_wer``), mean pairwise disagreement and mean/min
pWER against every other system. Linear regressions on these cells, fitted leave one domain out
with every domain weighing the same, show the best any corpus-level correction of pWER can do.
Writes ``experiments/results/lodo_cell_level.md``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.linear_model import LinearRegression

from werest.formatting import markdown_table

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / "outputs" / "lodo_cache"
FEATURE_SETS = [
    ["pwer"],
    ["tri"],
    ["pwer", "tri"],
    ["pwer", "tri", "disagreement"],
    ["pwer", "tri", "disagreement", "pwer_min"],
    ["pwer", "tri", "tri_proxy", "disagreement"],
    ["pwer", "tri", "tri_proxy", "disagreement", "pwer_min", "pwer_mean"],
]


def weighted(rows: pd.DataFrame, column: str) -> float:
    values, weight = rows[column], rows["n_hat"].where(rows[column].notna(), 0)
    return float((values.fillna(0) * weight).sum() / weight.sum()) if weight.sum() else np.nan


def cells() -> pd.DataFrame:
    records = []
    for path in sorted(CACHE.glob("fold_*.parquet")):
        frame = pd.read_parquet(path)
        test = frame[frame["part"] == "test"]
        test = test.assign(n_hat=test["est_ref_words"].clip(lower=1))
        for (dataset, system), rows in test.groupby(["dataset", "system"]):
            proxy_errors = rows[["pwer_sub", "pwer_del", "pwer_ins"]].to_numpy().sum()
            records.append(
                {
                    "domain": path.stem.removeprefix("fold_"),
                    "dataset": dataset,
                    "system": system,
                    "proxy": rows["proxy"].mode().iat[0],
                    "wer": rows["word_errors"].sum() / max(rows["ref_words"].sum(), 1),
                    "pwer": proxy_errors / max(rows["proxy_words"].sum(), 1),
                    "tri": weighted(rows, "tri_wer"),
                    "disagreement": weighted(rows, "utt_disagreement"),
                    "pwer_mean": weighted(rows, "pwer_mean"),
                    "pwer_min": weighted(rows, "pwer_min"),
                }
            )
    frame = pd.DataFrame(records)
    frame["tri"] = frame["tri"].fillna(frame["pwer"] / 2)  # two systems: an even split
    own = frame.set_index(["dataset", "system"])["tri"]
    frame["tri_proxy"] = own.reindex(pd.MultiIndex.from_frame(frame[["dataset", "proxy"]])).values
    return frame


def leave_one_domain_out(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    predictions = np.zeros(len(frame))
    data = frame.fillna({c: frame[c].median() for c in columns})
    for domain in frame["domain"].unique():
        train, test = data[data["domain"] != domain], (data["domain"] == domain).to_numpy()
        weight = 1 / train["domain"].map(train["domain"].value_counts())
        model = LinearRegression().fit(train[columns], train["wer"], sample_weight=weight)
        predictions[test] = model.predict(data.loc[test, columns])
    return np.clip(predictions, 0, 1)


def main() -> None:
    frame = cells()
    raw = (frame["pwer"] - frame["wer"]).abs()
    raw_domain = raw.groupby(frame["domain"]).mean()
    rows = [
        {
            "estimate": "raw corpus pWER",
            "mean err": f"{100 * raw.mean():.2f}",
            "max err": f"{100 * raw.max():.2f}",
            "beats raw": "",
        }
    ]
    for columns in FEATURE_SETS:
        error = (leave_one_domain_out(frame, columns) - frame["wer"]).abs()
        beats = (error.groupby(frame["domain"]).mean() < raw_domain).sum()
        rows.append(
            {
                "estimate": "linear: " + " + ".join(columns),
                "mean err": f"{100 * error.mean():.2f}",
                "max err": f"{100 * error.max():.2f}",
                "beats raw": f"{beats}/{len(raw_domain)}",
            }
        )
    shared = (frame["wer"] - frame["tri"]).groupby(frame["domain"]).agg(["mean", "std"])
    text = (
        "# Corpus-level signal, leave one domain out (`python experiments/lodo_cell_level.py`)\n\n"
        f"{len(frame)} held-out cells of {frame['domain'].nunique()} domains; errors in WER "
        "points.\n\n" + markdown_table(pd.DataFrame(rows)) + "\n\n"
        "True WER minus triangulated error per domain (the errors agreement cannot see), "
        "points:\n\n" + markdown_table((100 * shared).round(1).reset_index().astype(str)) + "\n"
    )
    (REPO / "experiments" / "results" / "lodo_cell_level.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
