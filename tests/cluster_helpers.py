"""Helpers for tests on a real Dask LocalCluster (import after ``importorskip("distributed")``)."""

from __future__ import annotations

import os

import distributed


class KillOnce(distributed.WorkerPlugin):
    """Kills the worker process that starts the first task of ``function`` (once: a marker
    file remembers it), while the task runs: a real lost worker, not a raised exception."""

    def __init__(self, marker: str, function: str) -> None:
        self.marker = marker
        self.function = function

    def transition(self, key, start, finish, **kwargs):
        if finish == "executing" and self.function in str(key):
            try:
                fd = os.open(self.marker, os.O_CREAT | os.O_EXCL)
            except FileExistsError:
                return
            os.close(fd)
            os._exit(1)
