"""sync_all_reduce stores the SUM in the metric's state, so update->compute sums it again.

Report: https://github.com/pytorch/ignite/pull/2803
Class: F reduction semantics

Static reach: partly; the decorator all-reduces the attribute and writes the result back
with setattr(self, attr, t). update() then adds local values to that global sum and
clears `_is_reduced`, so the next compute() all-reduces the already-summed accumulator
again (world_size times the earlier batches). Seeing it needs the attribute's value to
be followed across the decorator, update() and a second compute().
"""

from functools import wraps
from typing import Any, Callable

import torch

import ignite.distributed as idist


class Metric:
    def __init__(self, device="cpu"):
        self._device = torch.device(device)
        self._is_reduced = False
        self.reset()


def sync_all_reduce(*attrs: Any) -> Callable:
    def wrapper(func: Callable) -> Callable:
        @wraps(func)
        def another_wrapper(self: Metric, *args: Any, **kwargs: Any) -> Callable:
            ws = idist.get_world_size()
            if len(attrs) > 0 and not self._is_reduced:
                if ws > 1:
                    for attr in attrs:
                        op_kwargs = {}
                        if ":" in attr:
                            attr, op = attr.split(":")
                            op_kwargs["op"] = op
                        t = getattr(self, attr, None)
                        if t is not None:
                            t = idist.all_reduce(t, **op_kwargs)  # expect: RNK112
                            self._is_reduced = True
                            setattr(self, attr, t)
                else:
                    self._is_reduced = True

            return func(self, *args, **kwargs)

        return another_wrapper

    return wrapper


def reinit__is_reduced(func: Callable) -> Callable:
    @wraps(func)
    def wrapper(self: Metric, *args: Any, **kwargs: Any) -> None:
        func(self, *args, **kwargs)
        self._is_reduced = False

    return wrapper


class Average(Metric):
    def reset(self) -> None:
        self.accumulator = torch.tensor(0.0, dtype=torch.float64, device=self._device)
        self.num_examples = 0

    @reinit__is_reduced
    def update(self, output: torch.Tensor) -> None:
        output = output.detach().to(self.accumulator)
        self.accumulator = self.accumulator + output.sum(dim=0)
        self.num_examples += output.shape[0]

    @sync_all_reduce("accumulator", "num_examples")
    def compute(self) -> torch.Tensor:
        return self.accumulator / self.num_examples


def evaluate(metric: Average, batches):
    for batch in batches:
        metric.update(batch)
        print(metric.compute())
