"""`werest <command> [key=value ...]`: one thin entry point per command.

Each command composes its Hydra config from the defaults its settings class declares
(:mod:`werest.cli.schema`) and the config groups ``conf/<command>.yaml`` names, applies the
``key=value`` overrides from the command line, and calls the command's ``run(settings)``
function with one typed settings object, an instance of the command's class in
:mod:`werest.cli.schema`. Every setting's type is checked once, right after composition
(:func:`werest.cli.config.check_settings`, then :func:`werest.cli.config.settings_from`),
before any work starts. Errors a user can cause
(:class:`werest.errors.WerestError`, a bad override) print as one line, always the last line
of stderr, and exit with status 2; there is no traceback for them. Commands log at WARNING by
default (``log_level=INFO`` logs each stage with its duration; ``progress=false`` turns the
progress bars off), so a failing run's stderr is normally that one line.

SIGINT (Ctrl-C) and SIGTERM stop a run as exceptions (KeyboardInterrupt and
:class:`werest.io.Terminated`), so every command's staged outputs
(:func:`werest.io.staged_output`) are removed or left whole as any failure leaves them; the
command then prints one line, "interrupted", and exits with 130 (SIGINT) or 143 (SIGTERM),
the statuses of a shell's killed process.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import logging
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from werest import logs
from werest.errors import ConfigError, WerestError
from werest.formatting import plural
from werest.io import Terminated, recorded_writes

log = logging.getLogger("werest")

# command -> (its module in werest.cli.commands, whose run() takes its settings object; about)
COMMANDS: dict[str, tuple[str, str]] = {
    "import": ("import_table", "Import real transcript layouts into one transcripts table."),
    "score": ("score", "Corpus WER/CER with CIs per dataset and system; the ranking."),
    "features": ("features", "Choose proxies; compute pWER/pCER features."),
    "embed": ("embed", "Add SONAR similarity or Whisper likelihood features."),
    "transcribe": ("transcribe", "Run an ASR system over audio; add its hypotheses and RTFx."),
    "estimate": ("estimate", "Estimate WER of target systems without references."),
    "sample": ("sample", "The label loop's next sheet: utterances to transcribe."),
    "leaderboard": ("leaderboard", "Rank systems by label-free WER; CIs, tests, fairness."),
    "train": ("train", "Fit the aWER regressor and write the model with its card."),
    "convert-model": ("convert_model", "Convert an old pickle model you trust to skops."),
    "evaluate": ("evaluate", "The four evaluation cases, baselines and ablation."),
    "demo": ("demo", "Run the main job on the embedded example (no ../shared needed)."),
    "segmentation": ("segmentation", "Word-boundary P/R/F1, OS, R-value of word timings."),
}


def _import_argv(argv: list[str]) -> list[str]:
    """Translate ``import FORMAT PATH... [--out FILE]`` into Hydra overrides."""
    overrides: list[str] = []
    positional: list[str] = []
    args = iter(argv)
    for arg in args:
        if arg.startswith("-") and arg not in ("--out", "-o") and not arg.startswith("--out="):
            raise ConfigError(_unknown_flag("import", arg, ("--out", "-o", *FLAGS)))
        if arg in ("--out", "-o"):
            value = next(args, None)
            if value is None:
                raise ConfigError("--out needs a file name, e.g. --out table.parquet")
            overrides.append(f"out={_quote(value)}")
        elif arg.startswith("--out="):
            overrides.append(f"out={_quote(arg.split('=', 1)[1])}")
        elif "=" in arg and not Path(arg).exists():
            overrides.append(arg)
        else:
            positional.append(arg)
    if positional:
        overrides.insert(0, f"format={positional[0]}")
    if len(positional) > 1:
        paths = ",".join(_quote(p) for p in positional[1:])
        overrides.insert(1, f"paths=[{paths}]")
    return overrides


#: the flags every command takes (besides its key=value settings)
FLAGS = ("--help", "-h", "--cfg", "--resolve")


def _overrides(command: str, args: list[str]) -> list[str]:
    """The ``key=value`` settings of a command line, or a ConfigError saying what to type for
    an argument Hydra's parser would only call "extraneous input" or
    "LexerNoViableAltException": a flag werest does not know, or a bare word or path."""
    for arg in args:
        if arg.startswith("-"):
            raise ConfigError(_unknown_flag(command, arg))
        if "=" not in arg and not arg.startswith("~"):  # ~key deletes a key: Hydra's own
            raise ConfigError(_not_a_setting(command, arg))
    return args


def _unknown_flag(command: str, arg: str, flags: Sequence[str] = FLAGS) -> str:
    import difflib

    name = arg.split("=", 1)[0]
    close = difflib.get_close_matches(name, [f for f in flags if f.startswith("--")], n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    return (
        f"unknown option {name!r}; {hint}the options are {', '.join(flags)}, and settings "
        f"are key=value (werest {command} --help lists them)"
    )


def _not_a_setting(command: str, arg: str) -> str:
    """ "'data.csv' is not a setting; settings are key=value, e.g. input=data.csv"."""
    from werest.cli.declare import entries
    from werest.cli.schema import SCHEMAS

    keys = [e.key for e in entries(SCHEMAS[command]) if e.setting is not None]
    required = [e.key for e in entries(SCHEMAS[command]) if e.default == "???"]
    key = "input" if "input" in keys else (required or keys or ["key"])[0]
    value = arg if key == "input" or not required else "..."
    return (
        f"{arg!r} is not a setting; settings are key=value, e.g. {key}={_shown_arg(value)} "
        f"(werest {command} --help lists them)"
    )


def _shown_arg(value: str) -> str:
    return value if re.fullmatch(r"[\w./:-]+", value) else _quote(value)


def _quote(value: str) -> str:
    """Quote a value for a Hydra override so paths with odd characters stay one string."""
    escaped = re.sub(r"(\\+)(?='|$)", lambda m: m.group(1) * 2, value)
    escaped = escaped.replace("'", "\\'").replace("${", "\\${")
    return f"'{escaped}'"


def _usage() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = ["usage: werest <command> [key=value ...]", "", "commands:"]
    lines += [f"  {name:<{width}}  {about}" for name, (_, about) in COMMANDS.items()]
    lines += [
        "",
        "Each command composes conf/<command>.yaml; `werest <command> --help` lists its",
        "settings with their help, `werest <command> --cfg` prints the composed config",
        "(`--cfg --resolve`: with its ${...} references resolved, as the run would read it).",
        "`werest --version` prints the version.",
    ]
    return "\n".join(lines)


def _wrote(paths: list[Path]) -> str:
    """One "wrote ..." line for the files a command wrote (grouped by folder when many)."""
    unique = list(dict.fromkeys(paths))
    if len(unique) <= 4:
        return "wrote " + ", ".join(str(p) for p in unique)
    folders = dict.fromkeys(p.parent for p in unique)
    return "wrote " + "; ".join(
        f"{plural(sum(p.parent == f for p in unique), 'file')} in {f}" for f in folders
    )


def _runner(command: str) -> Callable[[object], object]:
    module = importlib.import_module(f"werest.cli.commands.{COMMANDS[command][0]}")
    return module.run


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point; returns the exit status (0 ok, 2 user error, 130/143 interrupted
    by SIGINT/SIGTERM)."""
    args = list(sys.argv[1:] if argv is None else argv)
    previous: dict[int, object] = {}
    if argv is None:  # the process's own entry (a caller of main(argv) keeps its collector)
        _process_collection()
    try:
        previous |= _stop_signals_as_exceptions()
        status = _main(args)
        _finished(process=argv is None)
    except BrokenPipeError:
        # The reader went away (`werest embed --cfg | head`): not an error of werest's.
        # Point stdout at devnull so the interpreter's final flush does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        status = 141  # 128 + SIGPIPE, what a process killed by the signal returns
    except BaseException as error:
        # KeyboardInterrupt and Terminated, or whatever a library turned them into when the
        # signal arrived inside it (a class body being created wraps them in RuntimeError).
        if not (_received or isinstance(error, KeyboardInterrupt)):
            raise
        command = args[0] if args and args[0] in COMMANDS else None
        print(f"werest{f' {command}' if command else ''}: interrupted", file=sys.stderr)
        terminated = isinstance(error, Terminated) or signal.SIGTERM in _received
        status = 143 if terminated else 130
        if argv is None:  # the process's own entry: its outputs are cleaned up already
            # Skip the interpreter's finalisation: a library thread interrupted mid-call
            # can abort it ("Fatal Python error: PyThreadState_Get", exit -6 once in CI).
            _release_multiprocessing()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
    finally:
        # A process that is only exiting now ignores them (its outputs are whole: a signal
        # must not turn a finished run into a traceback); a caller's handlers come back.
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_IGN if argv is None else handler)
    return status


#: the process's young-generation threshold (Python's default is 700): a run allocates
#: millions of container objects that live to its end, and at 700 the collector's full
#: passes walk them again and again (a round's seconds: ``experiments/bench_winner_round.py``)
YOUNG_THRESHOLD = 50_000


def _process_collection() -> None:
    """A ``werest`` process's collector: young collections every :data:`YOUNG_THRESHOLD`
    allocations, not every 700 (reference cycles are still collected, less often). After the
    command, :func:`main` freezes the heap (``gc.freeze``), so the interpreter's exit does
    not walk it again in its final collections; objects are still released and ``atexit``
    runs as before."""
    gc.set_threshold(YOUNG_THRESHOLD, *gc.get_threshold()[1:])


def _finished(*, process: bool) -> None:
    """The command is done: its output flushed; a ``werest`` ``process``, which only exits
    now, freezes its heap (:func:`_process_collection`)."""
    sys.stdout.flush()
    if process:
        gc.freeze()


def _release_multiprocessing() -> None:
    """Run multiprocessing's exit finalizers (what its atexit hook does) before ``os._exit``:
    they unlink the semaphores of a partitioned run's pools, which the resource tracker would
    otherwise report as leaked, on stderr, after the one "interrupted" line."""
    util = sys.modules.get("multiprocessing.util")
    if util is None:
        return
    with contextlib.suppress(Exception):  # exiting anyway: only the tracker's warning is lost
        util._run_finalizers(0)


def _stop_signals_as_exceptions() -> dict[int, object]:
    """SIGINT raises KeyboardInterrupt and SIGTERM :class:`werest.io.Terminated` in the main
    thread (a signal the parent process ignores stays ignored); the handlers replaced."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    _received.clear()
    handlers = {signal.SIGINT: _interrupt, signal.SIGTERM: _terminate}
    previous = {}
    for signum, handler in handlers.items():
        current = signal.getsignal(signum)
        if current not in (signal.SIG_IGN, None):
            previous[signum] = signal.signal(signum, handler)
    if previous and sys.unraisablehook is not _unraisable:
        _unraisable.previous = sys.unraisablehook
        sys.unraisablehook = _unraisable
    return previous


def _unraisable(unraisable) -> None:
    """A stop signal whose exception was raised inside a callback Python cannot raise from (a
    weak reference's, a ``__del__`` run by the garbage collector) would be printed there as
    "Exception ignored" with a traceback, and lost: the run would go on. It is sent again by a
    timer thread, once this callback is over (:data:`RESEND_SECONDS`), so the handler raises
    it where it can stop the run (a signal raised here would be handled, and lost, here)."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt | Terminated) and _received:
        again = threading.Timer(RESEND_SECONDS, os.kill, (os.getpid(), _received[-1]))
        again.daemon = True
        again.start()
        return
    _unraisable.previous(unraisable)


_unraisable.previous = sys.unraisablehook
#: how long after a lost stop signal it is sent again: the callback it was lost in has
#: returned by then (a few bytecodes of the collector's)
RESEND_SECONDS = 0.05


_received: list[int] = []  # the stop signals this process received while running a command


def _interrupt(signum: int, frame) -> None:
    _received.append(signum)
    raise KeyboardInterrupt


def _terminate(signum: int, frame) -> None:
    _received.append(signum)
    raise Terminated(f"signal {signum}")


def _main(args: list[str]) -> int:
    if not args or args[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0 if args else 2
    if args[0] in ("--version", "-V", "version"):
        from werest import __version__

        print(f"werest {__version__}")
        return 0
    command, rest = args[0], args[1:]
    if command not in COMMANDS:
        print(
            f"werest: error: unknown command {command!r}; commands: {', '.join(COMMANDS)}",
            file=sys.stderr,
        )
        return 2
    show_config = "--cfg" in rest
    resolve = "--resolve" in rest
    show_help = "--help" in rest or "-h" in rest
    rest = [arg for arg in rest if arg not in ("--cfg", "--resolve", "--help", "-h")]
    if show_help:
        return _help(command, rest)
    if resolve and not show_config:
        print(
            f"werest {command}: error: --resolve goes with --cfg: werest {command} --cfg "
            "--resolve prints the config a run would read",
            file=sys.stderr,
        )
        return 2
    try:
        return _run(command, rest, show_config=show_config, resolve=resolve)
    except WerestError as error:
        print(f"werest {command}: error: {error}", file=sys.stderr)
        return 2


def _run(command: str, rest: list[str], *, show_config: bool, resolve: bool) -> int:
    """Compose the command's config, then print it (``--cfg``) or run the command with its
    settings object; a mistake is a WerestError, which the caller prints in one line."""
    from omegaconf import OmegaConf

    from werest.cli.config import check_settings, compose, settings_from, unset_required

    overrides = _import_argv(rest) if command == "import" else _overrides(command, rest)
    cfg = compose(command, overrides)
    missing = unset_required(command, cfg)
    if missing and not show_config:
        raise ConfigError(
            f"missing required setting(s) {', '.join(missing)}, e.g. {missing[0]}=... "
            f"(werest {command} --help lists the settings)"
        )
    if show_config:  # --resolve: the values a run reads (${n_jobs}, ${library:...})
        print(OmegaConf.to_yaml(cfg, resolve=resolve))
        return 0
    settings = settings_from(command, check_settings(command, cfg))
    logs.setup(settings.log_level, progress=settings.progress)
    with recorded_writes() as written:
        _runner(command)(settings)
    if written:
        print(_wrote(written))
    return 0


def _help(command: str, rest: list[str]) -> int:
    """``werest <command> --help``: composed without Hydra (:mod:`werest.cli.plain`), so it
    imports no numerical or config library and starts as fast as ``werest --help``."""
    from werest.cli.help import command_help
    from werest.cli.plain import compose_plain
    from werest.io import shipped

    try:
        overrides = _import_argv(rest) if command == "import" else rest
        conf = shipped("conf")
        container = compose_plain(command, overrides, conf)
        print(command_help(command, COMMANDS[command][1], container, conf, overrides))
    except WerestError as error:
        print(f"werest {command}: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
