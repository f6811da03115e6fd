"""ranklint: a static analyzer for distributed PyTorch code.

The public API is :func:`lint_source` and :func:`lint_paths`; every face (CLI,
flake8 plugin, pre-commit hook) goes through them.
"""

from ranklint._version import __version__
from ranklint.api import LintResult, lint_paths, lint_source
from ranklint.config import Config, ConfigError
from ranklint.findings import Finding, Severity, TraceStep

__all__ = [
    "Config",
    "ConfigError",
    "Finding",
    "LintResult",
    "Severity",
    "TraceStep",
    "__version__",
    "lint_paths",
    "lint_source",
]
