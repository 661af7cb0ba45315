"""werest.io.staged_output: a run's outputs appear whole or not at all (real signals are sent
to real runs in tests/integration/test_interrupts.py)."""

from __future__ import annotations

import importlib
import os
import signal

import pytest

from werest import io
from werest.errors import InputError
from werest.io import (
    Terminated,
    atomic_path,
    check_output,
    deferred_signals,
    recorded_writes,
    staged_output,
)


def files(folder):
    return {str(p.relative_to(folder)): p.read_text() for p in folder.rglob("*") if p.is_file()}


def write(folder, **texts):
    for name, text in texts.items():
        with atomic_path(folder / name) as tmp:
            tmp.write_text(text)


def test_a_new_folder_appears_with_every_file_and_is_recorded_by_its_final_name(tmp_path):
    out = tmp_path / "a" / "out"
    with recorded_writes() as written, staged_output(out) as staged:
        write(staged, **{"x.csv": "x", "config.yaml": "c"})
        assert not out.exists()
    assert files(out) == {"x.csv": "x", "config.yaml": "c"}
    assert sorted(written) == [out / "config.yaml", out / "x.csv"]
    assert [p.name for p in tmp_path.rglob(".*")] == []


def test_a_previous_run_is_replaced_whole_or_kept_whole(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "x.csv").write_text("old")
    (out / "lid_a.csv").write_text("old")  # the new run writes no LID table
    with pytest.raises(RuntimeError), staged_output(out, owned=["lid_*.csv"]) as staged:
        write(staged, **{"x.csv": "new"})
        raise RuntimeError("the run fails")
    assert files(out) == {"x.csv": "old", "lid_a.csv": "old"}
    with staged_output(out, owned=["lid_*.csv"]) as staged:
        write(staged, **{"x.csv": "new", "config.yaml": "c"})
    assert files(out) == {"x.csv": "new", "config.yaml": "c"}
    assert [p.name for p in tmp_path.rglob(".*")] == []


def test_files_that_are_not_outputs_stay(tmp_path):
    """An input table kept in the output folder, or other runs' files in a shared one."""
    (tmp_path / "input.csv").write_text("mine")
    (tmp_path / "x.csv").write_text("old")
    (tmp_path / "lid_a.csv").write_text("old")
    with staged_output(tmp_path, owned=["lid_*.csv"]) as staged:
        write(staged, **{"x.csv": "new"})
    assert files(tmp_path) == {"input.csv": "mine", "x.csv": "new"}


def test_a_failed_run_removes_the_folders_it_created(tmp_path):
    with pytest.raises(KeyboardInterrupt), staged_output(tmp_path / "a" / "b" / "out") as staged:
        write(staged, **{"x.csv": "new"})
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_a_file_and_its_sidecars_are_put_in_place_together(tmp_path):
    out = tmp_path / "t.parquet"
    out.write_text("old")
    with recorded_writes() as written, staged_output(out, file=True) as staged:
        assert staged.name == "t.parquet" and staged.parent != tmp_path
        write(staged.parent, **{"t.parquet": "new", "t.parquet.config.yaml": "c"})
        assert out.read_text() == "old"
    assert files(tmp_path) == {"t.parquet": "new", "t.parquet.config.yaml": "c"}
    assert sorted(written) == [out, tmp_path / "t.parquet.config.yaml"]


def test_a_file_never_replaces_a_folder(tmp_path):
    (tmp_path / "t.csv").mkdir()
    with (
        pytest.raises(InputError, match="is a folder") as error,
        staged_output(tmp_path / "t.csv", file=True) as staged,
    ):
        write(staged.parent, **{"t.csv": "new"})
    assert error.value.path == str(tmp_path / "t.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]


def test_an_error_names_the_final_path_not_the_staging_folder(tmp_path):
    with pytest.raises(InputError) as error, staged_output(tmp_path / "out") as staged:
        raise InputError(f"cannot read {staged / 'x.csv'}", path=staged / "x.csv")
    assert ".staging" not in str(error.value)
    assert error.value.path == str(tmp_path / "out" / "x.csv")


def test_a_failed_rename_puts_back_what_was_moved(tmp_path, monkeypatch):
    (tmp_path / "input.csv").write_text("mine")
    (tmp_path / "a.csv").write_text("old a")
    (tmp_path / "b.csv").write_text("old b")
    real = os.replace

    def failing(source, target):
        if str(target) == str(tmp_path / "b.csv") and "old" not in str(source):
            raise OSError("disk full")
        real(source, target)

    monkeypatch.setattr(io.os, "replace", failing)
    with (
        pytest.raises(InputError, match="cannot put the outputs in place: disk full"),
        staged_output(tmp_path) as staged,
    ):
        write(staged, **{"a.csv": "new a", "b.csv": "new b"})
    monkeypatch.undo()
    assert files(tmp_path) == {"input.csv": "mine", "a.csv": "old a", "b.csv": "old b"}


def test_a_signal_during_the_renames_is_raised_after_them():
    received = []

    def handler(signum, frame):
        received.append(signum)
        raise Terminated

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        with pytest.raises(Terminated), deferred_signals():
            signal.raise_signal(signal.SIGTERM)
            assert received == []  # held until the block ends
        assert received == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)


@pytest.mark.parametrize(("raised", "status"), [(KeyboardInterrupt, 130), (Terminated, 143)])
def test_an_interrupted_command_prints_one_line_and_exits_128_plus_the_signal(
    tmp_path, monkeypatch, capsys, raised, status
):
    cli = importlib.import_module("werest.cli.main")

    def interrupted(cfg):
        with staged_output(tmp_path / "out") as staged:
            write(staged, **{"x.csv": "new"})
            raise raised

    monkeypatch.setattr(cli, "_runner", lambda command: interrupted)
    before = signal.getsignal(signal.SIGTERM)
    assert cli.main(["segmentation", "reference=r", "hypothesis=h"]) == status
    assert capsys.readouterr().err == "werest segmentation: interrupted\n"
    assert list(tmp_path.iterdir()) == []
    assert signal.getsignal(signal.SIGTERM) == before  # a caller's handler comes back


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_that_a_library_wraps_in_another_error_still_reads_as_interrupted(
    tmp_path, monkeypatch, capsys, signum, status
):
    # Seen in CI: SIGTERM arrived while a dataclass was being created at import, and Python
    # wrapped the handler's exception in "RuntimeError: Error calling __set_name__".
    cli = importlib.import_module("werest.cli.main")

    class Field:
        def __set_name__(self, owner, name):
            signal.raise_signal(signum)  # the handler runs here, inside type creation

    def interrupted(cfg):
        with staged_output(tmp_path / "out") as staged:
            write(staged, **{"x.csv": "new"})

            class Settings:
                cluster = Field()

    monkeypatch.setattr(cli, "_runner", lambda command: interrupted)
    # a handler, as in a shell's foreground job: a test run started in the background
    # inherits SIGINT ignored, and werest rightly leaves an ignored signal ignored
    previous = signal.signal(signum, signal.default_int_handler)
    try:
        assert cli.main(["segmentation", "reference=r", "hypothesis=h"]) == status
    finally:
        signal.signal(signum, previous)
    assert capsys.readouterr().err == "werest segmentation: interrupted\n"
    assert list(tmp_path.iterdir()) == []


def test_an_error_without_a_signal_is_not_an_interruption(monkeypatch):
    cli = importlib.import_module("werest.cli.main")

    def broken(cfg):
        raise RuntimeError("a bug")

    monkeypatch.setattr(cli, "_runner", lambda command: broken)
    with pytest.raises(RuntimeError, match="a bug"):
        cli.main(["segmentation", "reference=r", "hypothesis=h"])


def test_the_working_folder_and_a_linked_folder_stay_where_they_are(tmp_path, monkeypatch):
    real = tmp_path / "real"
    real.mkdir()
    (real / "x.csv").write_text("old")
    (tmp_path / "link").symlink_to(real)
    with staged_output(tmp_path / "link") as staged:
        write(staged, **{"x.csv": "new"})
    assert (tmp_path / "link").is_symlink() and files(real) == {"x.csv": "new"}
    monkeypatch.chdir(real)
    with staged_output(".") as staged:
        write(staged, **{"x.csv": "newer"})
    assert files(real) == {"x.csv": "newer"} and os.path.samefile(os.getcwd(), real)


# --------------------------------------------------------------------------- cannot replace
# An immutable file or folder (chattr +i) cannot be renamed or removed, even by root: the
# output is refused before any work, and the renames at the end never start half-way.


def test_an_immutable_output_folder_is_refused_before_the_block_runs(tmp_path, immutable):
    out = tmp_path / "out"
    out.mkdir()
    (out / "x.csv").write_text("old")
    immutable(out)
    ran = []
    with pytest.raises(InputError, match="cannot replace the previous output: it is immutable"):
        check_output(out)
    with pytest.raises(InputError) as error, staged_output(out) as staged:
        ran.append(staged)
    assert ran == [] and error.value.path == str(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert files(out) == {"x.csv": "old"}


def test_an_immutable_output_file_in_the_folder_is_named(tmp_path, immutable):
    out = tmp_path / "out"
    out.mkdir()
    (out / "scores.csv").write_text("old")
    (out / "notes.txt").write_text("mine")
    immutable(out / "scores.csv")
    with pytest.raises(InputError) as error:
        check_output(out, owned=["scores.csv"])
    assert str(error.value) == (
        f"{out}: cannot replace the previous output: {out / 'scores.csv'} is immutable or "
        "append-only (lsattr shows the flag; chattr -i or -a clears it)"
    )
    check_output(out, owned=["other.csv"])  # an entry the run does not own is not replaced


def test_the_renames_never_start_when_an_old_output_cannot_go(tmp_path, immutable):
    """A name the command did not declare but wrote (so not checked before the run): the
    placement refuses before the first rename, leaves nothing aside and keeps everything."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.csv").write_text("old a")
    (out / "b.csv").write_text("old b")
    immutable(out / "b.csv")
    with pytest.raises(InputError, match=r"b\.csv is immutable"), staged_output(out) as staged:
        write(staged, **{"a.csv": "new a", "b.csv": "new b"})
    assert files(out) == {"a.csv": "old a", "b.csv": "old b"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no .out.old-*, no staging


def test_an_immutable_one_file_output_is_refused(tmp_path, immutable):
    out = tmp_path / "t.parquet"
    out.write_text("old")
    immutable(out)
    with pytest.raises(InputError, match=r"t\.parquet: cannot replace the previous output: it is"):
        check_output(out, file=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.parquet"]


def test_a_folder_output_that_is_a_file_or_under_a_locked_folder_is_refused(tmp_path, immutable):
    (tmp_path / "f").write_text("a file")
    with pytest.raises(InputError, match="is a file, expected a folder"):
        check_output(tmp_path / "f")
    locked = tmp_path / "ro"
    locked.mkdir()
    immutable(locked)
    with pytest.raises(InputError, match=r"cannot write here: .*ro is not writable"):
        check_output(locked / "new" / "out")


def test_an_ordinary_previous_output_passes(tmp_path):
    out = tmp_path / "out"
    (out / "utterances").mkdir(parents=True)
    (out / "utterances" / "part-00000.csv").write_text("old")
    check_output(out, owned=["utterances"])
    check_output(tmp_path / "new" / "out")
    check_output(tmp_path / "t.parquet", file=True)
