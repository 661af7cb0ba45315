"""Writing files safely and turning values into text: the plumbing every stage shares.

Every output file goes through :func:`atomic_path`, and every command writes its outputs
inside :func:`staged_output`, which puts them in place together at the end: a failed or
interrupted run leaves nothing half-written, and no mix of two runs.
:func:`recorded_writes` lets the CLI name what a run wrote without each stage printing it.
"""

from __future__ import annotations

import fnmatch
import logging
import os
import shutil
import signal
import stat
import struct
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

from werest.csv_writer import write_csv
from werest.errors import InputError, WerestError

# write_csv (werest.csv_writer) is importable from here too, as it was before it moved
__all__ = [
    "STOP_SIGNALS",
    "Terminated",
    "atomic_path",
    "check_output",
    "deferred_signals",
    "first_line",
    "json_default",
    "record_write",
    "recorded_writes",
    "replace_folder",
    "save_figure",
    "shipped",
    "staged_output",
    "unrecorded",
    "write_csv",
    "write_csvs",
    "write_json",
    "write_report",
    "write_text",
]


def shipped(folder: str) -> Path:
    """A folder werest ships, ``conf`` (the Hydra configs) or ``models`` (the shipped models).

    In the repository they sit at the top level (``conf/``, ``models/``, beside ``src/``); the
    wheel carries them inside the package (``werest/conf``, ``werest/models``: pyproject's
    ``force-include``). The package's copy is used when it exists (an installed wheel), else
    the repository's (an editable install, or ``PYTHONPATH=src``). The one place that locates
    them."""
    inside = Path(str(resources.files("werest") / folder))
    if inside.is_dir():
        return inside
    repository = Path(__file__).resolve().parents[2] / folder  # src/werest/io.py -> the repo
    if repository.is_dir():
        return repository
    raise WerestError(f"werest's {folder}/ folder is missing: neither {inside} nor {repository}")


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it into place only on success.

    Nothing half-written is ever left at ``path``: an exception (or an interrupt) removes
    the temporary file and leaves any previous ``path`` untouched. Inside
    :func:`recorded_writes`, each file put in place is recorded (the CLI's "wrote ..." line).
    """
    path = Path(path)
    if path.is_dir():
        raise InputError("is a folder, expected a file to write", path=path)
    tmp: Path | None = None
    try:
        with deferred_signals():  # an interrupt here cannot strand the temporary file
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                handle, tmp_name = tempfile.mkstemp(
                    prefix=f".{path.name}.", suffix=".tmp", dir=path.parent
                )
            except OSError as error:
                raise InputError(f"cannot write here: {error.strerror}", path=path) from None
            os.close(handle)
            tmp = Path(tmp_name)
        _usual_mode(tmp, 0o666)  # mkstemp makes 0600; outputs get the usual mode
        yield tmp
        try:
            os.replace(tmp, path)
        except OSError as error:
            raise InputError(f"cannot write: {error.strerror}", path=path) from None
        for record in _RECORDERS:
            record.append(path)
    finally:
        if tmp is not None:
            with deferred_signals():
                tmp.unlink(missing_ok=True)


_RECORDERS: list[list[Path]] = []


def record_write(path: Path, *, replacing: Path | None = None) -> None:
    """Record a path put in place by other means than :func:`atomic_path` (a renamed
    folder), in place of the files recorded under ``replacing`` (the folder's former name)."""
    for record in _RECORDERS:
        if replacing is not None:
            record[:] = [p for p in record if not p.is_relative_to(replacing)]
        record.append(Path(path))


@contextmanager
def recorded_writes() -> Iterator[list[Path]]:
    """Collect the paths :func:`atomic_path` puts in place while the block runs."""
    written: list[Path] = []
    _RECORDERS.append(written)
    try:
        yield written
    finally:
        _RECORDERS.remove(written)


@contextmanager
def unrecorded() -> Iterator[None]:
    """Writes inside the block are not the run's outputs (a cache): :func:`recorded_writes`
    does not list them."""
    saved = _RECORDERS[:]
    _RECORDERS.clear()
    try:
        yield
    finally:
        _RECORDERS[:] = saved


def _relocate_records(old_root: Path, new_root: Path) -> None:
    """The recorded files under ``old_root`` (a staging folder) named as put in place under
    ``new_root``; without a recorder, nothing."""
    for record in _RECORDERS:
        record[:] = [
            new_root / p.relative_to(old_root) if p.is_relative_to(old_root) else p for p in record
        ]


def _forget_records(root: Path) -> None:
    for record in _RECORDERS:
        record[:] = [p for p in record if not p.is_relative_to(root)]


# --------------------------------------------------------------------------- whole or absent


class Terminated(KeyboardInterrupt):
    """SIGTERM as an exception: the CLI's handler raises it (:mod:`werest.cli.main`), so every
    ``finally`` and context manager cleans up as it does on Ctrl-C (KeyboardInterrupt)."""


#: The signals that stop a run: Ctrl-C (SIGINT) and a polite kill (SIGTERM).
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold SIGINT and SIGTERM while the block runs; one that arrives is handled when the
    block ends, by the handler that was in place (an exception, or the default action).

    The renames that put a run's outputs in place and the removal of a failed run's staging
    folder run in here, so an interrupt never stops them halfway. Python runs signal handlers
    in the main thread only: in another thread this holds nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous: dict[int, object] = {}
    try:
        for signum in STOP_SIGNALS:
            if signal.getsignal(signum) is not None:  # None: a handler not set from Python
                previous[signum] = signal.signal(signum, lambda n, _frame: received.append(n))
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if received:
            handler = previous[received[0]]
            if callable(handler):
                handler(received[0], None)
            elif handler == signal.SIG_DFL:
                signal.raise_signal(received[0])


@contextmanager
def staged_output(
    path: str | Path, *, file: bool = False, owned: Iterable[str] = ()
) -> Iterator[Path]:
    """Write a run's outputs into a staging folder beside ``path``; put them in place together
    when the block succeeds. On any failure or interrupt the staging folder is removed and
    whatever was at ``path`` is left as it was: the outputs are whole or absent.

    ``path`` is the run's output folder (``output_dir``): the block writes into the yielded
    staging folder, which then replaces the folder. Whole (the old folder renamed aside, the
    new one renamed in, the old one removed) when the old folder holds only outputs: names
    the run wrote, or that match one of the glob patterns ``owned`` (what an earlier run of
    the command may have written and this one did not, e.g. ``lid_*.csv``). Otherwise entry by
    entry, keeping the entries that are not outputs (an input table kept in the folder, other
    runs' files in a shared one such as ``models``).

    With ``file=True``, ``path`` is one output (a table, a model, a folder of parts) with
    sidecars written beside it (``<name>.config.yaml``): the block gets ``staging/<name>`` to
    write, and each entry of the staging folder then replaces its namesake beside ``path``.

    The renames run with SIGINT and SIGTERM held (:func:`deferred_signals`); a rename that
    fails puts back what the others moved. Parents created for the staging folder are
    removed again when the run fails. Inside :func:`recorded_writes`, the files are recorded
    by their final names; a :class:`~werest.errors.WerestError` naming a staged file names
    its final place instead.
    """
    path = _output_path(path, file=file)
    check_output(path, file=file, owned=owned)
    target = path.parent if file else path
    created = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
    staging: Path | None = None
    done = False
    try:
        with deferred_signals():
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                staging = Path(tempfile.mkdtemp(prefix=f".{path.name}.staging-", dir=path.parent))
            except OSError as error:
                raise InputError(f"cannot write here: {error.strerror}", path=path) from None
        yield staging / path.name if file else staging
        with deferred_signals():
            _put_in_place(staging, path, file=file, owned=owned)
            _relocate_records(staging, target)
            done = True
    except WerestError as error:
        if staging is not None:
            _relocate_error(error, staging, target)
        raise
    finally:
        _discard(staging, created, done=done)


def _put_in_place(staging: Path, path: Path, *, file: bool, owned: Iterable[str]) -> None:
    """The staged outputs moved to ``path`` (:func:`staged_output`); a rename that fails puts
    back what the others moved, and is an InputError: the previous outputs stand."""
    try:
        if file:
            _move_entries(staging, path.parent, owned=(), new_kind={path.name: path})
        else:
            # the working folder (or one above it) is never renamed aside
            whole = not Path.cwd().resolve().is_relative_to(path.resolve())
            _replace_folder(staging, path, list(owned), whole=whole)
    except OSError as error:  # what was moved is back: the previous outputs stand
        raise InputError(
            f"cannot put the outputs in place: {error.strerror or error}; the previous "
            "outputs are as they were",
            path=path,
        ) from None


def _discard(staging: Path | None, created: list[Path], *, done: bool) -> None:
    """What :func:`staged_output` leaves behind: its staging folder (and, unless ``done``,
    the records of the files in it) and, after a failure, the parents it created."""
    with deferred_signals():
        if staging is not None:
            if not done:
                _forget_records(staging)
            shutil.rmtree(staging, ignore_errors=True)
        if not done:
            for folder in created:  # the deepest first
                try:
                    folder.rmdir()
                except OSError:
                    break


def _output_path(path: str | Path, *, file: bool) -> Path:
    """The place :func:`staged_output` writes: ``path``, resolved where it is ``.`` or ``..``
    or (a folder) a link, since a linked output folder is replaced where it is."""
    path = Path(path)
    if path.name in ("", ".", "..") or (not file and path.is_symlink()):
        path = path.resolve()
    return path


def check_output(path: str | Path, *, file: bool = False, owned: Iterable[str] = ()) -> None:
    """Refuse, in one line, an output :func:`staged_output` could not put in place: called
    with the same arguments before a command's work starts, so that a run never ends in
    "cannot write" after minutes or hours of work. (:func:`staged_output` checks again on
    entry, and the renames that put the outputs in place check exactly what they replace.)

    Refused: a folder output that is a file; a place whose nearest existing folder cannot be
    written (the staging folder goes beside the output); a previous output that could not be
    renamed aside or removed: immutable or append-only (``chattr +i``/``+a``; ``lsattr``
    shows it), or in a folder that is not writable. For a folder output, that folder and the
    entries of it that match ``owned`` (the names the command writes) are checked; for a
    one-file output, the file (or folder of parts) and its ``<name>.config.yaml``.
    """
    path = _output_path(path, file=file)
    if not file and path.is_file():
        raise InputError("is a file, expected a folder to write the outputs in", path=path)
    parent = next(p for p in (path.parent, *path.parent.parents) if os.path.lexists(p))
    if parent.is_dir() and not _writable(parent):
        raise InputError(f"cannot write here: {parent} is not writable", path=path)
    if file:
        replaced = [path, path.with_name(f"{path.name}.config.yaml")]
    elif path.is_dir():  # renamed aside whole, or its outputs replaced one by one
        if _locked(path):
            raise InputError(f"{_NOT_REPLACEABLE}it is {_LOCKED}", path=path)
        if not _writable(path):
            raise InputError(_NOT_REPLACEABLE + "it is a folder that is not writable", path=path)
        replaced = [e for e in path.iterdir() if _matches(e, owned)]
    else:
        replaced = []
    for entry in replaced:
        _check_removable(entry, path)


_NOT_REPLACEABLE = "cannot replace the previous output: "
_LOCKED = "immutable or append-only (lsattr shows the flag; chattr -i or -a clears it)"


def _check_removable(entry: Path, output: Path) -> None:
    """InputError naming ``output`` and the first path under ``entry`` (itself included)
    that could not be renamed aside or removed."""
    blocked = _unremovable(entry)
    if blocked is not None:
        what, why = blocked
        raise InputError(
            f"{_NOT_REPLACEABLE}{what if what != output else 'it'} is {why}", path=output
        )


def _unremovable(path: Path) -> tuple[Path, str] | None:
    """The first path under ``path`` (itself included) that could not be renamed aside or
    removed, and why; None when all of it can go (or ``path`` does not exist)."""
    if not os.path.lexists(path):
        return None
    if _locked(path):
        return path, _LOCKED
    if path.is_dir() and not path.is_symlink():
        try:
            entries = list(path.iterdir())
        except OSError as error:
            return path, f"unreadable ({error.strerror})"
        if entries and not _writable(path):
            return path, "a folder that is not writable"
        for entry in entries:
            blocked = _unremovable(entry)
            if blocked is not None:
                return blocked
    return None


def _writable(folder: Path) -> bool:
    """Whether entries can be added to and removed from ``folder`` (an immutable folder is
    not writable, even for root)."""
    return os.access(folder, os.W_OK | os.X_OK) and not _locked(folder)


#: FS_IMMUTABLE_FL and FS_APPEND_FL (linux/fs.h): a file or folder that cannot be renamed or
#: removed, even by root
_LINUX_LOCKED = 0x10 | 0x20
#: FS_IOC_GETFLAGS, _IOR('f', 1, long)
_FS_IOC_GETFLAGS = 0x80086601 if struct.calcsize("l") == 8 else 0x80046601


def _locked(path: Path) -> bool:
    """Whether ``path`` (a file or folder, not followed if a link) is immutable or
    append-only: the flags ``chattr +i``/``+a`` set on Linux (``chflags`` on BSD, macOS).
    False where the flags cannot be read (another file system, no permission to open)."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    flags = getattr(info, "st_flags", None)
    if flags is not None:  # BSD, macOS
        return bool(
            flags & (stat.UF_IMMUTABLE | stat.SF_IMMUTABLE | stat.UF_APPEND | stat.SF_APPEND)
        )
    if not sys.platform.startswith("linux") or not (
        stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)
    ):
        return False
    import fcntl

    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY)
    except OSError:
        return False
    try:
        raw = fcntl.ioctl(handle, _FS_IOC_GETFLAGS, bytes(8))
    except OSError:  # a file system without these flags
        return False
    finally:
        os.close(handle)
    return bool(struct.unpack("i", raw[:4])[0] & _LINUX_LOCKED)


def replace_folder(staging: Path, final: Path) -> None:
    """Rename the finished ``staging`` folder to ``final``, replacing a previous file or
    folder there whole (renamed aside, removed once the new one is in; put back if the
    rename fails), with SIGINT and SIGTERM held."""
    with deferred_signals():
        _replace_folder(staging, final, ["*"])


def _replace_folder(staging: Path, final: Path, owned: list[str], *, whole: bool = True) -> None:
    _usual_mode(staging, 0o777)  # mkdtemp makes 0700; outputs get the usual mode
    new = {entry.name for entry in staging.iterdir()}
    if final.is_dir():
        foreign = [e for e in final.iterdir() if e.name not in new and not _matches(e, owned)]
        if foreign or not whole:  # keep them: only the outputs are replaced
            _move_entries(staging, final, owned=owned)
            return
    _check_removable(final, final)  # all of it goes: nothing is moved if any of it cannot
    aside = _aside(final) if os.path.lexists(final) else None
    if aside is not None:
        os.replace(final, aside)
    try:
        os.replace(staging, final)
    except BaseException:
        if aside is not None:
            os.replace(aside, final)
        raise
    if aside is not None:
        _remove(aside)


def _move_entries(
    staging: Path, target: Path, *, owned: Iterable[str], new_kind: dict | None = None
) -> None:
    """Each entry of ``staging`` replaces its namesake in ``target``, and the entries of
    ``target`` matching ``owned`` are removed; all or nothing."""
    for entry in staging.iterdir() if new_kind is not None else ():
        if (target / entry.name).is_dir() and not entry.is_dir():
            shown = new_kind.get(entry.name, target / entry.name)
            raise InputError("is a folder, expected a file to write", path=shown)
    target.mkdir(parents=True, exist_ok=True)
    stale = [e for e in target.iterdir() if _matches(e, owned) and not e.name.startswith(".")]
    if not _writable(target):
        raise InputError(_NOT_REPLACEABLE + "it is a folder that is not writable", path=target)
    for entry in [*(target / e.name for e in staging.iterdir()), *stale]:
        _check_removable(entry, entry)  # nothing is moved if any of them cannot go
    moved: list[tuple[Path | None, Path | None, Path]] = []  # (new at, old aside, name)
    try:
        for entry in sorted(staging.iterdir()):
            place = target / entry.name
            aside = _aside(place) if os.path.lexists(place) else None
            if aside is not None:
                os.replace(place, aside)
            moved.append((None, aside, place))
            os.replace(entry, place)
            moved[-1] = (place, aside, place)
        for entry in stale:
            if os.path.lexists(entry) and entry.name not in {m[2].name for m in moved}:
                aside = _aside(entry)
                os.replace(entry, aside)
                moved.append((None, aside, entry))
    except BaseException:
        for new, aside, place in reversed(moved):
            if new is not None:
                _remove(new)
            if aside is not None:
                os.replace(aside, place)
        raise
    for _, aside, _ in moved:
        if aside is not None:
            _remove(aside)


def _matches(entry: Path, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(entry.name, pattern) for pattern in patterns)


def _aside(path: Path) -> Path:
    """A free hidden name beside ``path`` to rename it to while its replacement goes in."""
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.old-", dir=path.parent)
    os.close(handle)
    os.unlink(name)
    return Path(name)


def _remove(path: Path) -> None:
    """Remove a previous output renamed aside; one that cannot be removed (checked before,
    so changed meanwhile) is said in a warning, not left unseen."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    except OSError as error:
        logging.getLogger(__name__).warning(
            "the previous output could not be removed (%s): it is left at %s",
            error.strerror,
            path,
        )


def _usual_mode(path: Path, mode: int) -> None:
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, mode & ~umask)


def _relocate_error(error: WerestError, staging: Path, target: Path) -> None:
    """An error naming a staged file names its final place (the user never sees staging)."""

    def moved(text: str) -> str:
        inside = "" if str(target) == "." else str(target / "_")[:-1]  # "target/"
        text = text.replace(str(staging / "_")[:-1], inside)
        return text.replace(str(staging), str(target))

    if error.path is not None:
        error.path = moved(error.path)
    error.message = moved(error.message)
    error.args = (str(error),)


def first_line(error: BaseException) -> str:
    """The first non-blank line of an exception's message (or its class name)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


def write_json(value, path: Path) -> None:
    """``value`` as indented JSON at ``path``, atomically (numpy scalars and paths as
    :func:`json_default` turns them)."""
    import json

    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(value, indent=2, default=json_default), encoding="utf-8")


def write_text(text: str, path: Path) -> None:
    """``text`` at ``path`` as UTF-8, atomically (a report, a page)."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def json_default(value):
    """``json.dumps(default=...)`` for numpy scalars and paths (cards, summaries)."""
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def save_figure(fig, path: str | Path, *, dpi: int = 110) -> Path:
    """Write a matplotlib :class:`~matplotlib.figure.Figure` as PNG, atomically.

    Figures are built with ``Figure()`` (the object API), never through ``pyplot``: the library
    must not switch the backend of a notebook that imports it, nor keep figures alive in
    pyplot's registry.
    """
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=dpi, format="png")
    return Path(path)


def write_csvs(output_dir: str | Path, name: str, frames: dict) -> list[Path]:
    """Each DataFrame of ``frames`` (suffix -> frame) as ``<name>_<suffix>.csv`` in
    ``output_dir`` (created), atomically, floats to 6 significant digits; their paths."""
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for suffix, frame in frames.items():
        path = output_dir / f"{name}_{suffix}.csv"
        with atomic_path(path) as tmp:
            write_csv(frame, tmp)
        paths.append(path)
    return paths


def write_report(output_dir: str | Path, name: str, frames: dict, markdown: str) -> list[Path]:
    """An evaluation's report: each DataFrame of ``frames`` as ``<name>_<suffix>.csv``
    (:func:`write_csvs`), then ``markdown`` as ``<name>.md``, in ``output_dir``; their paths."""
    paths = write_csvs(output_dir, name, frames)
    path = Path(output_dir) / f"{name}.md"
    write_text(markdown, path)
    return [*paths, path]
