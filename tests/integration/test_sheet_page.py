"""The page ``werest sample`` writes to transcribe on (issue 49), in a real headless chromium
driven by playwright: the players find the audio beside the table and a missing file says so,
the keys move from box to box and play, the work survives a reload, and the sheet "Save
sheet" downloads is read by ``werest estimate labels=`` exactly as the same transcripts
written into the CSV with pandas are (winner.json and summary.json byte for byte)."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from tests.browser import chromium_binary, playwright_chromium, write_tone
from tests.helpers import run_cli
from tests.unit.test_winner import synthetic_table

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        chromium_binary() is None,
        reason="needs Debian's chromium (make test installs it as root: apt-get install chromium)",
    ),
]

#: records every play() a page makes (there may be no sound device: nothing is heard)
RECORD_PLAYS = """
window.werestPlayed = [];
const play = HTMLMediaElement.prototype.play;
HTMLMediaElement.prototype.play = function () {
  window.werestPlayed.push(this.id);
  return play.call(this);
};
"""
#: the row to skip, and the references typed in the others beyond the truth (quoting, UTF-8)
SKIPPED_ROW = 1
EXTRA = {0: ', "quoted", naïve café', 3: " and a comma, too"}


@pytest.fixture(scope="module")
def sampled(tmp_path_factory):
    """A winner sheet of 6 draws from 40 utterances of three systems, the table's audio
    relative to it: a WAV for every utterance but every third (those are missing)."""
    folder = tmp_path_factory.mktemp("page")
    full = synthetic_table([0.04, 0.07, 0.12], n=40, seed=5)
    utterances = sorted(set(full["utt_id"]))
    missing = set(utterances[::3])
    full["audio"] = "audio/" + full["utt_id"] + ".wav"
    full["duration"] = full["utt_id"].map({u: 0.5 + 0.1 * i for i, u in enumerate(utterances)})
    for i, utt_id in enumerate(utterances):
        if utt_id not in missing:
            write_tone(folder / "audio" / f"{utt_id}.wav", 0.5 + 0.1 * i)
    full.drop(columns=["reference"]).to_csv(folder / "calls.csv", index=False)
    truth = full.drop_duplicates("utt_id").set_index("utt_id")["reference"]
    return folder, truth, missing


def test_transcribe_on_the_page_reload_and_save(sampled, tmp_path, capsys):
    folder, truth, missing = sampled
    calls, sheet_file = folder / "calls.csv", folder / "labels" / "to_label.csv"
    status, _, err = run_cli(
        capsys, "sample", f"input={calls}", "strategy=winner", "budget=6", f"out={sheet_file}"
    )
    assert status == 0, err
    sheet = pd.read_csv(sheet_file, keep_default_na=False, dtype=str)
    n = len(sheet)
    gone = [i for i, u in enumerate(sheet["utt_id"]) if u in missing]
    assert n >= 3 and 1 <= len(gone) < n - 1  # some files found, at least one missing
    wanted = [
        "" if i == SKIPPED_ROW else truth[u] + EXTRA.get(i, "")
        for i, u in enumerate(sheet["utt_id"])
    ]

    with playwright_chromium() as browser:
        context = browser.new_context(accept_downloads=True)
        context.add_init_script(RECORD_PLAYS)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(sheet_file.with_suffix(".html").as_uri())
        # every found file loads its metadata from the page's folder; a missing one says so
        page.wait_for_function(
            "ids => ids.every(i => { const a = document.getElementById('audio-' + i);"
            " return a.readyState >= 1 || a.error; })",
            arg=list(range(n)),
        )
        for i, utt_id in enumerate(sheet["utt_id"]):
            ready = page.evaluate(f"document.getElementById('audio-{i}').readyState")
            note = page.inner_text(f"#note-{i}")
            if i in gone:
                assert ready == 0 and "audio file not found" in note, (i, note)
                assert str(folder / "audio" / f"{utt_id}.wav") in note
            else:
                assert ready >= 1 and note == "", (i, note)
        # the keys: type, Enter to the next box (which plays), Alt+S skips, Ctrl+Space replays
        page.focus("#ref-0")
        page.keyboard.press("Control+Space")
        for i in range(n):
            assert page.evaluate("document.activeElement.id") == f"ref-{i}"
            if i == SKIPPED_ROW:
                page.keyboard.press("Alt+S")
            else:
                page.keyboard.type(wanted[i])
            page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.id") == "save"  # after the last row
        played = page.evaluate("window.werestPlayed")
        assert played == [f"audio-{i}" for i in range(n)]  # each row once, in order
        page.focus("#ref-2")
        page.keyboard.press("Alt+P")
        assert page.evaluate("window.werestPlayed")[-1] == "audio-2"
        progress = f"{n - 1} transcribed, 1 skipped, 0 to go (of {n})"
        assert page.inner_text("#progress") == progress
        # nothing of the systems' hypotheses on the page
        assert "s0" not in page.inner_text("main") and "hypothesis" not in page.content()

        page.reload()
        page.wait_for_function("document.getElementById('progress').textContent !== ''")
        assert [page.input_value(f"#ref-{i}") for i in range(n) if i != SKIPPED_ROW] == [
            w for i, w in enumerate(wanted) if i != SKIPPED_ROW
        ]
        assert page.is_checked(f"#skip-{SKIPPED_ROW}")
        assert page.inner_text("#progress") == progress

        with page.expect_download() as download:
            page.click("#save")
        assert download.value.suggested_filename == "to_label.csv"
        saved = tmp_path / "saved" / "to_label.csv"
        saved.parent.mkdir()
        download.value.save_as(saved)
        assert "Every row is done" in page.inner_text("#saved")
        assert errors == []
        context.close()

    # the same transcripts written into the sheet with pandas
    direct = tmp_path / "direct" / "to_label.csv"
    direct.parent.mkdir()
    filled = sheet.assign(
        reference=wanted, skip=["true" if i == SKIPPED_ROW else "" for i in range(n)]
    )
    filled.to_csv(direct, index=False)
    assert saved.read_bytes() == direct.read_bytes()
    outputs = {}
    for name, labels in (("saved", saved), ("direct", direct)):
        out = tmp_path / f"estimate-{name}"
        status, stdout, err = run_cli(
            capsys, "estimate", f"input={calls}", f"labels={labels}", f"output_dir={out}"
        )
        assert status == 0, err
        outputs[name] = {f: (out / f).read_bytes() for f in ("winner.json", "summary.json")}
        outputs[name]["console"] = stdout.replace(str(labels), "<labels>").replace(str(out), "")
    assert outputs["saved"] == outputs["direct"]
    summary = json.loads(outputs["saved"]["summary.json"])  # the labels and the skip counted
    assert {(row["n_labelled"], row["n_skipped"]) for row in summary} == {(n - 1, 1)}


def test_a_page_moved_with_its_audio_still_plays(sampled, tmp_path, capsys):
    """The players' paths are relative to the page: a folder copied whole (the page, the
    sheet and the audio beside them) plays from its new place."""
    folder, _, missing = sampled
    sheet_file = folder / "moved" / "s.csv"
    status, _, err = run_cli(
        capsys, "sample", f"input={folder / 'calls.csv'}", "budget=3", f"out={sheet_file}"
    )
    assert status == 0, err
    copy = tmp_path / "copy"
    (copy / "moved").mkdir(parents=True)
    shutil.copy(sheet_file.with_suffix(".html"), copy / "moved" / "s.html")
    shutil.copytree(folder / "audio", copy / "audio")
    sheet = pd.read_csv(sheet_file, keep_default_na=False, dtype=str)
    with playwright_chromium() as browser:
        page = browser.new_page()
        page.goto((copy / "moved" / "s.html").as_uri())
        page.wait_for_function(
            "n => [...Array(n).keys()].every(i => {"
            " const a = document.getElementById('audio-' + i); return a.readyState >= 1 || a.error;"
            " })",
            arg=len(sheet),
        )
        sources = page.evaluate("[...document.querySelectorAll('audio')].map(a => a.currentSrc)")
        loaded = page.evaluate("[...document.querySelectorAll('audio')].map(a => a.readyState)")
    for utt_id, source, state in zip(sheet["utt_id"], sources, loaded, strict=True):
        assert source == (copy / "audio" / f"{utt_id}.wav").as_uri()
        assert (state == 0) == (utt_id in missing)
