"""Framework rules (RNK0xx): problems with the file itself.

One module per rule; :mod:`ranklint.rules` imports them all (a new module is
registered without touching this file).
"""
