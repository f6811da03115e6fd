"""Allow ``python -m ranklint``."""

from ranklint.faces.cli import main

raise SystemExit(main())
