"""Copy result sections into the README, so its numbers are regenerated, never hand-copied.

    python experiments/readme_blocks.py

Each block of the README between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` listed in
:data:`BLOCKS` is replaced by the named sections (``## Heading`` to the next ``## ``) of a
file under ``experiments/results/`` that a committed script or command wrote.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "experiments" / "results"

#: block name -> (results file, its sections to copy, the sentence that says where from)
BLOCKS = {
    "few-labels-measured": (
        "few_labels.md",
        ["## Headline", "## Issue 24's bars at n = 50"],
        "From `experiments/results/few_labels.md`, written by "
        "`werest evaluate experiment=few_labels` (copied here by "
        "`python experiments/readme_blocks.py`).",
    ),
}


def section(text: str, heading: str) -> str:
    """The body of ``heading`` (up to the next ``## `` heading), heading demoted to bold."""
    start = text.index(heading + "\n")
    rest = text[start + len(heading) + 1 :]
    end = rest.find("\n## ")
    body = rest if end < 0 else rest[:end]
    return f"**{heading.removeprefix('## ')}**\n{body.rstrip()}\n"


def main() -> None:
    readme_path = REPO / "README.md"
    readme = readme_path.read_text(encoding="utf-8")
    for name, (file, headings, source) in BLOCKS.items():
        text = (RESULTS / file).read_text(encoding="utf-8")
        start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
        head, rest = readme.split(start, 1)
        tail = rest.split(end, 1)[1]
        body = "\n".join(section(text, h) for h in headings)
        readme = f"{head}{start}\n{body}\n{source}\n{end}{tail}"
    readme_path.write_text(readme, encoding="utf-8")


if __name__ == "__main__":
    main()
