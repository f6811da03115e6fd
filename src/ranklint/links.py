"""Where ranklint's rule pages live (a leaf module: the output formats link to the
rule pages without importing the rules).

ranklint has no public web site yet, so by default every link is a ``file://``
URI to the rule pages shipped with it: inside an installed wheel
(``ranklint/_data/docs/rules/``, copied from ``docs/rules/`` at build time), or in
the checkout's ``docs/rules/`` for an editable install. A team that hosts the pages
somewhere (a fork, an internal site) sets ``RANKLINT_DOCS_URL`` to the folder that
holds ``RNK101.md`` and the others, and every link points there instead.
``ranklint rule RNK101`` prints the same page in any case.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

logger = logging.getLogger(__name__)

DOCS_URL_ENV = "RANKLINT_DOCS_URL"

_PACKAGE = Path(__file__).resolve().parent
# Where the wheel carries the rule pages (pyproject's force-include), and where a
# checkout (an editable install, or src/ on the path) has them.
PACKAGED_RULES_DIR = _PACKAGE / "_data" / "docs" / "rules"
CHECKOUT_RULES_DIR = _PACKAGE.parent.parent / "docs" / "rules"


def rules_dir() -> Path:
    """The folder of the rule pages that ship with this ranklint."""
    for folder in (PACKAGED_RULES_DIR, CHECKOUT_RULES_DIR):
        if (folder / "README.md").is_file():
            return folder
    logger.debug("no rule pages in %s or %s", PACKAGED_RULES_DIR, CHECKOUT_RULES_DIR)
    return PACKAGED_RULES_DIR


def docs_base_url() -> str:
    """The URL of the folder of rule pages: ``$RANKLINT_DOCS_URL``, or the shipped pages."""
    configured = os.environ.get(DOCS_URL_ENV, "").strip()
    if configured:
        return configured.rstrip("/")
    return rules_dir().as_uri()


def docs_url(code: str) -> str:
    """The URL of rule ``code``'s page (a ``file://`` URI unless ``RANKLINT_DOCS_URL`` is set)."""
    return f"{docs_base_url()}/{code}.md"


def project_url() -> str:
    """What SARIF names as the tool's home: the index of the rule pages."""
    return f"{docs_base_url()}/README.md"


# Read once, when the output formats are imported (the CLI's start).
PROJECT_URL = project_url()
