"""Process group and collective rules (RNK1xx).

One module per rule; :mod:`ranklint.rules` imports them all (a new module is
registered without touching this file).
"""
