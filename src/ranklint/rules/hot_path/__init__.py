"""Hot-path rules (RNK2xx): per-step costs in training and inference loops."""

from __future__ import annotations

from ranklint.rules.hot_path.host_sync_in_hot_path import HostSyncInHotPath
from ranklint.rules.hot_path.implicit_device_or_dtype import ImplicitDeviceOrDtype
from ranklint.rules.hot_path.python_loop_over_tensor import PythonLoopOverTensor

__all__ = ["HostSyncInHotPath", "ImplicitDeviceOrDtype", "PythonLoopOverTensor"]
