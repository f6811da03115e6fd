"""Test rules (RNK6xx): apply to files matching `test-patterns` only.

One module per rule; :mod:`ranklint.rules` imports them all (a new module is
registered without touching this file).
"""
