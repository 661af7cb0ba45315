"""``leaderboard.html``, the leaderboard's web page: its public names, from
:mod:`werest.report.page`, where the page is split by view (one module per view). The
``leaderboard`` command imports :mod:`werest.report.page.document` directly.
"""

from __future__ import annotations

from werest.report.page.browser import chromium, measure_tabs, screenshot
from werest.report.page.document import render, write_page
from werest.report.page.markup import Cell, html_table
from werest.report.page.metrics import METRICS
from werest.report.page.plots import chart, plotly_js

__all__ = [
    "METRICS",
    "Cell",
    "chart",
    "chromium",
    "html_table",
    "measure_tabs",
    "plotly_js",
    "render",
    "screenshot",
    "write_page",
]
