"""The CLI a user expects (issue 13, item 6): --version, --help on every command, Hydra's
hints in error lines, no BrokenPipeError traceback, and a "wrote ..." line."""

from __future__ import annotations

import subprocess
import sys
import tomllib

import pytest
from omegaconf import OmegaConf

import werest
from tests.conftest import REPO
from tests.unit.test_config_schema import option_keys
from werest.cli.config import compose, conf_dir
from werest.cli.declare import ABSENT, entries
from werest.cli.help import _flatten, yaml_comments
from werest.cli.main import COMMANDS, main
from werest.cli.plain import compose_plain
from werest.cli.schema import SCHEMAS


def group_choices() -> list[tuple[str, list[str]]]:
    """``(command, overrides)``: each command alone, then with every option of every config
    group its defaults list names (``model@ablation.model`` too)."""
    import re

    cases = []
    for command in sorted(COMMANDS):
        cases.append((command, []))
        text = (conf_dir() / f"{command}.yaml").read_text(encoding="utf-8")
        for key in re.findall(r"^\s*-\s*([\w/@.]+)\s*:", text, flags=re.M):
            group = key.partition("@")[0]
            for option in sorted(p.stem for p in (conf_dir() / group).glob("*.yaml")):
                cases.append((command, [f"{key}={option}"]))
    return cases


@pytest.mark.parametrize(("command", "overrides"), group_choices())
def test_help_composes_the_config_hydra_composes(command, overrides):
    """--help composes without Hydra (werest.cli.plain); it must give Hydra's config, key for
    key and in the same order, for every command and every config group option."""
    hydra = OmegaConf.to_container(compose(command, overrides), resolve=False)
    plain = compose_plain(command, overrides, conf_dir())
    assert plain == hydra
    assert list(_flatten(plain)) == list(_flatten(hydra))


@pytest.mark.parametrize(
    "overrides",
    [
        ["input=x.csv", "target=[a,b]", "bootstrap.seed=3"],
        ["experiment=lodo", "lodo.held_out=[phone-es,librispeech]", "model=stack"],
        ["n_jobs=4", "cluster=local", "cluster.workers=3", "output_dir='out dir'"],
    ],
)
def test_help_shows_the_overrides_as_hydra_composes_them(overrides):
    command = "evaluate" if "experiment=lodo" in overrides else "leaderboard"
    if command == "leaderboard":
        overrides = [o for o in overrides if not o.startswith("target")]
    hydra = OmegaConf.to_container(compose(command, overrides), resolve=False)
    assert compose_plain(command, overrides, conf_dir()) == hydra


def test_help_names_the_options_of_a_group_for_an_unknown_option(capsys):
    assert main(["transcribe", "asr=nope", "--help"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "asr=nope: no such option" in err, err
    assert "faster_whisper, pocketsphinx" in err


def test_version(capsys):
    assert main(["--version"]) == 0
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert capsys.readouterr().out.strip() == f"werest {werest.__version__}"
    assert werest.__version__ == project["version"]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_lists_every_setting_and_an_example(command, capsys):
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    cfg = OmegaConf.to_container(compose(command), resolve=False, throw_on_missing=False)
    for key, _ in _flatten(cfg):
        assert f"  {key}=" in out, f"{key} missing from werest {command} --help"
    assert f"examples:\n  werest {command}" in out


def shown(value) -> str:
    """A default as --help writes it: YAML's spelling, lists inline."""
    if isinstance(value, list):
        return "[" + ",".join(shown(v) for v in value) + "]"
    if value is None:
        return "null"
    return str(value).lower() if isinstance(value, bool) else str(value)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_is_generated_from_the_one_declaration(command, capsys):
    """Every setting the command's class declares is listed as key=default with its declared
    help, whole (a declared default that a group's default option replaces: with that
    option's value), and every block's help heads its keys."""
    assert main([command, "--help"]) == 0
    lines = capsys.readouterr().out.splitlines()
    replaced = option_keys(command)
    checked = 0
    for entry in entries(SCHEMAS[command]):
        if entry.setting is None:
            heads = [line for line in lines if line.startswith(f"  {entry.key}.* ")]
            if entry.help:
                assert [line.split("  # ", 1)[1] for line in heads] == [entry.help]
            continue
        if entry.default is ABSENT or isinstance(entry.default, dict):
            continue  # given by a group option / listed key by key
        (line,) = [line for line in lines if line.startswith(f"  {entry.key}=")]
        value, _, text = line[2 + len(entry.key) + 1 :].partition("  # ")
        if entry.key not in replaced:
            assert value.rstrip() == shown(entry.default), line
        assert text == entry.help, line
        checked += 1
    assert checked >= 3


def test_help_of_a_chosen_config_group_option(capsys):
    assert main(["transcribe", "asr=faster_whisper", "--help"]) == 0
    out = capsys.readouterr().out
    assert "asr.beam_size=" in out and "asr=faster_whisper|pocketsphinx" in out


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["estimate", "input=x", "target=a,b"], "To use it as a list, use key=[value1,value2]"),
        (["estimate", "input=x", "no_such=1"], "has no such setting (werest estimate --help"),
        (["estimate", "input=x", "targt=edge"], "has no such setting (werest estimate --help"),
        (["estimate", "input=x", "targt=edge"], "did you mean target?"),
        (
            ["estimate", "input=x", "+targt=edge"],
            "werest estimate has no setting 'targt' (did you mean target?)",
        ),
        (
            ["transcribe", "input=x", "out=y", "asr=nope"],
            "Available options in 'asr': faster_whisper, pocketsphinx, pocketsphinx_an4",
        ),
    ],
)
def test_hydra_hints_are_kept_on_one_error_line(args, hint, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and hint in err, err
    assert "--multirun" not in err and "search path" not in err


def test_a_closed_pipe_is_not_a_traceback():
    """`werest embed --cfg | head`: the reader is gone before werest writes."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from werest.cli.main import main; sys.exit(main(['embed', '--cfg']))",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    process.stdout.close()
    err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 141
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


def test_a_wrote_line_names_the_outputs(tmp_path, capsys):
    table = tmp_path / "t.csv"
    table.write_text(
        "dataset,utt_id,system,hypothesis,reference\n"
        "d,u1,a,hello world,hello world\nd,u1,b,hello word,hello world\n",
        encoding="utf-8",
    )
    assert main(["score", f"input={table}", f"output_dir={tmp_path / 'out'}"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    written = sorted((tmp_path / "out").iterdir())
    assert "scores.csv" in {p.name for p in written}
    if len(written) <= 4:  # named one by one, else counted per folder
        assert set(last.removeprefix("wrote ").split(", ")) == {str(p) for p in written}
    else:
        assert last == f"wrote {len(written)} files in {tmp_path / 'out'}"
    assert main(["score", "--cfg", f"input={table}"]) == 0
    assert "\nwrote " not in capsys.readouterr().out


def test_cfg_resolve_prints_the_values_a_run_reads(capsys):
    """``--cfg`` prints the config as composed (``${n_jobs}``, ``${library:...}`` as written);
    ``--cfg --resolve`` as the run reads it, so a script can read a config group option
    through the CLI; ``--resolve`` alone is one line, exit 2."""
    import yaml

    from werest.features.agreement import PANEL_SIZE

    assert main(["evaluate", "experiment=lodo", "model=hgb", "n_jobs=3", "--cfg"]) == 0
    assert "${n_jobs}" in capsys.readouterr().out
    args = ["evaluate", "experiment=lodo", "model=hgb", "n_jobs=3", "--cfg", "--resolve"]
    assert main(args) == 0
    config = yaml.safe_load(capsys.readouterr().out)
    assert config["model"]["n_jobs"] == 3 and config["lodo"]["panel"] == PANEL_SIZE
    assert main(["evaluate", "--resolve"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "werest evaluate: error: --resolve goes with --cfg: werest evaluate --cfg --resolve "
        "prints the config a run would read"
    ]


def test_a_long_help_text_is_shown_whole(capsys):
    """Long help texts (werest import's, once comments continued over several YAML lines) are
    shown whole, not cut mid-sentence."""
    assert main(["import", "--help"]) == 0
    out = capsys.readouterr().out
    assert "| svarah | verli | csv" in out
    assert "dataset name (default from the layout; csv: the file's folder name)" in out
    assert "(csv default: the file's stem)" in out


def test_an_option_files_comment_continued_on_the_next_lines_is_one_comment(tmp_path):
    """A config group option's comments feed --help for the keys no class describes: a comment
    continued on the next lines ('#' alone, in the same column) is one comment."""
    path = tmp_path / "option.yaml"
    path.write_text(
        "# header\n"
        "beam: 5        # beams in the search,\n"
        "               # more is slower\n"
        "lm:\n"
        "  weight: 0.5  # the language model's weight\n"
        "# a comment of its own\n"
        "other: 1\n",
        encoding="utf-8",
    )
    assert yaml_comments(path, "asr.") == {
        "asr.beam": "beams in the search, more is slower",
        "asr.lm.weight": "the language model's weight",
    }


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["estimate", "data.csv"],
            "werest estimate: error: 'data.csv' is not a setting; settings are key=value, "
            "e.g. input=data.csv (werest estimate --help lists them)",
        ),
        (
            ["estimate", "--hlep"],
            "werest estimate: error: unknown option '--hlep'; did you mean --help? the options "
            "are --help, -h, --cfg, --resolve, and settings are key=value (werest estimate --help "
            "lists them)",
        ),
        (
            ["segmentation", "ref.ctm"],
            "werest segmentation: error: 'ref.ctm' is not a setting; settings are key=value, "
            "e.g. reference=... (werest segmentation --help lists them)",
        ),
        (
            ["import", "csv", "t.csv", "--uot", "x.parquet"],
            "werest import: error: unknown option '--uot'; did you mean --out? the options are "
            "--out, -o, --help, -h, --cfg, --resolve, and settings are key=value (werest import "
            "--help lists them)",
        ),
    ],
)
def test_a_word_that_is_no_setting_says_what_to_type(args, line, capsys):
    """Hydra's parser calls these "extraneous input '/' expecting {EQUAL,...}" and
    "LexerNoViableAltException"; werest says what to type instead, in one line, exit 2."""
    assert main(args) == 2
    assert capsys.readouterr().err == line + "\n"


def test_only_the_process_entry_tunes_and_freezes_the_collector(capsys):
    """``werest`` as a process collects young objects less often and freezes its heap before
    the interpreter exits (its final collections would walk it again); ``main(argv)`` in
    a caller's process leaves the caller's collector as it was."""
    import gc

    before = gc.get_threshold(), gc.get_freeze_count()
    assert main(["--version"]) == 0
    assert (gc.get_threshold(), gc.get_freeze_count()) == before
    capsys.readouterr()
    probe = (
        "import gc, sys; from werest.cli.main import main, YOUNG_THRESHOLD;"
        "sys.argv = ['werest', '--version']; status = main();"
        "print(gc.get_threshold()[0] == YOUNG_THRESHOLD, gc.get_freeze_count() > 0, status)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.splitlines()[-1] == "True True 0", done.stdout
