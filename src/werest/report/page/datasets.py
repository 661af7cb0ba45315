"""The Datasets tab: one sortable table per dataset."""

from __future__ import annotations

import html
from collections.abc import Callable

import numpy as np
import pandas as pd

from werest.report.page.markup import html_table


def datasets_tab(
    datasets: pd.DataFrame, dataset_view: Callable[[pd.DataFrame], pd.DataFrame]
) -> str:
    """The Datasets tab: per dataset of ``datasets`` (the leaderboard's), its rows as
    ``dataset_view`` shows them (:func:`werest.report.leaderboard_report.dataset_view`), best
    estimate first."""
    parts = [
        '<p class="note">Per dataset, the systems run on it, best estimate first (WER in %).</p>'
    ]
    for dataset, rows in datasets.groupby("dataset", sort=True):
        rows = rows.sort_values(["est_wer", "system"]).reset_index(drop=True)
        view = dataset_view(rows).drop(columns="dataset")
        view.insert(0, "est. rank", np.arange(1, len(view) + 1))
        if "true_wer" in rows:
            view["true rank"] = rows["true_wer"].rank(method="min").astype("Int64").astype(str)
        parts.append(f"<h3>{html.escape(str(dataset))}</h3>{html_table(view)}")
    return "".join(parts)
