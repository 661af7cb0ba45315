"""Copy measured results into the README and docs, so their numbers are regenerated, never
hand-copied.

    python experiments/readme_blocks.py

Each block between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` in ``README.md`` or
``docs/*.md`` whose NAME is in :data:`BLOCKS` is replaced by the named sections (``## Heading``
to the next heading of any level) of a file under ``experiments/results/`` that a committed
script or command wrote, or, for a block without headings, by the text between the same
markers in that file. ``tests/unit/test_readme.py`` checks that every block equals what this script
writes and that the README quotes no measured number outside a block.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "experiments" / "results"

#: block name -> (results file, its sections to copy (None: its own block), where it is from)
BLOCKS: dict[str, tuple[str, list[str] | None, str]] = {
    "lodo-bar": (
        "lodo_panel_8.md",
        ["## The bar"],
        "From [`lodo_panel_8.md`](experiments/results/lodo_panel_8.md), written by "
        "`python experiments/lodo_panel.py` (`werest evaluate experiment=lodo` with the held-out "
        "systems compared with a panel of 8, as `werest estimate` compares them).",
    ),
    "few-labels-headline": (
        "few_labels.md",
        ["## Headline"],
        "From [`few_labels.md`](experiments/results/few_labels.md), written by "
        "`werest evaluate experiment=few_labels`; every budget, domain and interval method "
        "is there.",
    ),
    "few-labels-example": ("few_labels_example.md", None, ""),
    "few-labels-bars": (
        "few_labels.md",
        ["## The bars at n = 50"],
        "From [`few_labels.md`](experiments/results/few_labels.md), written by "
        "`werest evaluate experiment=few_labels`.",
    ),
    "few-labels-stress": (
        "few_labels.md",
        ["## Heavy-tail stress set", "## Long-tail stress set"],
        "From [`few_labels.md`](experiments/results/few_labels.md), written by "
        "`werest evaluate experiment=few_labels`.",
    ),
    "leaderboard-dighr": (
        "leaderboard_shared.md",
        ["## All multi-vendor folders, shipped model (in-sample)"],
        "From [`leaderboard_shared.md`](experiments/results/leaderboard_shared.md), written by "
        "`python experiments/leaderboard_shared.py`.",
    ),
    "bench-systems-growth": (
        "bench_systems.md",
        ["## LibriSpeech test-clean, S systems × N utterances", "## Growth exponents"],
        "From [`bench_systems.md`](experiments/results/bench_systems.md), written by "
        "`python experiments/bench_systems.py`.",
    ),
    "bench-systems-afrispeech": (
        "bench_systems.md",
        ["## AfriSpeech"],
        "From [`bench_systems.md`](experiments/results/bench_systems.md).",
    ),
    "bench-systems-memory": (
        "bench_systems.md",
        ["## Memory guide"],
        "From [`bench_systems.md`](experiments/results/bench_systems.md), written by "
        "`python experiments/bench_systems.py` (every system a target, no references).",
    ),
    "lodo-winners": (
        "lodo_winners.md",
        ["## The best system and the top two"],
        "From [`lodo_winners.md`](experiments/results/lodo_winners.md), written by "
        "`python experiments/lodo_winners.py` from the cells of `werest evaluate "
        "experiment=lodo`.",
    ),
    "leaderboard-coverage": (
        "leaderboard_coverage.md",
        ["## Coverage"],
        "From [`leaderboard_coverage.md`](experiments/results/leaderboard_coverage.md), written "
        "by `python experiments/leaderboard_coverage.py`.",
    ),
    "lodo-audio-bars": (
        "lodo_audio_compare.md",
        ["## The bars", "## Per held-out domain"],
        "From [`lodo_audio_compare.md`](experiments/results/lodo_audio_compare.md), written by "
        "`python experiments/lodo_audio_compare.py` (`make lodo-audio`).",
    ),
    "winner-bars": (
        "winner.md",
        ["## The bars"],
        "From [`winner.md`](experiments/results/winner.md), written by `werest evaluate "
        "experiment=winner`; every arm, every dataset and the limit of any design are there.",
    ),
    "winner-arms": (
        "winner.md",
        ["## The bars", "## Every arm, over the datasets", "## The limit of any design"],
        "From [`winner.md`](experiments/results/winner.md), written by `werest evaluate "
        "experiment=winner`.",
    ),
    "winner-example": ("winner_example.md", None, ""),
    "winner-example-short": ("winner_example.md", None, ""),
    "audio-default": (
        "audio_default.md",
        ["## Decision", "## Cost"],
        "From [`audio_default.md`](experiments/results/audio_default.md), written by "
        "`python experiments/audio_default.py`.",
    ),
}

#: the files that may hold blocks
DOCUMENTS = ("README.md", "docs/*.md")

MARKER = re.compile(r"<!-- ([a-z0-9-]+):start -->")


def documents() -> list[Path]:
    """README.md and every file under docs/."""
    return [path for pattern in DOCUMENTS for path in sorted(REPO.glob(pattern))]


def root_of(path: Path) -> str:
    """The relative path from ``path``'s folder to the repository (``""`` or ``"../"``)."""
    return "../" * (len(path.relative_to(REPO).parts) - 1)


def section(text: str, heading: str, titled: bool) -> str:
    """The body of ``heading`` up to the next heading of any level (the heading in bold when
    ``titled``)."""
    start = text.index(heading + "\n")
    rest = text[start + len(heading) + 1 :]
    end = re.search(r"^#", rest, flags=re.MULTILINE)
    body = (rest if end is None else rest[: end.start()]).strip("\n")
    return f"**{heading.lstrip('#').strip()}**\n\n{body}\n" if titled else f"{body}\n"


def between(text: str, name: str) -> str:
    """The text between ``name``'s markers in ``text`` (markers excluded)."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    return text.split(start, 1)[1].split(end, 1)[0].strip("\n") + "\n"


def block(name: str, root: str = "") -> str:
    """What block ``name`` holds, from its results file (``root``: the path from the document's
    folder to the repository, for its links: ``../`` in docs/)."""
    file, headings, source = BLOCKS[name]
    text = (RESULTS / file).read_text(encoding="utf-8")
    if headings is None:
        return between(text, name)
    body = "\n".join(section(text, h, titled=len(headings) > 1) for h in headings)
    return f"{body}\n{source.replace('](experiments/', f']({root}experiments/')}\n"


def render(text: str, root: str = "") -> str:
    """``text`` with every known block rewritten from its results file (an unknown block name
    is a KeyError: a typo must not leave stale numbers); ``root`` as in :func:`block`."""
    for name in MARKER.findall(text):
        head, rest = text.split(f"<!-- {name}:start -->", 1)
        tail = rest.split(f"<!-- {name}:end -->", 1)[1]
        text = f"{head}<!-- {name}:start -->\n{block(name, root)}<!-- {name}:end -->{tail}"
    return text


def main() -> None:
    for path in documents():
        text = path.read_text(encoding="utf-8")
        rendered = render(text, root_of(path))
        if rendered != text:
            path.write_text(rendered, encoding="utf-8")
            print(f"updated {path.relative_to(REPO)}")


if __name__ == "__main__":
    main()
