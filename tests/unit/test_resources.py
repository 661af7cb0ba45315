"""ResourceMonitor: CPU seconds, resident and peak memory of this process, GPU only with NVML."""

from __future__ import annotations

import mmap

import numpy as np
import pytest

from werest.resources import ResourceMonitor


def test_memory_growth_is_seen_by_the_samples():
    # An anonymous mmap always takes fresh pages from the OS. A numpy array would come from the
    # allocator, which inside a long test process may hand back pages that are already resident
    # (CI saw 115 MB of growth for a 200 MB array that way).
    size = 200 * 1024 * 1024
    with ResourceMonitor(interval=60) as monitor:  # only the explicit samples count here
        block = mmap.mmap(-1, size)
        np.frombuffer(block, dtype=np.uint8)[:] = 1  # every page written
        monitor.sample()
        block.close()
    summary = monitor.summary
    assert summary["rss_mb_peak"] - min(monitor._rss) >= 150
    assert summary["rss_mb_mean"] <= summary["rss_mb_peak"]
    assert summary["peak_memory_mb"] >= summary["rss_mb_peak"] - 1  # the OS high-water mark


def test_cpu_percent_is_cpu_over_wall_time():
    with ResourceMonitor(interval=60) as monitor:
        matrix = np.random.default_rng(0).random((300, 300))
        for _ in range(20):
            matrix = np.linalg.qr(matrix)[0]
    summary = monitor.summary
    assert summary["cpu_seconds"] > 0
    expected = 100 * summary["cpu_seconds"] / summary["wall_seconds"]
    # cpu_seconds and wall_seconds are rounded to 1 ms: on a ~0.1 s run that alone moves the
    # ratio by ~1 %, so compare relatively.
    assert summary["cpu_percent"] == pytest.approx(expected, rel=0.02, abs=0.2)


def test_gpu_keys_only_with_nvml():
    try:
        import pynvml

        pynvml.nvmlInit()
        has_gpu = pynvml.nvmlDeviceGetCount() > 0
    except Exception:
        has_gpu = False
    with ResourceMonitor(interval=60) as monitor:
        pass
    assert ("gpu_memory_mb_peak" in monitor.summary) == has_gpu
    assert ("gpu_utilization_mean" in monitor.summary) == has_gpu
