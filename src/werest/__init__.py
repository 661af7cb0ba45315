"""werest: label-free estimation of ASR word and character error rates."""

from werest.errors import ConfigError, InputError, WerestError
from werest.table import read_table, validate_table, write_table

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "InputError",
    "WerestError",
    "__version__",
    "read_table",
    "validate_table",
    "write_table",
]
