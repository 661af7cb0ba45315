"""``werest <command> --help``: every setting of a command with its help text and an example.

The settings come from the composed config, whose defaults are those the command's settings
class declares (:mod:`werest.cli.schema`); their help texts from the same declarations. Keys of
a config group's option (``asr=faster_whisper``, ``model=stack``, ``experiment=lodo``) that the
class does not describe take the comment after the key in the option's YAML file. So the help
cannot drift from the settings: a setting is declared once, with its help.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from werest.cli.declare import help_texts, library_value
from werest.cli.schema import SCHEMAS

#: one real example per command (README "The commands").
EXAMPLES: dict[str, list[str]] = {
    "import": [
        "werest import dighr ../shared/data/dighr/en --out dighr.parquet",
        "werest import kaldi exp/sysA/text exp/sysB/text reference=data/test/text --out k.parquet",
        "werest import manifest results/MODEL_*_DATASET_*.jsonl --out open_asr.parquet",
    ],
    "score": ["werest score input=dighr.parquet output_dir=out/dighr"],
    "features": [
        "werest features input=dighr.parquet ranking=out/dighr/ranking.json out=features.parquet"
    ],
    "embed": ["werest embed input=features.parquet transcripts=an4.parquet out=f_sim.parquet"],
    "transcribe": [
        "werest transcribe input=an4.parquet dataset=an4-test asr=pocketsphinx out=an4_asr.parquet"
    ],
    "estimate": [
        "werest estimate input=my_transcripts.parquet target=my-asr output_dir=out/est",
        "werest estimate input=t.parquet target=[a,b] system_order=[large,base] output_dir=out",
        "werest estimate input=t.parquet labels=to_label.csv output_dir=out/est",
    ],
    "leaderboard": [
        "werest leaderboard input=afrispeech.parquet output_dir=out/board",
        "werest leaderboard input=t.parquet labels=to_label.csv output_dir=out/board",
    ],
    "train": ["werest train model=hgb name=quick output_dir=/tmp/models"],
    "convert-model": ["werest convert-model model_path=OLD.joblib trust_model=true"],
    "evaluate": [
        "werest evaluate experiment=lodo lodo.held_out=[phone-es,librispeech]",
        "werest evaluate experiment=few_labels predictions=outputs/few_labels/heldout.parquet",
    ],
    "demo": ["werest demo output_dir=outputs/demo"],
    "segmentation": ["werest segmentation reference=ref.TextGrid hypothesis=hyp.TextGrid"],
    "sample": [
        "werest sample input=t.parquet budget=20 strategy=winner out=s0.csv   # round 1",
        "werest estimate input=t.parquet labels=s0.csv output_dir=est   # once s0 is filled",
        "werest sample input=t.parquet budget=20 strategy=winner labels=[s0.csv] out=s1.csv",
        "werest sample input=t.parquet budget=100 strategy=active uniform_share=0.3 out=s.csv",
    ],
}

_KEY = re.compile(r"^(\s*)([A-Za-z_][\w.-]*)\s*:(.*)$")


def yaml_comments(path: Path, prefix: str = "") -> dict[str, str]:
    """``{dotted key: comment}`` of a config group's option file, from the ``# ...`` after each
    key; a comment continued on the next lines (``#`` alone on a line, in the same column) is
    one comment."""
    comments: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    last: tuple[str, int] | None = None  # the last commented key and its '#' column
    for line in path.read_text(encoding="utf-8").splitlines():
        stripped = line.lstrip()
        if stripped.startswith("#") and last and len(line) - len(stripped) == last[1]:
            comments[last[0]] += " " + stripped.lstrip("#").strip()
            continue
        last = None
        match = _KEY.match(line)
        if not match or stripped.startswith(("#", "-")):
            continue
        indent, key, rest = len(match.group(1)), match.group(2), match.group(3)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        dotted = ".".join([k for _, k in stack] + [key])
        stack.append((indent, key))
        comment = re.split(r"\s#\s?", rest, maxsplit=1)
        if len(comment) == 2 and comment[1].strip():
            comments[prefix + dotted] = comment[1].strip()
            last = (prefix + dotted, line.index("#", len(line) - len(rest)))
    return comments


def header(path: Path) -> list[str]:
    """The comment lines at the top of a YAML config file (its usage and description)."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    return lines


def _flatten(node, prefix: str = "") -> list[tuple[str, object]]:
    if isinstance(node, dict) and node:
        items = []
        for key, value in node.items():
            items += _flatten(value, f"{prefix}{key}.")
        return items
    return [(prefix.rstrip("."), node)]


def _shown(value) -> str:
    library = re.fullmatch(r"\$\{library:([\w.]+)\}", value) if isinstance(value, str) else None
    if library:  # a library constant (the panel size): its value, as the run gets it
        value = library_value(library.group(1))
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return "[" + ",".join(_shown(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{}"
    text = " ".join(str(value).split())
    return text if len(text) <= 60 else f"{text[:57]}..."


def _groups(conf: Path, command: str) -> dict[str, tuple[str, list[str]]]:
    """Config groups named in the command's defaults list: ``{group: (default, options)}``."""
    text = (conf / f"{command}.yaml").read_text(encoding="utf-8")
    found = re.findall(r"^\s*-\s*(?:override\s+)?([\w/]+)\s*:\s*([\w./-]+)", text, flags=re.M)
    groups = {}
    for name, default in found:
        folder = conf / name
        if folder.is_dir():
            groups[name] = (default, sorted(p.stem for p in folder.glob("*.yaml")))
    return groups


def command_help(
    command: str, about: str, container: dict[str, Any], conf: Path, overrides: list[str] = ()
) -> str:
    """The ``--help`` text of ``command`` from its composed config as plain data
    (``container``, composed with ``overrides``, which may choose config group options such as
    ``asr=transformers``: :func:`werest.cli.plain.compose_plain`) and the help texts its
    settings class declares."""
    groups = _groups(conf, command)
    lines = [f"werest {command}: {about}", ""]
    lines += [f"  {line}" for line in header(conf / f"{command}.yaml")]
    lines += ["", "settings (key=default; ??? = required; override with key=value):"]
    lines += _setting_lines(container, _comments(command, conf, groups, overrides))
    if groups:
        lines += ["", "config groups (group=option):"]
        lines += [
            f"  {name}={'|'.join(options)}   (default: {default})"
            for name, (default, options) in groups.items()
        ]
    lines += ["", "examples:"] + [f"  {example}" for example in EXAMPLES.get(command, [])]
    lines += [
        "",
        f"`werest {command} --cfg` prints the composed config (`--cfg --resolve`: resolved, as "
        "the run reads it); every run saves it beside its outputs.",
    ]
    return "\n".join(lines)


def _comments(command: str, conf: Path, groups: dict, overrides) -> dict[str, str]:
    """Each key's help: the declared one (:mod:`werest.cli.schema`), else the comment after the
    key in the chosen option of its config group."""
    comments = help_texts(SCHEMAS[command])
    chosen = dict(o.split("=", 1) for o in overrides if "=" in o)
    for group, (default, _options) in groups.items():
        file = conf / group / f"{chosen.get(group, default)}.yaml"
        if not file.is_file():
            continue
        package = "" if "@package _global_" in file.read_text(encoding="utf-8") else group
        for key, comment in yaml_comments(file, f"{package}." if package else "").items():
            comments.setdefault(key, comment)
    return comments


def _setting_lines(container: dict[str, Any], comments: dict[str, str]) -> list[str]:
    """``key=default  # help`` of every setting, each block's own help before its first key."""
    settings = [(key, value) for key, value in _flatten(container) if key]
    width = min(max((len(f"{k}={_shown(v)}") for k, v in settings), default=0), 44)
    lines, sections = [], set()
    for key, value in settings:
        parts = key.split(".")
        for depth in range(1, len(parts)):  # a section's own comment, before its first key
            section = ".".join(parts[:depth])
            if section in comments and section not in sections:
                sections.add(section)
                lines.append(f"  {section + '.*':<{width}}  # {comments[section]}")
        shown = f"{key}={_shown(value)}"
        comment = comments.get(key, "")
        lines.append(f"  {shown:<{width}}  {'# ' + comment if comment else ''}".rstrip())
    return lines
