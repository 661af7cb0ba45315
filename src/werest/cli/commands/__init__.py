"""The commands: ``werest <command>`` is ``werest.cli.commands.<module>.run(cfg)``.

Each command is thin: read its composed config, make one call into the library (the stage
modules, which know nothing of configs or the console), write the outputs, save the config
beside them and show a summary. The stage modules return values and log; only this package
and :mod:`werest.cli.main` print.
"""
