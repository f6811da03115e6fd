"""Imports and logging rules (RNK3xx)."""

from __future__ import annotations

from ranklint.rules.imports.heavy_import_at_module_level import HeavyImportAtModuleLevel
from ranklint.rules.imports.print_instead_of_logger import PrintInsteadOfLogger
from ranklint.rules.imports.wildcard_import import WildcardImport

__all__ = ["HeavyImportAtModuleLevel", "PrintInsteadOfLogger", "WildcardImport"]
