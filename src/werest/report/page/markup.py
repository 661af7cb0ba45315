"""The page's HTML pieces: tables of escaped cells (:class:`Cell`, :func:`html_table`),
links, and the short names and percentages its cells and charts share."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from werest.formatting import missing, percent


@dataclass(frozen=True)
class Cell:
    """A table cell: its ``text``, an optional sort value (``data-v``: a number sorts as a
    number whatever the text shows), a ``title`` (shown on hover) and the ``html`` to show
    instead of the escaped text (already escaped by whoever built it)."""

    text: str
    sort: float | None = None
    title: str | None = None
    html: str | None = None


def html_table(
    frame: pd.DataFrame,
    table_id: str | None = None,
    sortable: bool = True,
    header_titles: Mapping[str, str] | None = None,
    header_class: Mapping[str, str] | None = None,
) -> str:
    """An HTML table of display strings (escaped) or :class:`Cell` values; ``sortable``
    tables sort on a header click. Text columns (system names...) are left-aligned, and a
    ``system`` column wraps long names. The table sits in a box that scrolls on its own if
    it is ever wider than the page, so the page itself never scrolls sideways."""
    attributes = f' id="{html.escape(table_id)}"' if table_id else ""
    css = ' class="sortable"' if sortable else ""
    header_titles = header_titles or {}
    header_class = header_class or {}
    text_columns = {c for c in frame.columns if _is_text(frame[c])}
    head = []
    for c in frame.columns:
        classes = " ".join(
            x for x in ("text" if c in text_columns else "", header_class.get(c)) if x
        )
        title = f' title="{html.escape(header_titles[c])}"' if c in header_titles else ""
        klass = f' class="{classes}"' if classes else ""
        head.append(f"<th{klass}{title}>{html.escape(str(c))}</th>")
    rows = []
    for row in frame.itertuples(index=False):
        cells = []
        for column, value in zip(frame.columns, row, strict=True):
            classes = []
            if column in text_columns:
                classes.append("text")
            if column == "system":
                classes.append("sys")
                value = _breakable(value)
            cells.append(_td(value, classes))
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return (
        f'<div class="box"><table{attributes}{css}><thead><tr>{"".join(head)}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


_NUMERIC = re.compile(r"^\s*[\[(]?\s*[-−+]?(\d|\.\d|inf)")


def _is_text(values: pd.Series) -> bool:
    """Whether a column holds words (left-aligned) rather than numbers."""
    texts = [v.text if isinstance(v, Cell) else _cell(v) for v in values]
    texts = [t for t in texts if t and t != "—"]
    return bool(texts) and not any(_NUMERIC.match(t) for t in texts)


def _td(value, classes: list[str]) -> str:
    attributes = ""
    if isinstance(value, Cell):
        if value.sort is not None and np.isfinite(value.sort):
            attributes += f' data-v="{value.sort!r}"'
        elif value.sort is not None:
            attributes += ' data-v=""'
        if value.title:
            attributes += f' title="{html.escape(value.title)}"'
        if value.text in ("", "—"):
            classes = [*classes, "na"]
        content = value.html if value.html is not None else html.escape(value.text)
    else:
        content = html.escape(_cell(value))
    klass = f' class="{" ".join(classes)}"' if classes else ""
    return f"<td{klass}{attributes}>{content}</td>"


def _breakable(value) -> Cell:
    """A system name that may wrap after ``/`` and ``_`` (and, as always, ``-``)."""
    text = value.text if isinstance(value, Cell) else _cell(value)
    markup = re.sub(r"([/_])", r"\1<wbr>", html.escape(text))
    if isinstance(value, Cell):
        return Cell(value.text, value.sort, value.title or text, markup)
    return Cell(text, title=text, html=markup)


def _cell(value) -> str:
    if value is None or (not isinstance(value, str) and missing(value)):
        return ""
    return str(value)


def short(name: str, width: int = 30) -> str:
    """A system name that fits an axis: the organisation dropped when the name is long, then
    cut with an ellipsis."""
    name = str(name)
    if len(name) > width and "/" in name:
        name = name.split("/", 1)[1]
    return name if len(name) <= width else name[: width - 1] + "…"


def pct(value, digits: int = 2) -> str:
    """A rate as a percentage with ``%``: ``0.1234`` -> ``12.34 %`` (``n/a`` when missing)."""
    return "n/a" if missing(value) else f"{percent(value, digits)} %"


def pct_cell(value, title: str | None = None, digits: int = 2) -> Cell:
    """A rate as a percentage cell that sorts as its number; ``—`` when missing."""
    if missing(value):
        return Cell("—", sort=float("nan"), title=title)
    return Cell(percent(value, digits), sort=float(value), title=title)


def links(names: Sequence[str]) -> str:
    return ", ".join(f'<a href="{html.escape(n)}">{html.escape(n)}</a>' for n in names)
