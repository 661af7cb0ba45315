"""Resource use of a run: CPU %, resident memory, peak memory and, where NVML exists, GPU.

ASR evaluation write-ups report what a system costs besides its speed: CPU load, memory and
GPU memory/utilisation. :class:`ResourceMonitor` measures this process (and its children,
where a backend forks workers) while a block runs:

* ``cpu_percent``: CPU seconds (user + system, this process and its children) over wall-clock
  seconds × 100; 100 = one core busy the whole time, 200 = two;
* ``rss_mb_mean`` / ``rss_mb_peak``: resident memory sampled every ``interval`` seconds by a
  background thread and at every :meth:`ResourceMonitor.sample` call (the transcription loop
  samples after each chunk, so a short run is measured too);
* ``peak_memory_mb``: the operating system's high-water mark of the process's resident memory
  (``getrusage`` ``ru_maxrss``), which no sampling can miss but which covers the whole process
  lifetime, not only the block;
* with ``nvidia-ml-py`` installed and an NVIDIA driver present: ``gpu_memory_mb_peak`` (device
  memory in use, all processes) and ``gpu_utilization_mean`` (%), per device summed / averaged.
  Without NVML these keys are absent (not zero: unknown is not idle).

``werest transcribe`` stores the summary in ``<out>.rtfx.json``; ``werest score`` and
``werest estimate`` write it to ``<output_dir>/resources.json`` (:func:`write_resources`),
with, for a partitioned run, the seconds of its stages and its partitions (what every
stage's run reports of itself: :class:`StageRun`).

psutil is the field's library for this (a werest dependency); ``pynvml`` (the
``nvidia-ml-py`` distribution, extra ``[gpu]``) is imported only when present.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

MB = 1024.0 * 1024.0


class _Gpu:
    """NVML handles of every device, or nothing when NVML is unavailable."""

    def __init__(self) -> None:
        self.handles: list = []
        self.nvml = None
        try:
            import pynvml

            pynvml.nvmlInit()
            self.nvml = pynvml
            self.handles = [
                pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())
            ]
        except Exception as error:  # no package, no driver, no device: all mean "no GPU data"
            log.debug("NVML unavailable: %s", error)
            self.handles = []

    def read(self) -> tuple[float, float] | None:
        """(memory in use MB summed over devices, mean utilisation %), or None."""
        if not self.handles:
            return None
        memory = sum(self.nvml.nvmlDeviceGetMemoryInfo(h).used for h in self.handles) / MB
        busy = [self.nvml.nvmlDeviceGetUtilizationRates(h).gpu for h in self.handles]
        return memory, sum(busy) / len(busy)

    def close(self) -> None:
        if self.nvml is not None:
            # shutting down a half-initialised NVML is harmless
            with contextlib.suppress(Exception):
                self.nvml.nvmlShutdown()


class ResourceMonitor:
    """Context manager measuring this process's CPU, memory and GPU use while a block runs.

    Parameters
    ----------
    interval : seconds between background samples (memory and GPU).
    """

    def __init__(self, interval: float = 0.5) -> None:
        self.interval = interval
        self._rss: list[float] = []
        self._gpu: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.summary: dict[str, Any] = {}

    def __enter__(self) -> ResourceMonitor:
        import psutil

        self._process = psutil.Process()
        self._device = _Gpu()
        self._wall = time.perf_counter()
        self._cpu = self._cpu_seconds()
        self.sample()
        self._thread = threading.Thread(target=self._run, name="werest-resources", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.sample()
        self.summary = self._summarise()
        self._device.close()

    def sample(self) -> None:
        """Record resident memory (and GPU use) now."""
        rss = self._process.memory_info().rss / MB
        gpu = self._device.read()
        with self._lock:
            self._rss.append(rss)
            if gpu is not None:
                self._gpu.append(gpu)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.sample()
            except Exception as error:  # a failed sample must never stop a transcription
                log.debug("resource sample failed: %s", error)

    def _cpu_seconds(self) -> float:
        times = self._process.cpu_times()
        return times.user + times.system + times.children_user + times.children_system

    def _summarise(self) -> dict[str, Any]:
        wall = time.perf_counter() - self._wall
        cpu = self._cpu_seconds() - self._cpu
        summary: dict[str, Any] = {
            "wall_seconds": round(wall, 3),
            "cpu_seconds": round(cpu, 3),
            "cpu_percent": round(100.0 * cpu / wall, 1) if wall > 0 else None,
            "rss_mb_mean": round(sum(self._rss) / len(self._rss), 1),
            "rss_mb_peak": round(max(self._rss), 1),
            "peak_memory_mb": _peak_memory_mb(),
        }
        if self._gpu:
            summary["gpu_memory_mb_peak"] = round(max(m for m, _ in self._gpu), 1)
            summary["gpu_utilization_mean"] = round(
                sum(u for _, u in self._gpu) / len(self._gpu), 1
            )
        return summary


def _peak_memory_mb() -> float | None:
    """The process's lifetime peak resident memory (Linux reports ru_maxrss in KiB)."""
    try:
        import resource
        import sys

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return round(peak / (MB if sys.platform == "darwin" else 1024.0), 1)
    except (ImportError, OSError):  # Windows has no resource module
        return None


def available_memory() -> int | None:
    """Bytes this process may still allocate: the memory the system has available (psutil),
    or less where a cgroup (a container's limit) leaves less; None when unknown."""
    amounts = []
    try:
        import psutil

        amounts.append(int(psutil.virtual_memory().available))
    except (ImportError, OSError):
        pass
    try:  # cgroup v2: the container's limit minus what it uses now
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit != "max":
            used = int(Path("/sys/fs/cgroup/memory.current").read_text().strip())
            amounts.append(max(0, int(limit) - used))
    except (OSError, ValueError):
        pass
    return min(amounts) if amounts else None


@dataclass(kw_only=True)
class StageRun:
    """What a stage's run (``werest estimate``'s, ``score``'s, ``features``', ``leaderboard``'s)
    says of itself besides its outputs: the input's rows, the partitions they ran in (1 in
    memory) and each stage's wall seconds."""

    n_rows: int
    n_partitions: int
    seconds: dict[str, float]

    @property
    def resources(self) -> dict[str, Any]:
        """What a partitioned run adds to its ``resources.json``: its stages' seconds and its
        partitions."""
        return {"stage_seconds": self.seconds, "partitions": self.n_partitions}


def write_resources(summary: dict[str, Any], path: Path) -> Path:
    """A run's resource summary as JSON (``werest score``/``estimate``: ``resources.json``)."""
    import json

    from werest.io import atomic_path

    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return path
