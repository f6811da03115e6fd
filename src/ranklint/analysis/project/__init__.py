"""Across files: the project phase's facts, built from the summaries alone."""
