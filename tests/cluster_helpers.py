"""Helpers for tests on a real Dask LocalCluster (import after ``importorskip("distributed")``)."""

from __future__ import annotations

import os

import distributed


class KillOnce(distributed.WorkerPlugin):
    """Kills the worker process that starts the first task of ``function`` (once: a marker
    file remembers it), while the task runs: a real lost worker, not a raised exception.
    With ``holding``, only a worker that holds a result whose key contains it (the shared
    context werest sends every task): the worker whose death would lose it."""

    def __init__(self, marker: str, function: str, holding: str | None = None) -> None:
        self.marker = marker
        self.function = function
        self.holding = holding

    def setup(self, worker):
        self.worker = worker

    def _holds(self) -> bool:
        return self.holding is None or any(self.holding in str(k) for k in self.worker.data)

    def transition(self, key, start, finish, **kwargs):
        if finish == "executing" and self.function in str(key) and self._holds():
            try:
                fd = os.open(self.marker, os.O_CREAT | os.O_EXCL)
            except FileExistsError:
                return
            os.close(fd)
            os._exit(1)
