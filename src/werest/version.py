"""werest's version (base floor: what a cache key reads without importing the package's API)."""

__version__ = "0.1.0"
