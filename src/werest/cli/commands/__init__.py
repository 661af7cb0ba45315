"""The commands: ``werest <command>`` is ``werest.cli.commands.<module>.run(settings)``.

Each command is thin: read its settings (one typed object, an instance of the command's class
in :mod:`werest.cli.schema`: :func:`werest.cli.config.settings_from`), make one call into the
library (the stage modules, which know nothing of configs or the console), write the outputs,
save the config beside them and show a summary. The stage modules return values and log; only
this package and :mod:`werest.cli.main` print.
"""
