"""``python -m werest.cli``: the ``werest`` console script."""

import sys

from werest.cli.main import main

sys.exit(main())
