"""The command line: ``werest <command> [key=value ...]`` (:mod:`werest.cli.main`), the
commands' configs (:mod:`werest.cli.config`, :mod:`werest.cli.schema`), their ``--help``
(:mod:`werest.cli.help`) and the commands themselves (:mod:`werest.cli.commands`)."""

from werest.cli.main import main

__all__ = ["main"]
