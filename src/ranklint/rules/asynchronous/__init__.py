"""Async rollout rules (RNK4xx): blocking calls and lost coroutines in asyncio code.

One module per rule; :mod:`ranklint.rules` imports them all (a new module is
registered without touching this file).
"""
