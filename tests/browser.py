"""Driving Debian's headless chromium from Python (playwright, the [test] extra), and the
small WAV files a page's players load: for the transcription page's browser test and its
screenshot (experiments/sheet_page_screenshot.py).

playwright never downloads a browser here (no ``playwright install``): it launches the
system's chromium, which the Makefile apt-gets, with the flags the leaderboard page's checks
use (:data:`werest.report.page.browser.CHROMIUM_FLAGS`) and no network of its own."""

from __future__ import annotations

import contextlib
import math
import shutil
import struct
import wave
from collections.abc import Iterator
from pathlib import Path

from werest.report.page.browser import CHROMIUM_FLAGS

#: beyond the leaderboard's flags: no QUIC probing either
EXTRA_FLAGS = ("--disable-quic",)


def chromium_binary() -> str | None:
    """Debian's chromium, or None when it is not installed."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None and Path("/usr/bin/chromium").is_file():
        found = "/usr/bin/chromium"
    return found


@contextlib.contextmanager
def playwright_chromium() -> Iterator:
    """A playwright ``Browser`` on the system's headless chromium, closed on exit."""
    from playwright.sync_api import sync_playwright

    binary = chromium_binary()
    if binary is None:
        raise FileNotFoundError("chromium is not installed (apt-get install chromium)")
    with sync_playwright() as driver:
        browser = driver.chromium.launch(
            executable_path=binary, args=[*CHROMIUM_FLAGS, *EXTRA_FLAGS]
        )
        try:
            yield browser
        finally:
            browser.close()


def write_tone(path: Path, seconds: float, hertz: float = 440.0, rate: int = 8000) -> Path:
    """A mono 16-bit PCM WAV of a sine tone (the standard ``wave`` module), its folders made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frames = b"".join(
        struct.pack("<h", int(6000 * math.sin(2 * math.pi * hertz * k / rate)))
        for k in range(round(seconds * rate))
    )
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(frames)
    return path
