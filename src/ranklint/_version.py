"""The ranklint version (read by the build backend and the cache fingerprint)."""

__version__ = "0.1.0"
