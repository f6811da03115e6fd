"""The engine: read, decode, parse once, walk once with the fact recorders and all
rules, suppress, run the rules' project phase on the joined facts, and run many
files in parallel with output identical to a serial run.

Three rooms: the per-file linter (:mod:`ranklint.engine.linter`), the project
phase (:mod:`ranklint.engine.project_phase`) and the process pool
(:mod:`ranklint.engine.pool`).
"""

from __future__ import annotations

from ranklint.engine.linter import FileLinter, selected_rules
from ranklint.engine.pool import lint_files
from ranklint.engine.project_phase import Linter

__all__ = ["FileLinter", "Linter", "lint_files", "selected_rules"]
