"""The first-contact audit (issue 36): about a hundred bad-input and interrupt cases, run
through the real CLI the way a user does, each checked against the contract.

    PYTHONPATH=src .venv/bin/python experiments/audit_first_contact.py
    PYTHONPATH=src .venv/bin/python experiments/audit_first_contact.py --only estimate-
    PYTHONPATH=src .venv/bin/python experiments/audit_first_contact.py --list

Every case is a fresh ``python -m werest.cli ...`` subprocess (this interpreter, ``PYTHONPATH``
pointing at this checkout's ``src``), run in its own new temporary folder, with stdin closed
and stderr not a terminal. Each case declares what a clean outcome is:

* ``error``: a user's mistake. Exit status 2, exactly one line on stderr (``werest <command>:
  error: ...`` or ``werest: error: ...``), no traceback, nothing new in the folder (no
  ``*.tmp``, no staging folder, no partial output) and a previous run's output, where the case
  set one up, byte for byte as it was; where the case says what the line must name (``says``:
  the file, the row, the column), it names them.
* ``ok``: an odd but valid input (the text "NaN" as a hypothesis). Exit status 0, no
  traceback, no temporary file.
* ``warn``: a legitimate input that deserves a warning (a system empty on every utterance).
  Exit status 0, a line containing "warning" (on stderr, or in the printed report on stdout,
  where estimate's guards put theirs), no traceback, no temporary file.
* ``signal``: SIGINT or SIGTERM sent at a point of the run (``early``: a fixed delay after the
  CLI installed its handlers; ``write``: as soon as a file appears in the run's staging
  folder). Exit status 130 (SIGINT) or 143 (SIGTERM) with one line, "werest <command>:
  interrupted", no traceback, nothing half-written left, and the previous output (where one was
  set up) intact or replaced whole (every expected file, none empty, nothing of the earlier
  run). A run that finished before the signal arrived (status 0) is recorded as such and
  counts as clean only if its outputs are whole.

For each case the audit records the command line, the exit status, the number of stderr lines,
whether a traceback appeared, what was left behind (new paths that should not be there) and
what happened to a previous output. It writes ``experiments/results/audit_first_contact.md``
(the headline "N of M clean" and a table of every case) and ``.csv``.

A case that runs longer than ``--timeout`` seconds (60 by default) is killed and counted as not
clean (that is how an unbounded setting shows).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import pickle
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
RESULTS = ROOT / "experiments" / "results"
sys.path.insert(0, str(SRC))

sys.path.insert(0, str(ROOT))

from tests.helpers import (  # noqa: E402
    COMMAND_OUTPUTS,
    SMALL,
    handles_sigterm,
    snapshot,
    system_files,
    write_file,
    writing,
)

from werest.demo import demo_table_path  # noqa: E402

DEMO = demo_table_path()
HUGE = "100000000000"
STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + random.Random(7).randbytes(400)

#: the files a whole run of each command writes (a previous run is set up with these names)
OUTPUTS = COMMAND_OUTPUTS
#: a file an earlier run may have written and a new run does not: a whole replacement drops it
STALE = {
    "estimate": "utterances/part-00000.csv",
    "leaderboard": "lid_accuracy.csv",
    "score": "stale.csv",
}


# --------------------------------------------------------------------------- inputs


def write(folder: Path, name: str, data: str | bytes) -> Path:
    return write_file(folder / name, data)


def demo_text() -> str:
    return DEMO.read_text(encoding="utf-8")


def demo_frame() -> pd.DataFrame:
    return pd.read_csv(DEMO, keep_default_na=False)


def frame_csv(folder: Path, name: str, frame: pd.DataFrame) -> Path:
    path = folder / name
    frame.to_csv(path, index=False)
    return path


def with_mute_system(folder: Path) -> Path:
    """The demo table plus a system that returned nothing on every utterance."""
    demo = demo_frame()
    mute = demo[demo["system"] == "base"].assign(system="mute", hypothesis="")
    return frame_csv(folder, "t.csv", pd.concat([demo, mute], ignore_index=True))


def all_empty(folder: Path) -> Path:
    return frame_csv(folder, "t.csv", demo_frame().assign(hypothesis=""))


def labels_file(folder: Path, kind: str) -> Path:
    """A labels table for the demo input with one bad row of ``kind``."""
    demo = demo_frame()
    rows = demo.drop_duplicates(["dataset", "utt_id"])[["dataset", "utt_id", "reference"]]
    rows = rows.head(6).reset_index(drop=True)
    if kind == "unknown utterance":
        rows.loc[len(rows)] = ["demo-calls", "no-such-utt", "hello"]
    elif kind == "duplicate":
        rows = pd.concat([rows, rows.head(1)], ignore_index=True)
    elif kind == "empty reference":
        rows.loc[2, "reference"] = ""
    elif kind == "no reference column":
        rows = rows.drop(columns="reference")
    return frame_csv(folder, "labels.csv", rows)


def previous_folder(folder: Path, command: str) -> None:
    """A previous run's output folder (each file holds its own name, so a mix shows)."""
    for name in [*OUTPUTS[command], STALE[command]]:
        write(folder, name, f"{name} of an earlier run\n")


def previous_table(path: Path) -> None:
    write(path.parent, path.name, f"{path.name} of an earlier run\n")
    write(path.parent, f"{path.name}.config.yaml", "config of an earlier run\n")


# --------------------------------------------------------------------------- cases


@dataclass
class Case:
    name: str
    family: str
    expect: str  # error | warn | ok | signal
    args: list[str]  # after `werest`; "{t}" is the case's folder
    setup: Callable[[Path], None] = lambda folder: None
    previous: str | None = None  # a path (relative) whose earlier content must survive
    previous_kind: str | None = None  # folder command name, or "table"
    signum: int | None = None
    when: str | None = None  # early:<seconds> | write
    watch: str | None = None  # the output whose staging folder `write` waits for
    unwritable: str | None = None  # a folder made unwritable (chattr +i when run as root)
    immutable: str | None = None  # a path made immutable (chattr +i: root only, else skipped)
    note: str = ""
    warning: str = "warning"  # warn: what the warning line must say
    says: tuple[str, ...] = ()  # error: what the line must name (the file, row, column)


CASES: list[Case] = []


def case(*args, **kwargs) -> None:
    CASES.append(Case(*args, **kwargs))


def small(folder: Path) -> None:
    write(folder, "t.csv", SMALL)


def files(**named: str | bytes | Callable[[], str | bytes]) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        for name, data in named.items():
            write(
                folder,
                name.replace("__", "/").replace("_DOT_", "."),
                data() if callable(data) else data,
            )

    return setup


def chain(*steps: Callable[[Path], None]) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        for step in steps:
            step(folder)

    return setup


D = str(DEMO)
OUT = "output_dir={t}/out"

# 1. input files: missing, unreadable, empty, wrong format, a folder --------------------------
for command in ("estimate", "score"):
    case(f"{command}-missing-input", "input file", "error", [command, "input=nowhere.csv", OUT])
    case(
        f"{command}-empty-input",
        "input file",
        "error",
        [command, "input=e.csv", OUT],
        files(e_DOT_csv=b""),
    )
    case(
        f"{command}-png-as-csv",
        "input file",
        "error",
        [command, "input=p.csv", OUT],
        files(p_DOT_csv=PNG),
    )
    case(
        f"{command}-folder-as-input",
        "input file",
        "error",
        [command, "input=d", OUT],
        lambda f: (f / "d").mkdir(),
    )
case(
    "leaderboard-png-as-csv",
    "input file",
    "error",
    ["leaderboard", "input=p.csv", OUT],
    files(p_DOT_csv=PNG),
)
case(
    "estimate-latin1-csv",
    "input file",
    "error",
    ["estimate", "input=l.csv", OUT],
    files(l_DOT_csv=lambda: demo_text().encode() + b"demo-calls,c1,base,caf\xe9,caf\xe9\n"),
)
case(
    "estimate-per-system-csv",
    "input file",
    "error",
    ["estimate", "input=sys.csv", OUT],
    files(sys_DOT_csv="id,reference,hypothesis\nu1,hello,hello\nu2,yes,no\n"),
    note="hint: werest import csv",
)
case(
    "estimate-broken-symlink-input",
    "input file",
    "error",
    ["estimate", "input=link.csv", OUT],
    lambda f: (f / "link.csv").symlink_to(f / "gone.csv"),
)
case(
    "estimate-utf16-input",
    "input file",
    "error",
    ["estimate", "input=u.csv", OUT],
    files(u_DOT_csv=lambda: SMALL.encode("utf-16")),
)
case(
    "features-missing-input",
    "input file",
    "error",
    ["features", "input=nowhere.csv", "out={t}/f.csv"],
)
case(
    "features-png-input",
    "input file",
    "error",
    ["features", "input=p.csv", "out={t}/f.csv"],
    files(p_DOT_csv=PNG),
)
case(
    "sample-missing-input",
    "input file",
    "error",
    ["sample", "input=nowhere.csv", "budget=3", "out={t}/s.csv"],
)
case(
    "sample-folder-input",
    "input file",
    "error",
    ["sample", "input=d", "budget=3", "out={t}/s.csv"],
    lambda f: (f / "d").mkdir(),
)
case(
    "train-missing-table",
    "input file",
    "error",
    ["train", "data=table", "data.sources.0.table=nowhere.csv", "model=ridge", "output_dir=m"],
)
case(
    "train-png-table",
    "input file",
    "error",
    ["train", "data=table", "data.sources.0.table=p.csv", "model=ridge", "output_dir=m"],
    files(p_DOT_csv=PNG),
)
case(
    "evaluate-missing-table",
    "input file",
    "error",
    [
        "evaluate",
        "data.sources=[{table:nowhere.csv}]",
        "model=ridge",
        "ablation=null",
        "output_dir=o",
    ],
)
case(
    "transcribe-missing-input",
    "input file",
    "error",
    ["transcribe", "input=nowhere.csv", "out={t}/t.csv"],
)
case(
    "transcribe-empty-input",
    "input file",
    "error",
    ["transcribe", "input=e.csv", "out={t}/t.csv"],
    files(e_DOT_csv=b""),
)
case(
    "embed-missing-input",
    "input file",
    "error",
    ["embed", "input=nowhere.csv", "transcripts=t.csv", "out={t}/f.csv"],
    small,
)
case(
    "segmentation-missing-reference",
    "input file",
    "error",
    ["segmentation", "reference=nope.ctm", "hypothesis=nope2.ctm", OUT],
)
case(
    "segmentation-png-reference",
    "input file",
    "error",
    ["segmentation", "reference=p.ctm", "hypothesis=p.ctm", OUT],
    files(p_DOT_ctm=PNG),
)
case("convert-model-missing", "input file", "error", ["convert-model", "model_path=m.pkl"])
case(
    "convert-model-png",
    "input file",
    "error",
    ["convert-model", "model_path=m.pkl", "trust_model=true"],
    files(m_DOT_pkl=PNG),
)
case(
    "estimate-model-png",
    "input file",
    "error",
    ["estimate", f"input={D}", "model_path=m.skops", OUT],
    files(m_DOT_skops=PNG),
)
# issue 43: an old pickle, another format's file and corrupt bytes each get their own line,
# and only a real pickle is sent to convert-model
OLD_PICKLE = pickle.dumps({"estimator": None, "feature_names": ["pwer"]}, protocol=4)
RANDOM_BYTES = random.Random(43).randbytes(2000)


def model_with_card(name: str, data: bytes) -> Callable[[Path], None]:
    """``data`` as the model file ``name`` with a card whose sha256 matches it."""

    def setup(folder: Path) -> None:
        write(folder, name, data)
        card = {
            "sha256": hashlib.sha256(data).hexdigest(),
            "features": ["pwer"],
            "target": "wer",
            "versions": {"scikit-learn": metadata.version("scikit-learn")},
        }
        write(folder, Path(name).with_suffix(".json").name, json.dumps(card))

    return setup


case(
    "estimate-old-pickle-no-card",
    "input file",
    "error",
    ["estimate", f"input={D}", "model_path=old.joblib", OUT],
    files(old_DOT_joblib=OLD_PICKLE),
)
case(
    "estimate-random-skops-with-card-trusted",
    "input file",
    "error",
    ["estimate", f"input={D}", "model_path=m.skops", "trust_model=true", OUT],
    model_with_card("m.skops", RANDOM_BYTES),
)
case(
    "convert-model-random-with-card-trusted",
    "input file",
    "error",
    ["convert-model", "model_path=m.skops", "trust_model=true"],
    model_with_card("m.skops", RANDOM_BYTES),
)
case("demo-png-input", "input file", "error", ["demo", "input=p.csv", OUT], files(p_DOT_csv=PNG))
case("demo-missing-input", "input file", "error", ["demo", "input=nowhere.csv", OUT])

# 2. table contents: missing columns, duplicates, NaN or empty hypotheses --------------------
case(
    "estimate-no-hypothesis-column",
    "table contents",
    "error",
    ["estimate", "input=t.csv", OUT],
    lambda f: frame_csv(f, "t.csv", demo_frame().drop(columns="hypothesis")),
)
case(
    "leaderboard-no-system-column",
    "table contents",
    "error",
    ["leaderboard", "input=t.csv", OUT],
    lambda f: frame_csv(f, "t.csv", demo_frame().drop(columns="system")),
)
case(
    "score-no-reference-column",
    "table contents",
    "error",
    ["score", "input=t.csv", OUT],
    lambda f: frame_csv(f, "t.csv", demo_frame().drop(columns="reference")),
)
case(
    "estimate-duplicated-rows",
    "table contents",
    "error",
    ["estimate", "input=t.csv", OUT],
    lambda f: frame_csv(f, "t.csv", pd.concat([demo_frame(), demo_frame().head(3)])),
)
case(
    "score-duplicated-rows",
    "table contents",
    "error",
    ["score", "input=t.csv", OUT],
    lambda f: frame_csv(f, "t.csv", pd.concat([demo_frame(), demo_frame().head(3)])),
)
case(
    "features-duplicated-rows",
    "table contents",
    "error",
    ["features", "input=t.csv", "out={t}/f.csv"],
    lambda f: frame_csv(f, "t.csv", pd.concat([demo_frame(), demo_frame().head(3)])),
)
case(
    "estimate-one-system",
    "table contents",
    "error",
    ["estimate", "input=t.csv", OUT],
    files(t_DOT_csv="dataset,utt_id,system,hypothesis\nd,u1,a,hello\n"),
)
case(
    "estimate-semicolons",
    "table contents",
    "error",
    ["estimate", "input=t.csv", OUT],
    files(t_DOT_csv=SMALL.replace(",", ";")),
)
case(
    "estimate-mute-system",
    "empty hypotheses",
    "warn",
    ["estimate", "input=t.csv", OUT],
    with_mute_system,
    note="a system empty on every utterance: a warning",
    warning="system mute returned nothing on every utterance",
)
case(
    "leaderboard-mute-system",
    "empty hypotheses",
    "warn",
    ["leaderboard", "input=t.csv", OUT, "bootstrap.n_resamples=50"],
    with_mute_system,
    note="a system empty on every utterance: a warning",
    warning="system mute returned nothing on every utterance",
)
case(
    "score-mute-system",
    "empty hypotheses",
    "warn",
    ["score", "input=t.csv", OUT],
    with_mute_system,
    note="a system empty on every utterance: a warning",
    warning="system mute returned nothing on every utterance",
)
case(
    "estimate-every-hypothesis-empty",
    "empty hypotheses",
    "warn",
    ["estimate", "input=t.csv", OUT],
    all_empty,
    note="every system empty everywhere: a warning (or a one-line error)",
    warning="returned nothing on every utterance",
)
case(
    "estimate-nan-hypotheses",
    "empty hypotheses",
    "ok",
    ["estimate", "input=t.csv", OUT],
    lambda f: frame_csv(
        f,
        "t.csv",
        pd.concat(
            [
                demo_frame(),
                demo_frame().query("system == 'base'").assign(system="nan-sys", hypothesis="NaN"),
            ]
        ),
    ),
    note="'NaN' text in every hypothesis of a system: the word NaN (CSV cells are text)",
)

# 3. numeric settings ------------------------------------------------------------------------
NUMERIC = [
    ("leaderboard", f"bootstrap.n_resamples={HUGE}", []),
    ("score", f"bootstrap.n_resamples={HUGE}", []),
    ("estimate", f"few_labels.n_resamples={HUGE}", ["labels=input"]),
    ("leaderboard", f"few_labels.n_resamples={HUGE}", ["labels=input"]),
    ("score", "bootstrap.n_resamples=-5", []),
    ("score", "bootstrap.n_resamples=many", []),
    ("leaderboard", "bootstrap.confidence=1.5", []),
    ("estimate", "few_labels.level=1", ["labels=input"]),
    ("estimate", "n_jobs=0", []),
    ("estimate", "n_jobs=40", []),  # more than 4 per core (issue 43): 40 on 2 cores started 42
    ("estimate", "chunk_utterances=0", []),
    ("estimate", "partition.rows=-3", []),
    ("estimate", "missing_hypotheses=drop", []),
    ("leaderboard", "fairness.alpha=2", []),
    ("score", "n_jobs=two", []),
]
for command, setting, extra in NUMERIC:
    key = setting.split("=")[0].replace(".", "-").replace("_", "-")
    value = setting.split("=")[1][:8]
    case(
        f"{command}-{key}={value}",
        "numeric setting",
        "error",
        [command, f"input={D}", setting, *extra, OUT],
    )
for setting in ("budget=-1", "uniform_share=2"):
    case(
        f"sample-{setting[:16]}",
        "numeric setting",
        "error",
        ["sample", f"input={D}", "budget=3", setting, "out={t}/s.csv"],
    )
case(
    "train-n-jobs=0",
    "numeric setting",
    "error",
    ["train", "data=table", f"data.sources.0.table={D}", "model=ridge", "n_jobs=0", "output_dir=m"],
)
case(
    "transcribe-chunk-size=0",
    "numeric setting",
    "error",
    ["transcribe", "input=t.csv", "chunk_size=0", "out={t}/o.csv"],
    small,
)
case(
    "segmentation-tolerance=-1",
    "numeric setting",
    "error",
    ["segmentation", "reference=r.ctm", "hypothesis=r.ctm", "tolerance=-1", OUT],
    files(r_DOT_ctm="u1 1 0.00 0.50 hello\n"),
)
case(
    "evaluate-seed=-1",
    "numeric setting",
    "error",
    ["evaluate", f"data.sources=[{{table:{D}}}]", "model=ridge", "seed=-1", "output_dir=o"],
)

# 4. unknown setting names, unknown dataset/system names --------------------------------------
case(
    "estimate-misspelt-setting",
    "unknown name",
    "error",
    ["estimate", f"input={D}", "ouput_dir=out"],
)
case(
    "leaderboard-misspelt-nested-setting",
    "unknown name",
    "error",
    ["leaderboard", f"input={D}", "bootstrap.n_resample=10", OUT],
)
case("score-unknown-setting", "unknown name", "error", ["score", f"input={D}", "colour=red", OUT])
case(
    "import-unknown-setting",
    "unknown name",
    "error",
    ["import", "csv", "a.csv", "--out", "t.parquet", "sytem=x"],
    small,
)
case("unknown-command", "unknown name", "error", ["estmate", f"input={D}"])
case("estimate-no-input", "unknown name", "error", ["estimate", OUT])
case("import-no-arguments", "unknown name", "error", ["import"])
# issue 43: Hydra's parser errors ("extraneous input", "LexerNoViableAltException") say what
# to type; --help composes without Hydra and still refuses an unknown group option
case(
    "estimate-bare-path",
    "command line",
    "error",
    ["estimate", "data.csv"],
    files(data_DOT_csv=demo_text),
)
case("estimate-misspelt-flag", "command line", "error", ["estimate", "--hlep"])
case(
    "import-misspelt-flag",
    "command line",
    "error",
    ["import", "csv", "a.csv", "--uot", "t.parquet"],
    small,
)
case("estimate-help", "command line", "ok", ["estimate", "--help"])
case("transcribe-help-unknown-asr", "command line", "error", ["transcribe", "asr=nope", "--help"])
NAMES = [
    ("leaderboard", "exclude_datasets=[afri-dve]"),
    ("leaderboard", "datasets=demo-cals"),
    ("leaderboard", "system_order=[larg-v3]"),
    ("estimate", "target=tinny"),
    ("estimate", "proxy=larg-v3"),
]
for command, setting in NAMES:
    key, value = setting.split("=")
    case(
        f"{command}-{key}={value.strip('[]')}",
        "unknown name",
        "error",
        [command, f"input={D}", setting, OUT],
        note=setting,
    )
case(
    "features-targets-typo",
    "unknown name",
    "error",
    ["features", f"input={D}", "targets=[tinny]", "out={t}/f.csv"],
)
case(
    "transcribe-dataset-typo",
    "unknown name",
    "error",
    ["transcribe", "input=t.csv", "dataset=[cals]", "out={t}/o.csv"],
    files(t_DOT_csv="dataset,utt_id,audio\ncalls,u1,a.wav\n"),
)
case(
    "estimate-unknown-normaliser",
    "unknown name",
    "error",
    ["estimate", f"input={D}", "normaliser=whisper_englsh", OUT],
)

# 5. importers given another format's file ------------------------------------------------------
PER_SYSTEM = "id,reference,hypothesis\nu1,hello world,hello world\nu2,good day,good\n"
for fmt in ("kaldi", "sclite", "sphinx", "manifest", "hf", "dighr", "afrispeech", "verli"):
    case(
        f"import-{fmt}-given-csv",
        "importer format",
        "error",
        ["import", fmt, "some.csv", "--out", "t.parquet"],
        files(some_DOT_csv=PER_SYSTEM),
    )
case(
    "import-csv-given-png",
    "importer format",
    "error",
    ["import", "csv", "p.csv", "--out", "t.parquet"],
    files(p_DOT_csv=PNG),
)
case(
    "import-csv-given-kaldi",
    "importer format",
    "error",
    ["import", "csv", "text", "--out", "t.parquet"],
    files(text="u1 hello world\nu2 good\n"),
)
case(
    "import-unknown-format",
    "importer format",
    "error",
    ["import", "kaldy", "some.csv", "--out", "t.parquet"],
    files(some_DOT_csv=PER_SYSTEM),
)
case(
    "import-csv-latin1",
    "importer format",
    "error",
    ["import", "csv", "s.csv", "--out", "t.parquet"],
    files(s_DOT_csv=PER_SYSTEM.encode() + b"u3,caf\xe9,cafe\n"),
)
case(
    "import-csv-duplicate-id",
    "importer format",
    "error",
    ["import", "csv", "s.csv", "--out", "t.parquet"],
    files(s_DOT_csv=PER_SYSTEM + "u1,again,again\n"),
)
case(
    "import-csv-no-hypothesis",
    "importer format",
    "error",
    ["import", "csv", "s.csv", "--out", "t.parquet"],
    files(s_DOT_csv="id,reference\nu1,hello\n"),
)
case(
    "import-csv-missing-file",
    "importer format",
    "error",
    ["import", "csv", "nowhere.csv", "--out", "t.parquet"],
)
case(
    "import-bad-out-suffix",
    "importer format",
    "error",
    ["import", "csv", "s.csv", "--out", "t.xlsx"],
    files(s_DOT_csv=PER_SYSTEM),
)

# 6. where outputs go ------------------------------------------------------------------------------
case(
    "import-out-is-a-folder",
    "output place",
    "error",
    ["import", "csv", "s.csv", "--out", "outdir"],
    chain(files(s_DOT_csv=PER_SYSTEM), lambda f: (f / "outdir").mkdir()),
)
for command in ("estimate", "leaderboard", "score"):
    case(
        f"{command}-output-dir-is-a-file",
        "output place",
        "error",
        [command, f"input={D}", "output_dir=out"],
        files(out="an existing file\n"),
        previous="out",
        previous_kind="file",
    )
case(
    "features-out-is-a-folder",
    "output place",
    "error",
    ["features", f"input={D}", "out=f"],
    lambda f: (f / "f").mkdir(),
)
case(
    "sample-out-is-a-folder",
    "output place",
    "error",
    ["sample", f"input={D}", "budget=3", "out=s"],
    lambda f: (f / "s").mkdir(),
)
case(
    "train-output-dir-is-a-file",
    "output place",
    "error",
    ["train", "data=table", f"data.sources.0.table={D}", "model=ridge", "output_dir=m"],
    files(m="an existing file\n"),
    previous="m",
    previous_kind="file",
)
case(
    "estimate-unwritable-output",
    "output place",
    "error",
    ["estimate", f"input={D}", "output_dir={t}/ro/out"],
    lambda f: (f / "ro").mkdir(),
    unwritable="ro",
)
case(
    "score-unwritable-output",
    "output place",
    "error",
    ["score", f"input={D}", "output_dir={t}/ro/out"],
    lambda f: (f / "ro").mkdir(),
    unwritable="ro",
)
case(
    "import-unwritable-output",
    "output place",
    "error",
    ["import", "csv", "s.csv", "--out", "{t}/ro/t.parquet"],
    chain(files(s_DOT_csv=PER_SYSTEM), lambda f: (f / "ro").mkdir()),
    unwritable="ro",
)

# 7. a bad run into a folder holding a previous run: the previous run is untouched -------------
case(
    "estimate-bad-setting-over-previous",
    "previous output",
    "error",
    ["estimate", f"input={D}", "target=tinny", OUT],
    lambda f: previous_folder(f / "out", "estimate"),
    previous="out",
    previous_kind="estimate",
)
case(
    "leaderboard-missing-input-over-previous",
    "previous output",
    "error",
    ["leaderboard", "input=nowhere.csv", OUT],
    lambda f: previous_folder(f / "out", "leaderboard"),
    previous="out",
    previous_kind="leaderboard",
)
case(
    "score-bad-table-over-previous",
    "previous output",
    "error",
    ["score", "input=p.csv", OUT],
    chain(files(p_DOT_csv=PNG), lambda f: previous_folder(f / "out", "score")),
    previous="out",
    previous_kind="score",
)
case(
    "import-bad-file-over-previous",
    "previous output",
    "error",
    ["import", "kaldi", "some.csv", "--out", "t.parquet"],
    chain(files(some_DOT_csv=PER_SYSTEM), lambda f: previous_table(f / "t.parquet")),
    previous="t.parquet",
    previous_kind="table",
)

# 8. labels with bad rows ------------------------------------------------------------------------
for kind in ("unknown utterance", "duplicate", "empty reference", "no reference column"):
    case(
        f"estimate-labels-{kind.replace(' ', '-')}",
        "labels",
        "error",
        ["estimate", f"input={D}", "labels=labels.csv", OUT],
        lambda f, kind=kind: labels_file(f, kind),
    )
case(
    "leaderboard-labels-duplicate",
    "labels",
    "error",
    ["leaderboard", f"input={D}", "labels=labels.csv", OUT],
    lambda f: labels_file(f, "duplicate"),
)
case(
    "estimate-labels-missing-file",
    "labels",
    "error",
    ["estimate", f"input={D}", "labels=nowhere.csv", OUT],
)
case(
    "estimate-labels-input-without-references",
    "labels",
    "error",
    ["estimate", "input=t.csv", "labels=input", OUT],
    lambda f: frame_csv(f, "t.csv", demo_frame().drop(columns="reference")),
)

# 8b. the last unclean edges (issue 43) ---------------------------------------------------------


def null_hypotheses(folder: Path, systems: set[str] | None = None) -> Path:
    """The demo table as Parquet with a null hypothesis (the system was not run) in every row
    of ``systems`` (None: of every system)."""
    demo = demo_frame().astype({"hypothesis": object})
    null = demo["system"].isin(systems) if systems is not None else demo["system"].notna()
    demo.loc[null, "hypothesis"] = None
    path = folder / "t.parquet"
    demo.to_parquet(path)
    return path


case(
    "estimate-every-hypothesis-null-parquet",
    "null hypotheses",
    "error",
    ["estimate", "input=t.parquet", OUT],
    null_hypotheses,
)
case(
    "estimate-system-without-hypotheses-parquet",
    "null hypotheses",
    "warn",
    ["estimate", "input=t.parquet", OUT],
    lambda f: null_hypotheses(f, {"base"}),
    note="a system whose every hypothesis is null: left out, with a warning naming it",
    warning="system 'base' left out",
)
case(
    "estimate-target-without-hypotheses-parquet",
    "null hypotheses",
    "error",
    ["estimate", "input=t.parquet", "target=base", OUT],
    lambda f: null_hypotheses(f, {"base"}),
    note="says the system has no hypotheses, not that it is not in the input",
)
case(
    "estimate-immutable-output-dir",
    "output place",
    "error",
    ["estimate", f"input={D}", OUT],
    lambda f: previous_folder(f / "out", "estimate"),
    previous="out",
    previous_kind="estimate",
    immutable="out",
    note="refused before the run, not after it",
)
case(
    "score-immutable-file-in-output-dir",
    "output place",
    "error",
    ["score", f"input={D}", OUT],
    lambda f: previous_folder(f / "out", "score"),
    previous="out",
    previous_kind="score",
    immutable="out/scores.csv",
    note="no hidden .out.old-* left beside it",
)
case(
    "import-immutable-out-table",
    "output place",
    "error",
    ["import", "csv", "s.csv", "--out", "t.parquet"],
    chain(files(s_DOT_csv=PER_SYSTEM), lambda f: previous_table(f / "t.parquet")),
    previous="t.parquet",
    previous_kind="table",
    immutable="t.parquet",
)
case(
    "leaderboard-fairness-category-not-a-column",
    "numeric setting",
    "error",
    ["leaderboard", f"input={D}", "fairness.categories=[dialect]", OUT],
)

# 8c. a fairness column without a large enough group, labels below min_labels everywhere -------


def demo_with_gender(folder: Path) -> Path:
    """The demo table with a gender column: its datasets (6 and 8 utterances) have no group of
    fairness.min_group_size (30)."""
    demo = demo_frame()
    codes = demo["utt_id"].astype("category").cat.codes
    return frame_csv(
        folder, "t.csv", demo.assign(gender=["female" if c % 3 else "male" for c in codes])
    )


def few_labels_without_references(folder: Path) -> None:
    """The demo table without references and six labels, fewer than few_labels.min_labels
    (20) in every dataset."""
    frame_csv(folder, "t.csv", demo_frame().drop(columns="reference"))
    labels_file(folder, "none bad")


case(
    "leaderboard-fairness-no-group-of-min-size",
    "small groups",
    "warn",
    ["leaderboard", "input=t.csv", OUT, "bootstrap.n_resamples=50"],
    demo_with_gender,
    note="no gender group reaches fairness.min_group_size: the audit skipped with a warning "
    "(was: ValueError No objects to concatenate)",
    warning="no group reached fairness.min_group_size",
)
case(
    "leaderboard-labels-below-min-labels",
    "labels",
    "warn",
    [
        *("leaderboard", "input=t.csv", "labels=labels.csv", OUT),
        *("bootstrap.n_resamples=50", "cache_dir=null"),
    ],
    few_labels_without_references,
    note="no dataset reaches few_labels.min_labels: the zero-label leaderboard with a warning "
    "(was: KeyError 'classical_wer'); cache_dir=null: with labels= the leaderboard keeps the "
    "label loop's estimate in .werest-cache as estimate does, a cache, not debris",
    warning="few_labels.min_labels",
)

# 8d. the page to transcribe a sheet on (issue 49) ----------------------------------------------


def odd_audio(folder: Path) -> Path:
    """The demo table with an ``audio`` column the page must show safely: files that are not
    there, names with spaces, quotes, commas and markup, one utterance without a path."""
    demo = demo_frame()
    names = {u: f'clips/{u} "take, 1" </script><b>.wav' for u in demo["utt_id"].unique()}
    demo["audio"] = demo["utt_id"].map(names)
    demo.loc[demo["utt_id"] == demo["utt_id"].iat[0], "audio"] = ""
    demo["utt_id"] = demo["utt_id"].where(demo["utt_id"] != demo["utt_id"].iat[-1], "</script>")
    return frame_csv(folder, "t.csv", demo)


def page_saved_sheet(folder: Path, *, done: bool) -> Path:
    """A sheet as the page's Save sheet writes it, for the demo table without its references
    (``t.csv``): a real draw (``draw_sample``) with ``reference`` typed in and the ``skip``
    column added last, one row skipped; ``done``: every other row transcribed, else two
    still empty."""
    from werest.estimation.sampling import draw_sample, utterance_list

    demo = demo_frame()
    sheet = draw_sample(utterance_list(demo), budget=4, strategy="random")
    truth = demo.drop_duplicates(["dataset", "utt_id"]).set_index(["dataset", "utt_id"])
    typed = truth["reference"].reindex(pd.MultiIndex.from_frame(sheet[["dataset", "utt_id"]]))
    sheet["reference"] = typed.to_numpy()
    sheet["skip"] = ""
    sheet.loc[1, ["reference", "skip"]] = ["", "true"]
    if not done:
        sheet.loc[[2, 5], "reference"] = ""
    frame_csv(folder, "t.csv", demo.drop(columns="reference"))
    return frame_csv(folder, "to_label.csv", sheet)


case(
    "sample-page-odd-audio-paths",
    "labelling page",
    "ok",
    ["sample", "input=t.csv", "budget=3", "strategy=random", "out=labels/to_label.csv"],
    odd_audio,
    note="the page beside the sheet names the missing files and escapes the markup",
)
case(
    "estimate-page-saved-half-done",
    "labelling page",
    "error",
    ["estimate", "input=t.csv", "labels=to_label.csv", OUT],
    lambda f: page_saved_sheet(f, done=False),
    note="saved before every row was done: the empty reference refused, naming its row",
)
case(
    "estimate-page-saved-done",
    "labelling page",
    "ok",
    ["estimate", "input=t.csv", "labels=to_label.csv", "cache_dir=null", OUT],
    lambda f: page_saved_sheet(f, done=True),
    note="every row transcribed or skipped (skip=true in the column the page adds); "
    "cache_dir=null: the label loop's cache (.werest-cache) is no debris, but a hidden folder",
)

# 8e. sheets as spreadsheets save them (issue 49) -------------------------------------------------
#: the fractions of a sheet a spreadsheet rounds or writes with a decimal comma
FRACTIONS = ["expected_draws", "inclusion_probability", "selection_probability", "uniform_share"]
_SHEETS: dict[str, pd.DataFrame] = {}


def winner_sheet(kind: str = "demo") -> pd.DataFrame:
    """A filled ``werest sample strategy=winner budget=4`` sheet of the demo table (``kind``
    "other": of the demo with one system's hypotheses changed, another input), as text;
    drawn once per audit."""
    if kind not in _SHEETS:
        with tempfile.TemporaryDirectory(prefix="werest-audit-sheet-") as top:
            source = DEMO
            if kind == "other":
                demo = demo_frame()  # tiny's hypotheses one word shorter
                tiny = demo["system"] == "tiny"
                demo.loc[tiny, "hypothesis"] = demo.loc[tiny, "hypothesis"].str.rsplit(n=1).str[0]
                source = frame_csv(Path(top), "other.csv", demo)
            out = Path(top) / "s.csv"
            command = [sys.executable, "-m", "werest.cli", "sample", f"input={source}"]
            command += ["strategy=winner", "budget=4", f"out={out}"]
            subprocess.run(command, env=environment(), check=True, capture_output=True)
            rows = pd.read_csv(out, dtype=str, keep_default_na=False)
        truth = demo_frame().drop_duplicates(["dataset", "utt_id"])
        truth = truth.set_index(["dataset", "utt_id"])["reference"]
        rows["reference"] = [truth[k] for k in zip(rows["dataset"], rows["utt_id"], strict=True)]
        _SHEETS[kind] = rows
    return _SHEETS[kind].copy()


def saved_sheet(how: str, kind: str = "demo") -> Callable[[Path], None]:
    """The winner sheet saved as ``how`` says, in the case's folder as s.csv (s.xlsx)."""

    def setup(folder: Path) -> None:
        rows = winner_sheet(kind)
        if how == "xlsx":
            numbers = rows.copy()
            for column in [*FRACTIONS, "draws", "n_utterances", "budget", "sheet"]:
                numbers[column] = pd.to_numeric(numbers[column])
            numbers.to_excel(folder / "s.xlsx", index=False, engine="openpyxl")
            return
        sep = ";" if how == "bom crlf ; decimal commas" else "\t" if how == "tab" else ","
        if how == "bom crlf ; decimal commas":
            for column in FRACTIONS:
                rows[column] = rows[column].str.replace(".", ",", regex=False)
        elif how == "rounded":
            for column in ("expected_draws", "inclusion_probability", "selection_probability"):
                rows[column] = rows[column].astype(float).map("{:.5E}".format)
        elif how == "extra columns, rows reversed":
            rows = rows.assign(notes="checked, twice").iloc[::-1]
        elif how not in ("tab", "empty rows below", "another input"):
            rows = sheet_deviation(rows, how)
        text = rows.to_csv(index=False, sep=sep)
        if how == "empty rows below":
            text += ("," * (len(rows.columns) - 1) + "\n") * 3
        if how == "bom crlf ; decimal commas":
            text = "\ufeff" + text.replace("\n", "\r\n")
        write(folder, "s.csv", text.encode("utf-8"))

    return setup


def sheet_deviation(rows: pd.DataFrame, how: str) -> pd.DataFrame:
    """The winner sheet with one deviation (the third row, row 3, where it is one cell)."""
    if how == "changed leader":
        rows.loc[2, "leader"] = "tiny" if rows.loc[2, "leader"] != "tiny" else "base"
    elif how == "changed expected_draws":
        rows.loc[2, "expected_draws"] = str(float(rows.loc[2, "expected_draws"]) * 1.5)
    elif how == "changed draws":
        rows.loc[2, "draws"] = str(int(rows.loc[2, "draws"]) + 1)
    elif how == "changed sheet":
        rows.loc[2, "sheet"] = "3"
    elif how == "renamed reference":
        rows = rows.rename(columns={"reference": "transcript"})
    elif how == "duplicate, two transcripts":
        rows = pd.concat([rows, rows.iloc[[2]].assign(reference="other words")])
    elif how == "utterance not in the input":
        rows.loc[2, "utt_id"] = "no-such-utt"
    elif how == "probabilities rounded to 2 digits":
        rows["selection_probability"] = rows["selection_probability"].map(
            lambda x: f"{float(x):.1E}"
        )
    else:
        raise ValueError(how)
    return rows


for how in (
    "bom crlf ; decimal commas",
    "tab",
    "xlsx",
    "empty rows below",
    "rounded",
    "extra columns, rows reversed",
):
    name = "s.xlsx" if how == "xlsx" else "s.csv"
    case(
        f"estimate-sheet-{how.replace(' ', '-').replace(';', 'semicolon').replace(',', '')}",
        "spreadsheet sheets",
        "ok",
        ["estimate", f"input={D}", f"labels=[{name}]", OUT, "cache_dir=null"],
        saved_sheet(how),
        note="a sheet as a spreadsheet saves it is read (no estimate cache: it is no debris)",
    )
SAMPLE_OUT = ["out=n.csv", "cache_dir=null"]
case(
    "sample-labels-xlsx",
    "spreadsheet sheets",
    "ok",
    ["sample", f"input={D}", "strategy=winner", "budget=4", "labels=[s.xlsx]", *SAMPLE_OUT],
    saved_sheet("xlsx"),
)
for how, says in (
    ("changed leader", ("s.csv, row 3", "column 'leader'")),
    ("changed expected_draws", ("s.csv, row 3", "column 'expected_draws'")),
    ("changed draws", ("s.csv, row 3", "column 'draws'")),
    ("changed sheet", ("s.csv, row 3", "column 'sheet'")),
    ("renamed reference", ("s.csv, column 'reference'", "header", "'transcript'")),
    ("duplicate, two transcripts", ("s.csv, row ", "column 'utt_id'", "duplicate")),
    ("utterance not in the input", ("s.csv, row 3", "column 'utt_id'")),
    ("probabilities rounded to 2 digits", ("s.csv, row ", "column 'selection_probability'")),
    ("another input", ("s.csv, row ", "column 'selection_probability'", "another input")),
):
    case(
        f"estimate-sheet-{how.replace(' ', '-').replace(',', '')}",
        "spreadsheet sheets",
        "error",
        ["estimate", f"input={D}", "labels=[s.csv]", OUT, "cache_dir=null"],
        saved_sheet(how, "other" if how == "another input" else "demo"),
        says=says,
        note="another input: found by the decision, after the zero-label estimate, whose "
        "cache (valid for the table whatever the sheet) would stay: no cache here"
        if how == "another input"
        else "",
    )

# 9. signals during a run ----------------------------------------------------------------------
IMPORT_ROWS = 6000


def import_inputs(folder: Path) -> None:
    system_files(folder / "in" / "test", IMPORT_ROWS)


IMPORT_ARGS = ["import", "csv", "in/test/alpha.csv", "in/test/beta.csv", "--out", "res/t.parquet"]
SIGNALS = [
    ("estimate", signal.SIGINT, "early:1.0", False),
    ("estimate", signal.SIGTERM, "write", True),
    ("estimate", signal.SIGINT, "write", True),
    ("leaderboard", signal.SIGINT, "write", True),
    ("leaderboard", signal.SIGTERM, "write", False),
    ("leaderboard", signal.SIGTERM, "early:2.0", True),
    ("score", signal.SIGTERM, "write", True),
    ("score", signal.SIGINT, "early:0.5", False),
    ("score", signal.SIGINT, "write", True),
    ("estimate", signal.SIGTERM, "early:4.0", True),
]
#: estimate in partitions (partition.rows, one spawned child at a time): the signal reaches the
#: driver while a child runs a partition, or while the outputs are put in place
PARTITIONED = ["partition.rows=10", "partition.count=4"]
PARTITIONED_SIGNALS = [
    (signal.SIGINT, "early:3.0", False),
    (signal.SIGTERM, "early:5.0", True),
    (signal.SIGTERM, "write", True),
]
RUNS = [(*run, ()) for run in SIGNALS]
RUNS += [("estimate", *run, PARTITIONED) for run in PARTITIONED_SIGNALS]
for command, signum, when, with_previous, extra in RUNS:
    setup = (
        (lambda f, c=command: previous_folder(f / "out", c)) if with_previous else (lambda f: None)
    )
    case(
        f"{command}{'-partitioned' * bool(extra)}-{signum.name}-{when.split(':')[0]}"
        f"{'-over-previous' * with_previous}",
        "signal",
        "signal",
        [command, f"input={D}", OUT, *extra],
        setup,
        previous="out" if with_previous else None,
        previous_kind=command,
        signum=signum,
        when=when,
        watch="out",
    )
for signum, when, with_previous in (
    (signal.SIGTERM, "write", False),
    (signal.SIGINT, "write", True),
    (signal.SIGTERM, "early:1.5", True),
):
    setup = (
        chain(import_inputs, lambda f: previous_table(f / "res" / "t.parquet"))
        if with_previous
        else import_inputs
    )
    case(
        f"import-{signum.name}-{when.split(':')[0]}{'-over-previous' * with_previous}",
        "signal",
        "signal",
        IMPORT_ARGS,
        setup,
        previous="res/t.parquet" if with_previous else None,
        previous_kind="table",
        signum=signum,
        when=when,
        watch="res/t.parquet",
    )


# --------------------------------------------------------------------------- running


#: a run that exits 0 longer than this after its signal did not stop for it
IGNORED_AFTER = 3.0


def default_stop_signals() -> None:
    """In the child, before it starts: SIGINT and SIGTERM as a terminal's user has them. A
    shell starts a background job (``audit ... &``) with SIGINT ignored, which its children
    inherit and werest rightly keeps ignoring; the audit must not test that by accident."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WEREST")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH")) if p)
    env.pop("PYTHONSTARTUP", None)
    return env


def table_snapshot(path: Path) -> dict[str, bytes] | None:
    both = {**(snapshot(path) or {}), **(snapshot(Path(f"{path}.config.yaml")) or {})}
    return both or None


def listing(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@dataclass
class Outcome:
    case: Case
    command_line: str
    status: int | str
    seconds: float
    stderr_lines: int
    last_line: str
    traceback: bool
    left: list[str] = field(default_factory=list)
    previous: str = ""
    problems: list[str] = field(default_factory=list)
    warning: str = ""  # the first line saying "warning" (stdout or stderr)

    @property
    def clean(self) -> bool:
        return not self.problems


def can_lock() -> bool:
    """Whether this process can make a path immutable (chattr +i): root, with chattr."""
    return os.geteuid() == 0 and shutil.which("chattr") is not None


def run_case(c: Case, timeout: float) -> Outcome:
    top = Path(tempfile.mkdtemp(prefix="werest-audit-"))
    folder = top / "case"
    folder.mkdir()
    try:
        return _run_case(c, folder, timeout)
    finally:
        if c.immutable and can_lock():  # whatever happened: the folder must be removable
            subprocess.run(["chattr", "-i", str(folder / c.immutable)], check=False)
        for p in [top, *top.rglob("*")]:
            if p.is_dir() and not p.is_symlink():
                p.chmod(0o755)
        shutil.rmtree(top, ignore_errors=True)


def _run_case(c: Case, folder: Path, timeout: float) -> Outcome:
    c.setup(folder)
    args = [a.replace("{t}", str(folder)) for a in c.args]
    previous_path = folder / c.previous if c.previous else None
    take = table_snapshot if c.previous_kind == "table" else snapshot
    before_previous = take(previous_path) if previous_path else None
    before = listing(folder)
    command = [sys.executable, "-m", "werest.cli", *args]
    env = environment()
    locked = folder / c.unwritable if c.unwritable else None
    if locked is not None:
        locked.chmod(0o555)
        if os.geteuid() == 0:  # root writes through permissions, not through the immutable flag
            subprocess.run(["chattr", "+i", str(locked)], check=True)
    if c.immutable:
        subprocess.run(["chattr", "+i", str(folder / c.immutable)], check=True)
    started = time.perf_counter()
    child = subprocess.Popen(
        command,
        cwd=folder,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=default_stop_signals,
    )
    sent_at = None
    status: int | str
    if c.signum is not None:
        while child.poll() is None and not handles_sigterm(child.pid):
            time.sleep(0.005)
        ready = time.perf_counter()
        watch = folder / c.watch
        kind, _, delay = c.when.partition(":")
        while child.poll() is None and time.perf_counter() - ready < timeout:
            if kind == "write" and writing(watch.parent, watch.name):
                break
            if kind == "early" and time.perf_counter() - ready >= float(delay):
                break
            time.sleep(0.002)
        if child.poll() is None:
            child.send_signal(c.signum)
            sent_at = time.perf_counter()
    try:
        out_bytes, err_bytes = child.communicate(timeout=timeout)
        status = child.returncode
    except subprocess.TimeoutExpired:
        child.kill()
        out_bytes, err_bytes = child.communicate()
        status = "timeout"
    ended = time.perf_counter()
    seconds = ended - started
    if locked is not None and os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(locked)], check=True)
    if c.immutable:
        subprocess.run(["chattr", "-i", str(folder / c.immutable)], check=True)
    err = err_bytes.decode(errors="replace")
    lines = err.splitlines()
    outcome = Outcome(
        c,
        "werest " + " ".join(a.replace(str(DEMO), "DEMO") for a in c.args),
        status,
        seconds,
        len(lines),
        lines[-1] if lines else "",
        "Traceback" in err,
    )
    new = sorted(listing(folder) - before)
    debris = [
        p
        for p in new
        if p.endswith(".tmp")
        or any(part.startswith(".") or "staging" in part for part in Path(p).parts)
    ]
    after_previous = take(previous_path) if previous_path else None
    problems = outcome.problems
    if outcome.traceback:
        problems.append("traceback")
    if status == "timeout":
        problems.append(f"no exit within {timeout:.0f} s")
    if c.expect == "error":
        if status != 2:
            problems.append(f"status {status}, not 2")
        if len(lines) != 1:
            problems.append(f"{len(lines)} stderr lines, not 1")
        elif not (lines[0].startswith("werest") and ": error: " in lines[0]):
            problems.append("the line is not 'werest ...: error: ...'")
        else:
            unsaid = [fragment for fragment in c.says if fragment not in lines[0]]
            if unsaid:
                problems.append("the line does not say " + ", ".join(map(repr, unsaid)))
        outcome.left = new
        if new:
            problems.append("left " + ", ".join(new[:4]) + (" …" if len(new) > 4 else ""))
    elif c.expect == "ok":
        if status != 0:
            problems.append(f"status {status}, not 0")
        outcome.left = debris
        if debris:
            problems.append("left " + ", ".join(debris[:4]))
    elif c.expect == "warn":
        if status != 0:
            if status == 2 and len(lines) == 1 and "every-hypothesis-empty" in c.name:
                pass  # a one-line refusal is clean here too
            else:
                problems.append(f"status {status}, not 0")
        printed = out_bytes.decode(errors="replace").splitlines() + lines
        said = [line for line in printed if "warning" in line.lower() and c.warning in line]
        outcome.warning = said[0] if said else ""
        if status == 0 and not said:
            problems.append(f"no warning saying {c.warning!r} (stdout or stderr)")
        outcome.left = debris
        if debris:
            problems.append("left " + ", ".join(debris[:4]))
    else:  # signal
        expected_status = STATUS[c.signum]
        if status == 0 and sent_at is None:
            outcome.previous = "finished before the signal"
        elif status == 0 and ended - sent_at <= IGNORED_AFTER:
            outcome.previous = f"finished {ended - sent_at:.1f} s after the signal"
        elif status == 0:
            problems.append(f"exit 0 {ended - sent_at:.1f} s after the signal: it was ignored")
        elif status != expected_status:
            problems.append(f"status {status}, not {expected_status}")
        else:
            if len(lines) != 1:
                problems.append(f"{len(lines)} stderr lines, not 1")
            if not outcome.last_line.endswith(": interrupted"):
                problems.append("last line is not '...: interrupted'")
        outcome.left = debris
        if debris:
            problems.append("left " + ", ".join(debris[:4]))
    # what became of the output (and of a previous run's)
    if c.expect == "signal":
        watch = folder / c.watch
        now = table_snapshot(watch) if c.previous_kind == "table" else snapshot(watch)
        if c.previous_kind == "table":
            whole = {watch.name, f"{watch.name}.config.yaml"}
        else:
            whole = OUTPUTS[c.previous_kind]
        if now is None:
            state = "absent"
            if before_previous is not None:
                problems.append("the previous output is gone")
        elif now == before_previous:
            state = "previous intact"
        elif set(now) == whole and all(now.values()):
            state = "replaced whole" if before_previous else "new, whole"
        else:
            state = "a mix or a part: " + ", ".join(sorted(now)[:5])
            problems.append("output " + state)
        if status != 0 and state.startswith("new"):
            pass  # interrupted after the rename: whole, fine
        if status == 0 and now is None:
            problems.append("finished but wrote nothing")
        outcome.previous = (outcome.previous + "; " if outcome.previous else "") + state
    elif before_previous is not None:
        if after_previous == before_previous:
            outcome.previous = "intact"
        else:
            outcome.previous = "damaged" if after_previous else "removed"
            problems.append(f"previous output {outcome.previous}")
    return outcome


# --------------------------------------------------------------------------- report


def cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def report(outcomes: list[Outcome], seconds: float, command_line: str) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    clean = sum(o.clean for o in outcomes)
    rows = []
    for o in outcomes:
        rows.append(
            {
                "case": o.case.name,
                "family": o.case.family,
                "expect": o.case.expect,
                "command": o.command_line,
                "status": o.status,
                "stderr_lines": o.stderr_lines,
                "traceback": o.traceback,
                "left_behind": " ".join(o.left),
                "previous_output": o.previous,
                "clean": o.clean,
                "problems": "; ".join(o.problems),
                "last_stderr_line": o.last_line,
                "warning": o.warning,
                "seconds": round(o.seconds, 1),
            }
        )
    with open(RESULTS / "audit_first_contact.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    families: dict[str, list[Outcome]] = {}
    for o in outcomes:
        families.setdefault(o.case.family, []).append(o)
    lines = [
        "# First-contact audit (issue 36)",
        "",
        f"**{clean} of {len(outcomes)} clean.**",
        "",
        f"Produced by `{command_line}` in {seconds / 60:.1f} min "
        f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}). Every case is a fresh "
        "`python -m werest.cli` subprocess in a new temporary folder; the contract each case "
        "is held to is in the script's docstring (`error`: status 2, one stderr line, no "
        "traceback, nothing left behind, a previous output intact; `warn`: status 0 with a "
        "warning; `signal`: 130/143, one line 'interrupted', nothing half-written, a previous "
        "output intact or replaced whole). In the commands, `DEMO` is the embedded demo table "
        "(`werest.demo.demo_table_path()`) and `{t}` the case's temporary folder; a case's "
        "other files are made by its setup in the script.",
        "",
        "| family | cases | clean |",
        "|---|---:|---:|",
    ]
    lines += [
        f"| {name} | {len(group)} | {sum(o.clean for o in group)} |"
        for name, group in families.items()
    ]
    commands: dict[str, list[Outcome]] = {}
    for o in outcomes:
        commands.setdefault(o.case.args[0], []).append(o)
    lines += ["", "| command | cases | clean |", "|---|---:|---:|"]
    lines += [
        f"| {name} | {len(group)} | {sum(o.clean for o in group)} |"
        for name, group in sorted(commands.items())
    ]
    failing = [o for o in outcomes if not o.clean]
    if failing:
        lines += ["", "## Not clean", ""]
        lines += [
            f"- `{o.case.name}`: {'; '.join(o.problems)}. stderr ends: `{cell(o.last_line)[:200]}`"
            for o in failing
        ]
    lines += [
        "",
        "## Every case",
        "",
        "| case | expect | command | status | stderr lines | traceback | left behind "
        "| previous output | clean | stderr's last line (or the warning) |",
        "|---|---|---|---:|---:|---|---|---|---|---|",
    ]
    for o in outcomes:
        lines.append(
            f"| {o.case.name} | {o.case.expect} | `{cell(o.command_line)}` | {o.status} "
            f"| {o.stderr_lines} | {'yes' if o.traceback else 'no'} | {cell(' '.join(o.left))} "
            f"| {cell(o.previous)} | {'yes' if o.clean else '**no**'} "
            f"| {cell(o.last_line or o.warning)[:160]} |"
        )
    (RESULTS / "audit_first_contact.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds a case may run")
    parser.add_argument("--no-report", action="store_true", help="print only, write nothing")
    options = parser.parse_args()
    names = [c.name for c in CASES]
    assert len(names) == len(set(names)), [n for n in names if names.count(n) > 1]
    chosen = [c for c in CASES if options.only in c.name]
    if not can_lock():
        skipped = [c.name for c in chosen if c.immutable]
        chosen = [c for c in chosen if not c.immutable]
        if skipped:
            print(f"skipped (chattr +i needs root and chattr): {', '.join(skipped)}")
    if options.list:
        for c in chosen:
            print(f"{c.name:55} {c.family:18} {c.expect}")
        print(f"{len(chosen)} cases")
        return 0
    started = time.perf_counter()
    outcomes = []
    for i, c in enumerate(chosen, 1):
        o = run_case(c, options.timeout)
        outcomes.append(o)
        mark = "ok " if o.clean else "BAD"
        print(
            f"[{i:3}/{len(chosen)}] {mark} {c.name:50} {o.status!s:>7} {o.seconds:5.1f}s "
            f"{'; '.join(o.problems)} | {o.last_line[:140]}",
            flush=True,
        )
    seconds = time.perf_counter() - started
    clean = sum(o.clean for o in outcomes)
    print(f"{clean} of {len(outcomes)} clean in {seconds / 60:.1f} min")
    if not options.no_report and not options.only:
        command_line = "PYTHONPATH=src .venv/bin/python experiments/audit_first_contact.py"
        report(outcomes, seconds, command_line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
