"""The thin faces over the lint API: CLI, flake8 plugin, output formatters."""
