"""Async rollout rules (RNK4xx): blocking calls and lost coroutines in asyncio code."""

from __future__ import annotations

from ranklint.rules.asynchronous.blocking_call_in_async import BlockingCallInAsync
from ranklint.rules.asynchronous.coroutine_never_awaited import CoroutineNeverAwaited

__all__ = ["BlockingCallInAsync", "CoroutineNeverAwaited"]
