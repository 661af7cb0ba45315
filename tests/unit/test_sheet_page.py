"""The page to transcribe a labelling sheet on (:mod:`werest.report.sheet_page`, issue 49):
its rows follow the sheet, its players find the audio from where the page is, a missing file
says so in its row, no hypothesis reaches it, and the sheet it embeds is the CSV's cells.

In a real browser (typing, reload, Save, and the saved sheet read by ``werest estimate``):
tests/integration/test_sheet_page.py."""

from __future__ import annotations

import csv
import io
import json
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.helpers import run_cli
from werest.estimation.sampling import SHEET_COLUMNS, draw_sample
from werest.report.sheet_page import (
    Audio,
    audio_sources,
    page_path,
    render_sheet_page,
    write_sheet_page,
)


class PageReader(HTMLParser):
    """The page's rows (by ``row-i``: text, player, note, box and skip box) and its embedded
    sheet."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict] = []
        self.data: dict | None = None
        self._script: str | None = None
        self._note: dict | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "tr" and (attrs.get("id") or "").startswith("row-"):
            self.rows.append({"id": attrs["id"], "text": [], "note": ""})
        elif tag == "script" and attrs.get("id") == "sheet-data":
            self._script = ""
        elif self.rows and tag in ("audio", "textarea", "input"):
            self.rows[-1][tag] = attrs
        elif self.rows and tag == "p" and "audio-note" in (attrs.get("class") or ""):
            self._note = self.rows[-1]

    def handle_endtag(self, tag):
        if tag == "script" and self._script is not None:
            self.data = json.loads(self._script)
            self._script = None
        elif tag == "p":
            self._note = None

    def handle_data(self, data):
        if self._script is not None:
            self._script += data
        elif self._note is not None:
            self._note["note"] += data
        elif self.rows:
            self.rows[-1]["text"].append(data)


def read_page(markup: str) -> PageReader:
    reader = PageReader()
    reader.feed(markup)
    return reader


def a_sheet(n: int = 5, **columns) -> pd.DataFrame:
    """A random sheet of ``n`` of 12 utterances (every one drawn when ``n`` is 12)."""
    utterances = pd.DataFrame({"dataset": "d", "utt_id": [f"u{i:02d}" for i in range(12)]})
    for name, values in columns.items():
        utterances[name] = values
    return draw_sample(utterances, budget=n, seed=3)


def test_the_rows_follow_the_sheets_order():
    sheet = a_sheet(5)
    shuffled = sheet.iloc[[3, 0, 4, 1, 2]].reset_index(drop=True)
    page = read_page(render_sheet_page(shuffled, "to_label.csv"))
    assert [row["id"] for row in page.rows] == [f"row-{i}" for i in range(5)]
    shown = [next(t for t in row["text"] if t.startswith("u")) for row in page.rows]
    assert shown == shuffled["utt_id"].tolist() != sorted(shown)


def test_audio_plays_from_the_pages_folder(tmp_path):
    clips = tmp_path / "audio clips"
    (clips / "a b.wav").parent.mkdir()
    (clips / "a b.wav").write_bytes(b"RIFF")
    (tmp_path / "labels" / "local").mkdir(parents=True)
    (tmp_path / "labels" / "local" / "c.wav").write_bytes(b"RIFF")
    sheet = pd.DataFrame(
        {
            "audio": [str(clips / "a b.wav"), "local/c.wav", "", None, str(clips / "gone.wav")],
            "reference": "",
        }
    )
    sources = audio_sources(sheet, tmp_path / "labels")
    assert sources == [
        Audio(str(clips / "a b.wav"), "../audio%20clips/a%20b.wav", True),
        Audio("local/c.wav", "local/c.wav", True),  # a relative one: from the sheet's folder
        Audio(None, None, False),
        Audio(None, None, False),
        Audio(str(clips / "gone.wav"), "../audio%20clips/gone.wav", False),
    ]
    assert audio_sources(sheet.drop(columns="audio"), tmp_path) == [Audio(None, None, False)] * 5


def test_a_missing_file_says_so_in_its_row_and_a_found_one_does_not(tmp_path):
    (tmp_path / "here.wav").write_bytes(b"RIFF")
    paths = [str(tmp_path / "here.wav"), str(tmp_path / "gone.wav"), ""]
    sheet = a_sheet(12, audio=paths * 4).head(3)
    written = write_sheet_page(sheet, tmp_path / "labels" / "s.html", folder=tmp_path / "labels")
    page = read_page(written.read_text(encoding="utf-8"))
    by_path = {row["audio"]["data-path"]: row for row in page.rows if "audio" in row}
    assert by_path[str(tmp_path / "here.wav")]["note"] == ""
    assert by_path[str(tmp_path / "here.wav")]["audio"]["src"] == "../here.wav"
    gone = by_path[str(tmp_path / "gone.wav")]
    assert gone["note"] == f"audio file not found: {tmp_path / 'gone.wav'}"
    assert gone["audio"]["src"] == "../gone.wav"  # played if the file comes back
    unnamed = [row for row in page.rows if "audio" not in row]
    assert [row["note"] for row in unnamed] == ["no audio file named for this utterance"]


def test_a_sheet_without_audio_has_no_player_column():
    markup = render_sheet_page(a_sheet(3), "s.csv")
    assert "<audio" not in markup and ">Recording<" not in markup
    assert markup.count("<textarea") == 3 and markup.count('type="checkbox"') == 3


def test_durations_where_known():
    sheet = a_sheet(12, duration=[1.25, np.nan, 65.0] * 4).head(3)
    page = read_page(render_sheet_page(sheet, "s.csv"))
    shown = [" ".join(t.strip() for t in row["text"] if t.strip()) for row in page.rows]
    assert "1.2 s" in shown[0] and "unknown" in shown[1] and "1:05 min" in shown[2]


def test_the_embedded_sheet_is_the_csvs_cells_whatever_they_hold():
    awkward = ['</script><em>"x"</em>', "a,b", "naïve\u2028line", "<!--", "x & y", "plain"]
    sheet = a_sheet(12).head(6)
    sheet["utt_id"] = awkward
    sheet["reference"] = ["", "", "done before", "", "", ""]
    markup = render_sheet_page(sheet, "to_label.csv")
    assert markup.count("</script>") == 2 and "<em>" not in markup  # escaped everywhere
    page = read_page(markup)
    written = list(csv.reader(io.StringIO(sheet.to_csv(index=False), newline="")))
    assert [page.data["columns"], *page.data["rows"]] == written
    assert page.data["name"] == "to_label.csv" and page.data["key"].startswith(
        "werest-sheet:to_label.csv:"
    )
    assert page.data["columns"][page.data["reference"]] == "reference"
    assert page.data["skip"] == -1 and "true" in page.data["skipped"]
    # a reference from an earlier sheet is shown and kept, not edited
    assert "readonly" in page.rows[2]["textarea"] and "disabled" in page.rows[2]["input"]
    assert "readonly" not in page.rows[0]["textarea"]


def test_the_key_changes_with_the_rows():
    sheet = a_sheet(4)
    first = read_page(render_sheet_page(sheet, "s.csv")).data["key"]
    assert read_page(render_sheet_page(sheet, "s.csv")).data["key"] == first
    changed = sheet.assign(draws=sheet["draws"] + 1)
    assert read_page(render_sheet_page(changed, "s.csv")).data["key"] != first


@pytest.mark.parametrize(
    ("sheet", "page"),
    [("to_label.csv", "to_label.html"), ("s0", "s0.html"), ("odd.html", "odd.html.html")],
)
def test_the_page_is_named_after_the_sheet(sheet, page):
    assert page_path(Path("x") / sheet) == Path("x") / page


# --------------------------------------------------------------------------- werest sample


def calls_with_audio(folder: Path) -> tuple[Path, list[str]]:
    """Two systems on 10 utterances with hypotheses no page may show, relative audio paths
    (written for the even utterances) and durations; the hypotheses."""
    rows, hypotheses = [], []
    for i in range(10):
        for system in ("alpha", "beta"):
            text = f"hypothesis-{system}-{i} zanzibar"
            hypotheses.append(text)
            rows.append(
                {
                    "dataset": "calls",
                    "utt_id": f"c{i}",
                    "system": system,
                    "hypothesis": text,
                    "audio": f"clips/c{i}.wav",
                    "duration": 1.5 + i,
                }
            )
        if i % 2 == 0:
            (folder / "clips").mkdir(exist_ok=True)
            (folder / "clips" / f"c{i}.wav").write_bytes(b"RIFF")
    path = folder / "calls.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path, hypotheses


def test_sample_writes_the_page_beside_the_sheet_and_says_so(tmp_path, capsys):
    calls, hypotheses = calls_with_audio(tmp_path)
    out = tmp_path / "labels" / "to_label.csv"
    status, stdout, err = run_cli(
        capsys, "sample", f"input={calls}", "budget=6", "strategy=random", f"out={out}"
    )
    assert status == 0, err
    page_file = tmp_path / "labels" / "to_label.html"
    assert f"open the page {page_file}" in stdout
    assert sorted(p.name for p in out.parent.iterdir()) == [
        "to_label.csv",
        "to_label.csv.config.yaml",
        "to_label.html",
    ]
    markup = page_file.read_text(encoding="utf-8")
    for text in hypotheses:
        assert text not in markup
    assert "zanzibar" not in markup and "alpha" not in markup
    page = read_page(markup)
    with out.open(encoding="utf-8", newline="") as handle:
        written = list(csv.reader(handle))
    assert [page.data["columns"], *page.data["rows"]] == written
    assert page.data["columns"] == SHEET_COLUMNS
    sheet = pd.read_csv(out, keep_default_na=False, dtype=str)
    assert [row["audio"]["data-path"] for row in page.rows] == sheet["audio"].tolist()
    for row, utt_id in zip(page.rows, sheet["utt_id"], strict=True):
        assert row["audio"]["src"] == f"../clips/{utt_id}.wav"
        missing = int(utt_id[1:]) % 2 == 1
        assert row["note"] == (
            f"audio file not found: {tmp_path / 'clips' / f'{utt_id}.wav'}" if missing else ""
        )
    shown = [" ".join(t.strip() for t in row["text"] if t.strip()) for row in page.rows]
    for text, duration in zip(shown, sheet["duration"], strict=True):
        assert f"{float(duration):.1f} s" in text


def test_a_winner_sheet_names_systems_only_in_its_design_columns(tmp_path, capsys):
    calls, hypotheses = calls_with_audio(tmp_path)
    out = tmp_path / "s0.csv"
    status, _, err = run_cli(
        capsys, "sample", f"input={calls}", "budget=4", "strategy=winner", f"out={out}"
    )
    assert status == 0, err
    markup = (tmp_path / "s0.html").read_text(encoding="utf-8")
    for text in hypotheses:
        assert text not in markup
    page = read_page(markup)
    shown = " ".join(t for row in page.rows for t in row["text"])
    assert "alpha" not in shown and "beta" not in shown
