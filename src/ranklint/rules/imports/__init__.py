"""Imports and logging rules (RNK3xx).

One module per rule; :mod:`ranklint.rules` imports them all (a new module is
registered without touching this file).
"""
