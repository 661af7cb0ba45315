"""Independent items of work shared with a forked helper process (the machine's second core).

A run that estimates a table the cache has not seen (the label loop's first round:
``werest sample strategy=winner``, ``werest estimate``) normalises every distinct hypothesis
and builds every utterance's features, chunk by chunk: items that do not depend on each other
and take seconds on a big table, while ``n_jobs=1`` (the default) leaves a second core idle.
:func:`shared_map` forks helper processes that take items alongside this one:

* fork, not spawn: a helper starts in milliseconds with everything imported and the items in
  memory (copy-on-write); only its results travel back, pickled, through a queue. (A
  ``joblib`` pool, which ``n_jobs=2`` starts, spends about a second importing werest in each
  worker, more than a table of 5,000 utterances takes.)
* This process and the helpers take the items in order from one shared counter, so whoever is
  free takes the next; ``first`` runs here while the helpers start (the model's payload, read
  while they build the first chunks). The results are yielded in the items' order, whoever
  computed them, and are what ``map(function, items)`` gives.
* An item a helper fails on is computed here, so its error is raised here as the serial run
  raises it; a helper that dies, or sends nothing for a long while (:data:`STALL_SECONDS`, or
  several times the slowest item seen), has its items computed here and is stopped. A run
  stopped early (an error, Ctrl-C) stops the helpers; Ctrl-C itself is left to this process.

:func:`helper_count` says when it pays: a table of at least :data:`HELPER_ROWS` rows, a core
free enough (:data:`SPARE_CORES`, by the load average), on Linux
(fork's platform; a helper runs werest's Python, numpy, pandas and rapidfuzz work, never a
model's OpenMP prediction, which a process forked after OpenMP threads started cannot run),
with at least two cores this process may run on (its CPU affinity: ``taskset -c 0 werest
...`` keeps a run in one process). The helpers change how, never what, is computed: the
estimate cache's key leaves them out.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import pickle
import queue
import signal
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

#: the fewest rows (transcripts) a run shares with a helper: the work is about 0.1 ms a row,
#: a helper costs tens of milliseconds (the fork, the results' return)
HELPER_ROWS = 20_000
#: the share of a core other work must leave free for a helper: on a loaded machine a helper
#: gains little or nothing (where Linux shares the CPU between sessions or cgroups, not
#: processes, as autogroup does, a run's helper takes its time from the run itself) and
#: costs its fork and its results' return
SPARE_CORES = 0.5
#: how long this process waits for a helper that sends nothing, at least, before it computes
#: the helper's items itself (a safeguard: a helper is not expected to hang)
STALL_SECONDS = 120.0
#: and at least this many times the slowest item seen (here or in a helper)
STALL_FACTOR = 4.0


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity), else the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def spare_cores() -> float:
    """The cores other work leaves to this process, by the 1-minute load average (this
    process counted as one runnable task): ``available_cores() - max(load, 1)``."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover - no load average: none spare
        return 0.0
    return available_cores() - max(load, 1.0)


def helper_count(n_jobs: int, rows: int) -> int:
    """Helpers for a run of ``rows`` rows with ``n_jobs`` worker processes: one when
    ``n_jobs`` is 1 (more ask for a joblib pool), the table has :data:`HELPER_ROWS` rows or
    more, the platform is Linux and at least :data:`SPARE_CORES` of another core is free
    (:func:`spare_cores`, as ``make -l`` starts no job on a loaded machine); else none."""
    if n_jobs != 1 or rows < HELPER_ROWS or not sys.platform.startswith("linux"):
        return 0
    if "fork" not in multiprocessing.get_all_start_methods():  # pragma: no cover - Linux has it
        return 0
    return 1 if available_cores() >= 2 and spare_cores() >= SPARE_CORES else 0


def shared_map(
    function: Callable[[Any], Any],
    items: Sequence,
    *,
    helpers: int = 1,
    first: Callable[[], Any] | None = None,
) -> Iterator[Any]:
    """``function(item)`` of each item, yielded in order, the items shared between this
    process and ``helpers`` forked processes (none, or fewer than two items: all here).
    ``first`` runs here before this process takes any item."""
    if helpers < 1 or len(items) < 2:
        if first is not None:
            first()
        yield from map(function, items)
        return
    yield from _Shared(function, items, min(helpers, len(items) - 1)).run(first)


class _Shared:
    """One :func:`shared_map` call: the counter, the queue, the helpers and the results."""

    def __init__(self, function: Callable, items: Sequence, helpers: int) -> None:
        context = multiprocessing.get_context("fork")
        self.function, self.items, self.n = function, items, len(items)
        self.counter = context.Value("q", 0)
        self.queue = context.Queue()
        for stream in (sys.stdout, sys.stderr):  # nothing buffered here is written twice
            with contextlib.suppress(Exception):
                stream.flush()
        self.helpers = [
            context.Process(target=self._help, name=f"werest-helper-{i}", daemon=True)
            for i in range(helpers)
        ]
        self.results: dict[int, Any] = {}
        self.done_here: set[int] = set()
        self.slowest = 0.0

    def run(self, first: Callable[[], Any] | None) -> Iterator[Any]:
        # the objects made so far are left out of the helpers' garbage collections, which would
        # otherwise touch (and so copy) every page of them; this process collects as before
        gc.freeze()
        try:
            with warnings.catch_warnings():  # Python 3.12 warns of a fork in a threaded process
                warnings.filterwarnings(
                    "ignore", "This process .*multi-threaded", DeprecationWarning
                )
                for helper in self.helpers:
                    helper.start()
        finally:
            gc.unfreeze()
        try:
            if first is not None:
                first()
            following = 0  # the next item to yield
            while (item := self._take()) < self.n:
                self._compute(item)
                self._receive(wait=False)
                while following in self.results:
                    yield self.results.pop(following)
                    following += 1
            last_heard = time.monotonic()
            while following < self.n:
                if following in self.results:
                    yield self.results.pop(following)
                    following += 1
                elif self._receive(wait=True):
                    last_heard = time.monotonic()
                elif self._stalled(last_heard):  # a helper died, or hangs: its items here
                    self._stop()
                    for missing in range(following, self.n):
                        if missing not in self.results and missing not in self.done_here:
                            self._compute(missing)
        finally:
            self._stop()

    def _take(self) -> int:
        with self.counter.get_lock():
            item = self.counter.value
            self.counter.value = item + 1
        return item

    def _compute(self, item: int) -> None:
        start = time.monotonic()
        self.results[item] = self.function(self.items[item])
        self.done_here.add(item)
        self.slowest = max(self.slowest, time.monotonic() - start)

    def _receive(self, *, wait: bool) -> bool:
        """Take the helpers' messages (at most a short wait for one); whether any came."""
        got = False
        while True:
            try:
                if wait and not got:
                    message = self.queue.get(timeout=0.1)
                else:
                    message = self.queue.get_nowait()
            except queue.Empty:
                return got
            got = True
            kind, item, payload, seconds = message
            self.slowest = max(self.slowest, seconds)
            if kind == "failed":  # computed here: its error, if any, raised as serially
                if item not in self.results:
                    self._compute(item)
            elif kind == "item" and item not in self.results and item not in self.done_here:
                self.results[item] = pickle.loads(payload)

    def _stalled(self, last_heard: float) -> bool:
        if all(not helper.is_alive() for helper in self.helpers):
            self._receive(wait=False)  # what they sent before they ended
            return True
        return time.monotonic() - last_heard > max(STALL_SECONDS, STALL_FACTOR * self.slowest)

    def _stop(self) -> None:
        for helper in self.helpers:
            if helper.is_alive():
                helper.terminate()
        for helper in self.helpers:
            if helper.pid is not None:
                helper.join(timeout=5)
        self.queue.close()
        self.queue.join_thread()

    def _help(self) -> None:
        """A helper's life: the next item until there is none, each result sent back."""
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is this process's to handle
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # and _stop's terminate ends it at once
        while (item := self._take()) < self.n:
            start = time.monotonic()
            try:
                payload = pickle.dumps(self.function(self.items[item]), pickle.HIGHEST_PROTOCOL)
            except BaseException:  # computed again by the parent, which raises its error
                self.queue.put(("failed", item, None, time.monotonic() - start))
                break
            self.queue.put(("item", item, payload, time.monotonic() - start))
        self.queue.put(("done", -1, None, 0.0))
