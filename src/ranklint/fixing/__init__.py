"""Fixes, in one home: the text edits (a leaf), planning them from rules' pending fixes,
applying them to files in rounds, and the audit that checks a fix never hides its finding."""
