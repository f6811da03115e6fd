"""Portability and configuration rules (RNK5xx): code that only runs on one machine.

One module per rule; :mod:`ranklint.rules` imports them all (a new module is
registered without touching this file).
"""
