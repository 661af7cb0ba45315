"""werest's log lines and progress bars: one format for the CLI and for the child processes a
run starts.

A spawned child (:mod:`werest.partition.estimate`) starts with logging unconfigured, so its INFO
lines (e.g. "rows with a null hypothesis dropped") would be lost; it calls :func:`setup` with
the parent's level first.

Every stage a person waits on (reading, features, the model's predictions, the bootstrap,
writing, transcribing, embedding, evaluating) runs in :func:`stage`: a progress bar on stderr
(tqdm's, shown only when stderr is a terminal) and, at INFO, one line with its duration
("features: 3.2 s"). The ``progress=false`` setting turns every bar off through
:func:`set_progress`, which sets :data:`PROGRESS_ENV` so the child processes of a run inherit
it; a library user can set that variable (``WEREST_PROGRESS=0``) too. :func:`parallel_map` runs
chunks of work in joblib workers under such a bar.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

FORMAT = "%(levelname)s %(name)s: %(message)s"
#: "0" (or false, no, off) turns werest's progress bars off; anything else leaves them on
PROGRESS_ENV = "WEREST_PROGRESS"

log = logging.getLogger("werest")


def setup(level: int | str, *, progress: bool | None = None) -> None:
    """Log ``level`` and above to stderr in werest's format (``level``: a number or a name);
    ``progress``: turn the progress bars on or off (None: leave them as they are)."""
    if isinstance(level, str):
        level = getattr(logging, level.upper(), logging.INFO)
    logging.basicConfig(level=level, format=FORMAT, stream=sys.stderr, force=True)
    if progress is not None:
        set_progress(progress)


def current_level() -> int:
    """The root logger's level: what a child process should log."""
    return logging.getLogger().level


def set_progress(on: bool) -> None:
    """Show progress bars (on a terminal) or never; child processes started afterwards
    inherit the choice through :data:`PROGRESS_ENV`."""
    os.environ[PROGRESS_ENV] = "1" if on else "0"


def progress_on() -> bool:
    """Whether progress bars may be shown (they still are only when stderr is a terminal)."""
    return os.environ.get(PROGRESS_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def bars_shown() -> bool:
    """Whether a progress bar shows now: progress is on and stderr is a terminal."""
    try:
        return progress_on() and sys.stderr.isatty()
    except (AttributeError, ValueError):  # no stderr, or a closed one
        return False


def bar(
    iterable: Iterable | None = None,
    *,
    desc: str,
    total: float | None = None,
    unit: str = "it",
    disable: bool | None = None,
    **options: Any,
):
    """A tqdm progress bar on stderr: off with ``progress=false`` (:func:`progress_on`) or
    ``disable=True``, and off when stderr is not a terminal (tqdm's ``disable=None``)."""
    from tqdm.auto import tqdm

    off = True if disable or not progress_on() else None
    return tqdm(iterable, desc=desc, total=total, unit=unit, disable=off, **options)


@contextmanager
def stage(name: str, *, total: float | None = None, unit: str = "it") -> Iterator[Any]:
    """Run a stage a person waits on: yields its progress bar (``bar.update(n)`` as work is
    done; a stage of one blocking call leaves it alone and its elapsed time still ticks) and,
    when the stage ends without an error, logs ``"<name>: <seconds> s"`` at INFO."""
    start = time.perf_counter()
    shape = {} if total is not None else {"bar_format": "{desc}: {elapsed}"}  # one long call
    with bar(desc=name, total=total, unit=unit, leave=False, **shape) as progress:
        stop = threading.Event()
        ticker = None
        if not progress.disable:  # refresh the elapsed time while one long call blocks
            ticker = threading.Thread(target=_tick, args=(progress, stop), daemon=True)
            ticker.start()
        try:
            yield progress
        finally:
            stop.set()
            if ticker is not None:
                ticker.join()
    log.info("%s: %.1f s", name, time.perf_counter() - start)


def track(
    iterable: Iterable, *, desc: str, unit: str = "it", total: float | None = None
) -> Iterator[Any]:
    """The items of ``iterable``, run as the :func:`stage` ``desc``: a bar that advances by one
    per item and, once every item is done, the stage's time at INFO."""
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)
    with stage(desc, total=total, unit=unit) as progress:
        for item in iterable:
            yield item
            progress.update(1)


def _tick(progress, stop: threading.Event, every: float = 0.5) -> None:
    while not stop.wait(every):
        progress.refresh()


def chunked(*lists: list, size: int) -> Iterator[tuple[list, ...]]:
    """The equal-length ``lists`` cut together into chunks of ``size`` items (the last one
    shorter): the chunks :func:`parallel_map` runs."""
    for start in range(0, len(lists[0]), size):
        yield tuple(values[start : start + size] for values in lists)


def parallel_map(
    function: Callable,
    chunks: list[tuple],
    n_jobs: int,
    *,
    desc: str | None = None,
    shared: Callable | None = None,
    **kwargs,
) -> list:
    """``[function(*chunk, **kwargs) for chunk in chunks]``, in joblib workers when
    ``n_jobs != 1`` and there is more than one chunk, else by ``shared`` when given (``shared(
    call, chunks)`` yields ``call(chunk)`` in order: :func:`werest.forked.shared_map` with its
    helpers) or here; with ``desc``, a progress bar over the chunks on a terminal (tqdm leaves
    it out when stderr is not one)."""
    if n_jobs == 1 and shared is not None and len(chunks) >= 2:
        results = shared(partial(_star, function, kwargs), chunks)
    elif n_jobs == 1 or len(chunks) < 2:
        results = (function(*chunk, **kwargs) for chunk in chunks)
    else:
        from joblib import Parallel, delayed

        results = Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(function)(*chunk, **kwargs) for chunk in chunks
        )
    progress = bar(results, total=len(chunks), desc=desc or "", unit="chunk", disable=not desc)
    return list(progress)


def _star(function: Callable, kwargs: dict, chunk: tuple):
    return function(*chunk, **kwargs)
