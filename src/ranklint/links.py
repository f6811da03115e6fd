"""Where ranklint and its rule pages live (a leaf module: the output formats
link to the rule pages without importing the rules)."""

from __future__ import annotations

PROJECT_URL = "https://github.com/ranklint/ranklint"
DOCS_BASE_URL = f"{PROJECT_URL}/blob/main/docs/rules"


def docs_url(code: str) -> str:
    return f"{DOCS_BASE_URL}/{code}.md"
