"""Frames of many parts in one (base floor: pandas only)."""

from __future__ import annotations

import pandas as pd
from pandas.api.types import union_categoricals


def concat_compact(frames: list[pd.DataFrame], categories: tuple[str, ...]) -> pd.DataFrame:
    """The partitions' compact rows in one frame whose string columns (``categories``) stay
    categories (with the union of the categories, sorted, so groups come in the in-memory
    run's order): concatenating differing categories would give one Python string per row,
    several GB at 10M target rows."""
    frames = [f for f in frames if len(f)] or frames[:1]  # an empty one adds no row
    compact = pd.concat([f.drop(columns=list(categories)) for f in frames], ignore_index=True)
    for column in categories:
        parts = [f[column].astype("category") for f in frames]
        compact[column] = union_categoricals(parts, sort_categories=True, ignore_order=True)
    return compact[list(frames[0].columns)]
