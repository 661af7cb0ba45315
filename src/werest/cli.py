"""`werest <command> [key=value ...]`: one thin entry point per command.

Each command composes its Hydra config from ``conf/<command>.yaml`` (plus any config groups it
names), applies the ``key=value`` overrides from the command line, and calls the command's
``run(cfg)`` function. Every setting's type is checked once, right after composition
(:func:`werest.config.check_settings`), before any work starts. Errors a user can cause
(:class:`werest.errors.WerestError`, a bad override) print as one line, always the last line
of stderr, and exit with status 2; there is no traceback for them. Commands log at WARNING by
default (``log_level=INFO`` shows progress), so a failing run's stderr is normally that one
line.
"""

from __future__ import annotations

import importlib
import logging
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from werest.config import check_settings
from werest.errors import ConfigError, WerestError

log = logging.getLogger("werest")

# command -> "module:function"; each function takes the composed DictConfig.
COMMANDS: dict[str, tuple[str, str]] = {
    "import": ("werest.importers", "Import real transcript layouts into one transcripts table."),
    "score": ("werest.scoring", "Corpus WER/CER with CIs per dataset and system; the ranking."),
    "features": ("werest.features.agreement", "Choose proxies; compute pWER/pCER features."),
    "embed": ("werest.features.similarity", "Add SONAR similarity or Whisper likelihood features."),
    "transcribe": ("werest.asr", "Run an ASR system over audio; add its hypotheses and RTFx."),
    "estimate": ("werest.estimate", "Estimate WER of target systems without references."),
    "leaderboard": ("werest.leaderboard", "Rank systems by label-free WER; CIs, tests, fairness."),
    "train": ("werest.training", "Fit the aWER regressor and write the model with its card."),
    "convert-model": ("werest.convert", "Convert an old pickle model you trust to skops."),
    "evaluate": ("werest.evaluation", "The four evaluation cases, baselines and ablation."),
    "demo": ("werest.demo", "Run the main job on the embedded example (no ../shared needed)."),
    "segmentation": ("werest.segmentation", "Word-boundary P/R/F1, OS, R-value of word timings."),
}


def conf_dir() -> Path:
    """The directory holding the Hydra configs (inside the wheel, or the repo's ``conf/``)."""
    packaged = Path(__file__).resolve().parent / "conf"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "conf"


def compose(command: str, overrides: Sequence[str] = ()) -> DictConfig:
    """Compose ``conf/<command>.yaml`` with ``overrides``; a bad override is a ConfigError."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    try:
        with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
            return hydra_compose(config_name=command, overrides=list(overrides))
    except (HydraException, OmegaConfBaseException) as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
        if first_line.startswith("Could not override"):
            first_line = (
                f"{first_line.rstrip('.')}: werest {command} has no such setting "
                f"(werest {command} --cfg lists them)"
            )
        raise ConfigError(f"bad configuration for 'werest {command}': {first_line}") from None


def _import_argv(argv: list[str]) -> list[str]:
    """Translate ``import FORMAT PATH... [--out FILE]`` into Hydra overrides."""
    overrides: list[str] = []
    positional: list[str] = []
    args = iter(argv)
    for arg in args:
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


def _quote(value: str) -> str:
    """Quote a value for a Hydra override so paths with odd characters stay one string."""
    escaped = re.sub(r"(\\+)(?='|$)", lambda m: m.group(1) * 2, value)
    escaped = escaped.replace("'", "\\'").replace("${", "\\${")
    return f"'{escaped}'"


def _usage() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = ["usage: werest <command> [key=value ...]", "", "commands:"]
    lines += [f"  {name:<{width}}  {about}" for name, (_, about) in COMMANDS.items()]
    lines += ["", "Each command composes conf/<command>.yaml; `werest <command> --cfg` prints it."]
    return "\n".join(lines)


def _setup_logging(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, str(level).upper(), logging.INFO),
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
        force=True,
    )


def _runner(command: str) -> Callable[[DictConfig], object]:
    module = importlib.import_module(COMMANDS[command][0])
    return module.run


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point; returns the exit status (0 ok, 2 user error)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0 if args else 2
    command, rest = args[0], args[1:]
    if command not in COMMANDS:
        print(
            f"werest: error: unknown command {command!r}; commands: {', '.join(COMMANDS)}",
            file=sys.stderr,
        )
        return 2
    show_config = "--cfg" in rest
    rest = [arg for arg in rest if arg != "--cfg"]
    try:
        overrides = _import_argv(rest) if command == "import" else rest
        cfg = compose(command, overrides)
        missing = sorted(OmegaConf.missing_keys(cfg))
        if missing and not show_config:
            raise ConfigError(
                f"missing required setting(s) {', '.join(missing)}, e.g. {missing[0]}=..."
            )
        if show_config:
            print(OmegaConf.to_yaml(cfg))
            return 0
        check_settings(command, cfg)
        _setup_logging(cfg.get("log_level", "WARNING"))
        _runner(command)(cfg)
    except WerestError as error:
        print(f"werest {command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"werest {command}: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
