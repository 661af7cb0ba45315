"""``leaderboard.html``: the leaderboard as one static, self-contained web page.

The page is what the reference leaderboards publish (the Open ASR Leaderboard's ranking with
one WER column per dataset and RTFx; the ASR fairness leaderboard's FAAS), written as a single
file that works offline: the CSS, the table-sorting/tab script and plotly.js are inline (once,
in the head), every chart is a Plotly figure with a fixed id, and nothing is fetched from a CDN
or a server. The same leaderboard gives the same page, byte for byte. Tabs, each shown only
when it has something to show:

* **Ranking**: the ranking table (common-ground macro WER with its 95 % interval, the true WER
  and rank where references exist, RTFx, FAAS, one WER column per dataset, and how many
  datasets each system was run on), the rank agreement, a full-width chart of the estimate
  against the truth (hover: system, estimate, interval, truth) and the WER-vs-RTFx Pareto
  view (with timings), and a details table per system (own and common-ground macros, CIs);
* **Datasets**: one sortable table per dataset;
* **Paired tests**: the neighbour tests of :func:`werest.ranking.leaderboard.neighbour_tests`;
* **Fairness**: a chart of the group effects per category, FAAS per system, per-category
  summaries of the audits and of where the label-free audit differs from the true one (the
  full tables are the ``fairness_*.csv`` files beside the page, linked);
* **Latency**: per system, RTFx, latency and utterance WER statistics (with timings);
* **Language ID**: accuracy, confidence and confusion (with detected languages);
* **Metrics**: the definition of every number, as computed.

Without JavaScript every tab is shown one after the other (the script only hides tabs) and
every number is in a table, so the page is still complete when scripts are off (only the
charts need them).

One module per view: :mod:`~werest.report.page.document` joins them into the page
(:func:`~werest.report.page.document.render`, :func:`~werest.report.page.document.write_page`);
``header`` (title line and contenders), ``ranking`` (the leaderboard table, its details and the
Ranking tab), the charts ``estimates``, ``speed`` and ``fairness_chart``, the tabs ``datasets``,
``pairs``, ``fairness``, ``latency``, ``lid`` and ``metrics``; shared by them: ``markup`` (HTML
tables and cells), ``plots`` (plotly: colours, a figure as a ``<div>``, plotly.js), ``board``
(what the board holds) and ``assets`` (CSS and script). ``browser`` checks the page in headless
chromium.

Only ``document`` imports :mod:`werest.report.leaderboard_report`: it hands its readable views
(the agreement line, the contenders, a dataset's and the pairs' tables) to the views, so that no
view imports it and the chain of imports from the ``leaderboard`` command stays within 11 files
(tests/unit/test_architecture.py).
"""
