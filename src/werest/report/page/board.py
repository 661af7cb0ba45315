"""What a leaderboard's board holds, as the page's views ask it: truth, timings, common
ground, the ranking's column and each system's interval."""

from __future__ import annotations

import numpy as np
import pandas as pd


def has_truth(board: pd.DataFrame) -> bool:
    return "true_wer" in board and board["true_wer"].notna().any()


def has_timings(board: pd.DataFrame) -> bool:
    return "rtfx" in board and np.isfinite(board["rtfx"].to_numpy(dtype=float)).any()


def common_ground(board: pd.DataFrame) -> bool:
    """Whether some system lacks a dataset (its macro over every dataset is partly filled)."""
    return "filled_cells" in board and bool((board["filled_cells"] > 0).any())


def ranking_column(board: pd.DataFrame, kind: str = "est") -> str:
    """The macro WER the ranking follows: over every dataset (filled) where it exists."""
    column = f"{kind}_wer_all"
    return column if column in board else f"{kind}_wer"


def interval(board: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The 95 % interval of each system's own macro estimate (the model's error included;
    the sampling CI on a board without it)."""
    low = board["interval_low"] if "interval_low" in board else board["est_ci_low"]
    high = board["interval_high"] if "interval_high" in board else board["est_ci_high"]
    return low.to_numpy(dtype=float), high.to_numpy(dtype=float)
