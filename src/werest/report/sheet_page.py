"""``to_label.html``: the labelling sheet as a page to transcribe on.

``werest sample`` writes it beside the sheet (:func:`page_path`). One self-contained HTML
file: no server, no network, no external asset. It lists the sheet's utterances in the
sheet's order, each with an audio player (where the sheet names an audio file), its
duration (where known), a text box for the reference and a skip box; it keeps the work in
progress in the browser's ``localStorage`` (keyed by the sheet's file name and a hash of its
rows, so a reload loses nothing), and its "Save sheet" button downloads the sheet that
``werest estimate labels=`` reads: the sheet's own cells, embedded in the page as they are in
the CSV, with only ``reference`` filled in (and ``skip`` marked ``true`` on skipped rows,
the column added after the others when the sheet has none).

It shows no system's hypothesis: seeing one pulls a transcriber toward that system, and the
estimate would then favour it.

:func:`render_sheet_page` is a pure function of the sheet and its rows' audio
(:func:`audio_sources`); :func:`write_sheet_page` writes the page atomically.
"""

from __future__ import annotations

import csv
import hashlib
import html
import io
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from werest.estimation.labels import SKIPPED
from werest.io import atomic_path


@dataclass(frozen=True)
class Audio:
    """One row's recording, as the page plays it.

    ``path``: the file as the sheet names it (None: the row names none); ``src``: the
    player's URL, relative to the page's folder where it can be (else a ``file:`` URL);
    ``found``: whether the file existed when the page was written."""

    path: str | None
    src: str | None
    found: bool


def page_path(sheet: str | Path) -> Path:
    """The page beside a sheet: ``to_label.csv`` → ``to_label.html``."""
    sheet = Path(sheet)
    if sheet.suffix.lower() == ".html":
        return sheet.with_name(f"{sheet.name}.html")
    return sheet.with_suffix(".html")


def audio_sources(sheet: pd.DataFrame, folder: str | Path) -> list[Audio]:
    """Each row's :class:`Audio` for a page in ``folder``: the sheet's ``audio`` (absolute,
    as ``werest sample`` writes it; a relative one is taken against ``folder``, the sheet's
    own folder, as a table's relative paths are against the table's), its URL relative to
    ``folder``, and whether it exists now."""
    if "audio" not in sheet.columns:
        return [Audio(None, None, False)] * len(sheet)
    folder = Path(folder).resolve()
    sources = []
    for value in sheet["audio"]:
        if value is None or (isinstance(value, float) and math.isnan(value)) or not str(value):
            sources.append(Audio(None, None, False))
            continue
        path = Path(str(value))
        full = path if path.is_absolute() else folder / path
        sources.append(Audio(str(value), _relative_url(full, folder), full.is_file()))
    return sources


def _relative_url(path: Path, folder: Path) -> str:
    """``path`` as a URL relative to ``folder`` (``../audio/a%20b.wav``), or its ``file:``
    URL where no relative path leads there (another drive)."""
    try:
        relative = os.path.relpath(path, folder)
    except ValueError:
        return path.resolve().as_uri()
    return quote(Path(relative).as_posix(), safe="/")


def sheet_cells(sheet: pd.DataFrame) -> tuple[list[str], list[list[str]], str]:
    """The sheet's header and rows as the cells of its CSV (``sheet.to_csv(index=False)``,
    what ``werest sample`` writes), and that CSV's text."""
    text = sheet.to_csv(index=False, lineterminator="\n")
    header, *rows = csv.reader(io.StringIO(text, newline=""))
    return header, rows, text


def render_sheet_page(sheet: pd.DataFrame, name: str, audio: list[Audio] | None = None) -> str:
    """The page to transcribe ``sheet`` on (module docstring).

    Parameters
    ----------
    sheet : the labelling sheet (:func:`werest.estimation.sampling.draw_sample`), in its
        order; the page's rows follow it.
    name : the sheet's file name: the name "Save sheet" downloads it as, and with a hash of
        the rows the key of the work kept in the browser.
    audio : one :class:`Audio` per row (:func:`audio_sources`); None: no player.
    """
    header, rows, text = sheet_cells(sheet)
    if audio is None:
        audio = [Audio(None, None, False)] * len(rows)
    if len(audio) != len(rows):
        raise ValueError(f"{len(audio)} audio sources for {len(rows)} rows")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    data = {
        "name": name,
        "key": f"werest-sheet:{name}:{digest}",
        "columns": header,
        "rows": rows,
        "reference": header.index("reference"),
        "skip": header.index("skip") if "skip" in header else -1,
        "skipped": list(SKIPPED),
    }
    durations = _durations(sheet)
    with_audio = any(a.path for a in audio)
    body = "\n".join(
        _row(i, row, header, audio[i], durations[i], with_audio) for i, row in enumerate(rows)
    )
    heads = ["#", "Utterance", "Duration", *(["Recording"] if with_audio else [])]
    heads += ["Transcript", "Skip"]
    head = "".join(f'<th scope="col">{h}</th>' for h in heads)
    count = len(rows)
    return PAGE.format(
        title=html.escape(f"Transcribe {name}"),
        name=html.escape(name),
        style=STYLE,
        script=SCRIPT,
        head=head,
        body=body,
        caption=html.escape(
            f"{count} utterance{'s' if count != 1 else ''} to transcribe, in the sheet's order"
        ),
        data=_script_json(data),
    )


def write_sheet_page(
    sheet: pd.DataFrame, path: str | Path, *, folder: str | Path | None = None, name=None
) -> Path:
    """Write :func:`render_sheet_page` of ``sheet`` to ``path`` atomically.

    ``folder``: the folder the page will be opened from (default: ``path``'s), which the
    audio URLs are relative to: a page written into a staging folder is opened from its
    final place. ``name``: the sheet's file name (default: ``path``'s name with ``.csv``)."""
    path = Path(path)
    folder = path.parent if folder is None else Path(folder)
    name = name or path.with_suffix(".csv").name
    page = render_sheet_page(sheet, name, audio_sources(sheet, folder))
    with atomic_path(path) as tmp:
        tmp.write_text(page, encoding="utf-8")
    return path


def _durations(sheet: pd.DataFrame) -> list[str]:
    if "duration" not in sheet.columns:
        return [""] * len(sheet)
    seconds = pd.to_numeric(sheet["duration"], errors="coerce")
    return [_duration(s) for s in seconds]


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds) or seconds < 0:
        return ""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}:{rest:02d} min"


UNKNOWN = '<span class="na">unknown</span>'


def _row(i: int, cells: list[str], header: list[str], audio: Audio, duration: str, player: bool):
    def cell(column: str) -> str:
        return cells[header.index(column)] if column in header else ""

    dataset, utt_id = cell("dataset"), cell("utt_id")
    utterance = f"{dataset} {utt_id}".strip()
    earlier = cell("reference").strip() != ""  # filled in from an earlier sheet's labels
    parts = [
        f'<td class="n">{i + 1}</td>',
        f'<td class="utt"><span class="ds">{html.escape(dataset)}</span> '
        f'<span class="id">{html.escape(utt_id)}</span></td>',
        f'<td class="dur">{html.escape(duration) or UNKNOWN}</td>',
    ]
    if player:
        parts.append(f'<td class="rec">{_player(i, audio, f"row {i + 1} ({utterance})")}</td>')
    label = html.escape(f"Transcript of row {i + 1} ({utterance})")
    note = (
        '<p class="done-note">transcribed in an earlier sheet (kept as it is)</p>'
        if earlier
        else ""
    )
    readonly, disabled = (" readonly", " disabled") if earlier else ("", "")
    parts.append(
        f'<td class="ref"><label class="vh" for="ref-{i}">{label}</label>'
        f'<textarea id="ref-{i}" rows="2"{readonly}></textarea>{note}</td>'
    )
    parts.append(
        f'<td class="skip"><input type="checkbox" id="skip-{i}"{disabled}>'
        f'<label for="skip-{i}">skip<span class="vh"> row {i + 1}</span></label></td>'
    )
    return f'<tr id="row-{i}">{"".join(parts)}</tr>'


def _player(i: int, audio: Audio, row: str) -> str:
    if audio.path is None:
        return f'<p class="audio-note" id="note-{i}">no audio file named for this utterance</p>'
    path = html.escape(audio.path)
    missing = "" if audio.found else f"audio file not found: {path}"
    return (
        f'<audio id="audio-{i}" controls preload="metadata" src="{html.escape(audio.src)}" '
        f'data-path="{path}" aria-label="{html.escape(f"Recording of {row}")}"></audio>'
        f'<p class="audio-note" id="note-{i}">{missing}</p>'
    )


def _script_json(data: dict) -> str:
    """``data`` as JSON safe inside a ``<script>`` element (no ``</script>``, no ``<!--``)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escaped)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; \
script-src 'unsafe-inline'; style-src 'unsafe-inline'; media-src 'self' file: blob:">
<title>{title}</title>
<style>{style}</style>
</head>
<body>
<header>
<h1>Transcribe <code>{name}</code></h1>
<p>Listen to each recording and type what is said, word for word, as you hear it. A row with
no speech to transcribe (silence, noise, another language) gets <b>skip</b>, not a guess;
do not delete rows: every row is part of the sample's design.</p>
<p class="bias">No system's transcript is shown on this page, on purpose: seeing one pulls
what you hear toward that system, and the estimate would favour it.</p>
<section class="keys" aria-labelledby="keys-title">
<h2 id="keys-title">Keys, in a transcript box</h2>
<dl>
<div><dt><kbd>Ctrl</kbd>+<kbd>Space</kbd> or <kbd>Alt</kbd>+<kbd>P</kbd></dt>
<dd>play the recording (again, from the start)</dd></div>
<div><dt><kbd>Esc</kbd></dt><dd>pause</dd></div>
<div><dt><kbd>Enter</kbd></dt><dd>next row: go to its box and play it</dd></div>
<div><dt><kbd>Shift</kbd>+<kbd>Enter</kbd></dt><dd>previous row</dd></div>
<div><dt><kbd>Alt</kbd>+<kbd>S</kbd></dt><dd>skip this row (or not)</dd></div>
<div><dt><kbd>Ctrl</kbd>+<kbd>S</kbd></dt><dd>save the sheet</dd></div>
</dl>
</section>
<div class="bar">
<button type="button" id="save">Save sheet</button>
<span id="progress" role="status" aria-live="polite"></span>
</div>
<p id="saved" class="saved" role="status" aria-live="polite"></p>
<p class="small">Your typing is kept in this browser as you go (a reload loses nothing).
<b>Save sheet</b> downloads <code>{name}</code> with your transcripts, the sheet's other
columns as they were: give that file to <code>werest estimate labels=</code>.</p>
</header>
<main>
<table>
<caption>{caption}</caption>
<thead><tr>{head}</tr></thead>
<tbody>
{body}
</tbody>
</table>
</main>
<script type="application/json" id="sheet-data">{data}</script>
<script>{script}</script>
</body>
</html>
"""

STYLE = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;
color:#1d1d1f;background:#fafafa;font-size:15px;line-height:1.4}
header{background:#1f3b57;color:#fff;padding:14px 24px 10px 24px}
header h1{margin:0 0 6px 0;font-size:22px}
header p{margin:4px 0;max-width:70em}
header code{background:rgba(255,255,255,.15);padding:0 4px;border-radius:3px}
header .bias{font-style:italic}
.keys h2{font-size:15px;margin:10px 0 4px 0}
.keys dl{display:flex;flex-wrap:wrap;gap:4px 22px;margin:0}
.keys dl div{display:flex;gap:6px;align-items:baseline}
.keys dt{font-weight:600}.keys dd{margin:0}
kbd{display:inline-block;background:#fff;color:#1d1d1f;border:1px solid #9aa7b4;
border-bottom-width:2px;border-radius:4px;padding:0 5px;font:13px ui-monospace,monospace}
.bar{display:flex;gap:16px;align-items:center;margin:12px 0 4px 0;flex-wrap:wrap}
.bar button{font-size:16px;font-weight:600;padding:7px 18px;border-radius:6px;
border:2px solid #fff;background:#2e7d32;color:#fff;cursor:pointer}
.bar button:hover{background:#276b2b}
.saved{min-height:1.2em}.small{font-size:13px;opacity:.92}
main{padding:8px 24px 40px 24px}
table{border-collapse:collapse;width:100%;background:#fff}
caption{text-align:left;font-weight:600;padding:6px 0;font-size:15px}
th,td{border:1px solid #d0d7de;padding:6px 8px;text-align:left;vertical-align:top}
th{background:#eef2f6;font-weight:600}
td.n,td.dur{white-space:nowrap;text-align:right;font-variant-numeric:tabular-nums}
td.utt{overflow-wrap:anywhere;min-width:9em;max-width:16em}
td.utt .ds{color:#555;font-size:13px;display:block}
td.utt .id{font-family:ui-monospace,monospace;font-size:13px}
td.rec audio{width:260px;max-width:100%;display:block}
td.ref{width:50%}
td.ref textarea{width:100%;min-height:3.2em;font:inherit;padding:6px;border:1px solid #8c959f;
border-radius:4px;resize:vertical}
td.skip{white-space:nowrap}
td.skip input{width:18px;height:18px;vertical-align:middle;margin-right:4px}
tr:focus-within{background:#fff6d9}
tr.skipped textarea{background:#eee;color:#6e7781;text-decoration:line-through}
tr.done td.n{background:#e6f4ea}
tr.skipped td.n{background:#eee}
textarea[readonly]{background:#f3f5f7}
.audio-note{color:#b3261e;margin:4px 0 0 0;font-size:13px;overflow-wrap:anywhere}
.audio-note:empty{display:none}
.done-note{color:#555;margin:2px 0 0 0;font-size:12.5px}
.na{color:#888}
:focus-visible{outline:3px solid #f0b400;outline-offset:2px}
td.ref textarea:focus{outline:3px solid #1a5fb4;outline-offset:1px;border-color:#1a5fb4}
.vh{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);
white-space:nowrap}
"""

SCRIPT = r"""
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('sheet-data').textContent);
  var n = data.rows.length;
  var boxes = [], skips = [], players = [], rows = [];
  for (var i = 0; i < n; i++) {
    boxes.push(document.getElementById('ref-' + i));
    skips.push(document.getElementById('skip-' + i));
    players.push(document.getElementById('audio-' + i));
    rows.push(document.getElementById('row-' + i));
  }
  var progress = document.getElementById('progress');
  var saved = document.getElementById('saved');
  var storage = null;
  try { storage = window.localStorage; storage.getItem(data.key); } catch (e) { storage = null; }

  function originallySkipped(i) {
    if (data.skip < 0) return false;
    var v = String(data.rows[i][data.skip]).trim().toLowerCase().replace(/\.0$/, '');
    return data.skipped.indexOf(v) >= 0;
  }
  function oneLine(text) { return text.replace(/\r\n|\r|\n/g, ' '); }

  // the sheet's own values first, then the work kept in this browser
  for (var i = 0; i < n; i++) {
    boxes[i].value = data.rows[i][data.reference];
    skips[i].checked = originallySkipped(i);
  }
  if (storage) {
    var kept = null;
    try { kept = JSON.parse(storage.getItem(data.key) || 'null'); } catch (e) { kept = null; }
    if (kept && kept.references && kept.references.length === n) {
      for (var i = 0; i < n; i++) {
        if (!boxes[i].readOnly) {
          boxes[i].value = kept.references[i];
          skips[i].checked = !!kept.skips[i];
        }
      }
    }
  } else {
    saved.textContent = 'This browser keeps no work in progress here (its storage is ' +
      'off): save the sheet often.';
  }

  function keep() {
    if (!storage) return;
    var state = {references: boxes.map(function (b) { return b.value; }),
                 skips: skips.map(function (s) { return s.checked; }),
                 at: new Date().toISOString()};
    try { storage.setItem(data.key, JSON.stringify(state)); } catch (e) {
      saved.textContent = 'Could not keep your work in this browser (' + e.name +
        '): save the sheet now.';
    }
  }
  function show() {
    var done = 0, skipped = 0;
    for (var i = 0; i < n; i++) {
      var isSkipped = skips[i].checked;
      var isDone = !isSkipped && boxes[i].value.trim() !== '';
      rows[i].classList.toggle('skipped', isSkipped);
      rows[i].classList.toggle('done', isDone);
      if (isSkipped) skipped += 1; else if (isDone) done += 1;
    }
    var left = n - done - skipped;
    progress.textContent = done + ' transcribed, ' + skipped + ' skipped, ' + left +
      ' to go (of ' + n + ')';
  }

  function pauseAll(except) {
    players.forEach(function (p) { if (p && p !== except && !p.paused) p.pause(); });
  }
  function play(i) {
    var p = players[i];
    if (!p) return;
    pauseAll(p);
    try { p.currentTime = 0; } catch (e) { /* not loaded yet */ }
    var started = p.play();
    if (started && started.catch) {
      started.catch(function (e) {
        if (e && e.name === 'AbortError') return;
        saved.textContent = 'Row ' + (i + 1) + ': the browser would not play it (' +
          (e && e.name) + ').';
      });
    }
  }
  function go(j) {
    if (j < 0) j = 0;
    if (j >= n) { document.getElementById('save').focus(); pauseAll(null); return; }
    boxes[j].focus();
    rows[j].scrollIntoView({block: 'center'});
    play(j);
  }
  function toggleSkip(i) {
    if (skips[i].disabled) return;
    skips[i].checked = !skips[i].checked;
    changed();
  }
  function changed() { keep(); show(); }

  boxes.forEach(function (box, i) {
    box.addEventListener('input', function () {
      var flat = oneLine(box.value);
      if (flat !== box.value) box.value = flat;
      changed();
    });
    box.addEventListener('keydown', function (e) {
      if (e.isComposing) return;
      if (e.key === 'Enter' && !e.ctrlKey && !e.altKey && !e.metaKey) {
        e.preventDefault();
        go(e.shiftKey ? i - 1 : i + 1);
      } else if ((e.ctrlKey && e.code === 'Space') || (e.altKey && e.code === 'KeyP')) {
        e.preventDefault();
        play(i);
      } else if (e.key === 'Escape') {
        pauseAll(null);
      } else if (e.altKey && e.code === 'KeyS') {
        e.preventDefault();
        toggleSkip(i);
      }
    });
  });
  skips.forEach(function (s) { s.addEventListener('change', changed); });
  players.forEach(function (p, i) {
    if (!p) return;
    var note = document.getElementById('note-' + i);
    p.addEventListener('error', function () {
      if (note.textContent) return;  // the page already says it was not found
      note.textContent = 'cannot play ' + p.getAttribute('data-path') +
        ': the file is missing or in a format this browser cannot decode';
    });
    p.addEventListener('loadedmetadata', function () { note.textContent = ''; });
  });

  function cell(value) {
    value = value == null ? '' : String(value);
    return /[",\r\n]/.test(value) ? '"' + value.replace(/"/g, '""') + '"' : value;
  }
  function sheetCsv() {
    var columns = data.columns.slice();
    var anySkipped = skips.some(function (s) { return s.checked; });
    var skipAt = data.skip;
    if (skipAt < 0 && anySkipped) { columns.push('skip'); skipAt = columns.length - 1; }
    var lines = [columns.map(cell).join(',')];
    for (var i = 0; i < n; i++) {
      var row = data.rows[i].slice();
      if (!boxes[i].readOnly) {
        var isSkipped = skips[i].checked;
        row[data.reference] = isSkipped ? '' : oneLine(boxes[i].value);
        if (skipAt >= 0) {
          if (row.length < columns.length) row.push('');
          if (isSkipped) row[skipAt] = 'true';
          else if (originallySkipped(i)) row[skipAt] = '';
        }
      } else if (row.length < columns.length) {
        row.push('');
      }
      lines.push(row.map(cell).join(','));
    }
    return lines.join('\n') + '\n';
  }
  function save() {
    keep();
    var blob = new Blob([sheetCsv()], {type: 'text/csv;charset=utf-8'});
    var url = URL.createObjectURL(blob);
    var link = document.createElement('a');
    link.href = url;
    link.download = data.name;
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 10000);
    var left = 0;
    for (var i = 0; i < n; i++) {
      if (!skips[i].checked && boxes[i].value.trim() === '') left += 1;
    }
    var at = new Date().toLocaleTimeString();
    saved.textContent = 'Saved ' + data.name + ' at ' + at + '.' + (left ? ' ' + left +
      ' row' + (left === 1 ? ' is' : 's are') + ' still empty: werest estimate refuses an ' +
      'empty reference, so transcribe or skip ' + (left === 1 ? 'it' : 'them') +
      ' and save again.' : ' Every row is done.');
  }
  document.getElementById('save').addEventListener('click', save);
  document.addEventListener('keydown', function (e) {
    if ((e.ctrlKey || e.metaKey) && !e.altKey && e.code === 'KeyS') {
      e.preventDefault();
      save();
    }
  });
  window.werestSheetCsv = sheetCsv;  // what Save writes (the tests read it too)
  show();
})();
"""
