"""Shared facts computed once per file and read by every rule."""
