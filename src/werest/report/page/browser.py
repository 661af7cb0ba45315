"""The page in a real browser: Debian's headless chromium dumps its DOM, measures its tabs
and takes screenshots (the tests and the experiments check the page with it)."""

from __future__ import annotations

import html
from pathlib import Path

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
)


def chromium(page: Path, *arguments: str, tab: str | None = None, timeout: float = 120.0) -> str:
    """Run Debian's headless ``chromium`` on ``page`` (a throw-away profile); its stdout.

    Used to check the page in a real browser: ``--screenshot=PNG`` or ``--dump-dom`` (the DOM
    after the page's scripts ran). ``tab`` (``tab-fairness``...) opens that tab
    (``page.html#tab-fairness``).
    """
    import shutil
    import subprocess
    import tempfile

    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        raise FileNotFoundError("chromium is not installed (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="werest-chromium-") as profile:
        done = subprocess.run(
            [
                binary,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                *arguments,
                Path(page).resolve().as_uri() + (f"#{tab}" if tab else ""),
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(f"chromium failed ({done.returncode}): {done.stderr[-500:]}")
    return done.stdout


#: appended to a page by :func:`measure_tabs`: shows each tab in turn and writes the sizes
MEASURE_SCRIPT = """<script>
window.addEventListener('load', function () {
  setTimeout(function () {
    var tabs = {};
    var sections = document.querySelectorAll('section.tab');
    sections.forEach(function (s) {
      sections.forEach(function (t) { t.style.display = (t === s) ? 'block' : 'none'; });
      var boxes = 0;
      s.querySelectorAll('.box').forEach(function (b) {
        if (b.scrollWidth > b.clientWidth + 1) boxes += 1; });
      tabs[s.id] = {width: document.documentElement.scrollWidth,
                    height: document.documentElement.scrollHeight, scrolling_tables: boxes};
    });
    var out = document.createElement('pre');
    out.id = 'measure';
    out.textContent = JSON.stringify({viewport: window.innerWidth, tabs: tabs});
    document.body.appendChild(out);
  }, 100);
});
</script></body>"""


def measure_tabs(page: Path, width: int = 1280) -> dict:
    """How ``page`` lays out in headless chromium at ``width`` px: ``{"viewport": px, "tabs":
    {tab id: {"width", "height", "scrolling_tables"}}}``, each tab shown on its own (the
    document's scroll width and height, and how many tables scroll inside their own box)."""
    import json
    import re

    probe = Path(page).with_name(f".measure-{Path(page).name}")
    probe.write_text(Path(page).read_text(encoding="utf-8").replace("</body>", MEASURE_SCRIPT))
    try:
        dom = chromium(
            probe, "--dump-dom", f"--window-size={width},900", "--virtual-time-budget=5000"
        )
    finally:
        probe.unlink()
    found = re.search(r'<pre id="measure">(.*?)</pre>', dom)
    if found is None:
        raise RuntimeError(f"{page}: the measuring script did not run")
    return json.loads(html.unescape(found.group(1)))


def screenshot(
    page: Path, png: Path, width: int = 1400, height: int = 1800, tab: str | None = None
) -> Path:
    """A PNG screenshot of ``page`` (at ``tab``) as headless chromium renders it."""
    chromium(
        page,
        f"--screenshot={Path(png).resolve()}",
        f"--window-size={width},{height}",
        "--virtual-time-budget=5000",  # the charts drawn and the load handlers run
        tab=tab,
    )
    return png
