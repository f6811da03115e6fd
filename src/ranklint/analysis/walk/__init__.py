"""The per-file walk: what one file's walk knows and records."""
