"""The CLI's exit codes: no findings, findings, and errors (usage, config, internal)."""

from __future__ import annotations

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
