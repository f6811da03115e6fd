"""Hot-path rules (RNK2xx): per-step costs in training and inference loops.

One module per rule; :mod:`ranklint.rules` imports them all (a new module is
registered without touching this file).
"""
