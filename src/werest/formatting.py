"""Numbers and tables for people: the one formatter of each kind every report uses.

Console summaries, Markdown reports and the web page show the same numbers; formatting them in
one place keeps "12.34" on the console and "12.34" in ``leaderboard.md`` the same number.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas loads on first use: `werest --help` must not import it
    import pandas as pd


def missing(value) -> bool:
    """None, NaN or NA: shown as an empty cell."""
    import pandas as pd

    return value is None or (not isinstance(value, str) and bool(pd.isna(value)))


def number(value: float | None, digits: int = 3) -> str:
    """A number with exactly ``digits`` decimals, so a column's numbers line up (``""`` when
    missing): 0.00075 in a 2-decimal column is ``0.00``, never ``-0.00``. A p-value is
    :func:`p_value`'s."""
    if missing(value):
        return ""
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


#: the smallest p-value shown as a number; below it, "< 0.001"
P_FLOOR = 0.001


def p_value(value: float | None) -> str:
    """A p-value with 3 decimals, or ``< 0.001`` below that (not ``0.000``, which a reader
    takes for impossible, nor ``0.00075``, which breaks the column); ``""`` when missing."""
    if missing(value):
        return ""
    return f"< {P_FLOOR}" if value < P_FLOOR else f"{value:.3f}"


def markdown_table(frame: pd.DataFrame) -> str:
    """A GitHub Markdown table of ``frame`` (values as they are, ``|`` escaped, missing values
    as empty cells)."""
    header = "| " + " | ".join(str(c).replace("|", "\\|") for c in frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = [
        "| " + " | ".join("" if missing(v) else str(v).replace("|", "\\|") for v in row) + " |"
        for row in frame.itertuples(index=False)
    ]
    return "\n".join([header, rule, *body])


def percent(value: float | None, digits: int = 2) -> str:
    """A rate (fraction) as a percentage for display: ``0.1234`` -> ``"12.34"``; ``""`` when
    missing (None or NaN)."""
    import pandas as pd

    if value is None or pd.isna(value):
        return ""
    return f"{100 * value:.{digits}f}"


def percent_interval(low: float | None, high: float | None, digits: int = 2) -> str:
    """A CI of rates as ``"[low, high]"`` in percent."""
    return f"[{percent(low, digits)}, {percent(high, digits)}]"


def size(n_bytes: float) -> str:
    """A memory size for people: ``1536`` -> ``"1.5 KiB"``, ``2.4e13`` -> ``"21.8 TiB"``."""
    value = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def plural(count: int, noun: str, many: str | None = None) -> str:
    """A count and its noun, agreeing: ``1 dataset``, ``2 datasets``, ``0 datasets``;
    ``many`` for an irregular plural (``plural(n, "utterance", "utterances")`` is implied)."""
    return f"{count} {noun if count == 1 else many or noun + 's'}"
