"""sync_all_reduce reduces a copy and restores the local state after compute().

Report: https://github.com/pytorch/ignite/pull/2803
Class: F reduction semantics
"""

from functools import wraps
from numbers import Number
from typing import Any, Callable, cast

import torch

import ignite.distributed as idist


class Metric:
    def __init__(self, device="cpu"):
        self._device = torch.device(device)
        self.reset()


def sync_all_reduce(*attrs: Any) -> Callable:
    def wrapper(func: Callable) -> Callable:
        @wraps(func)
        def another_wrapper(self: Metric, *args: Any, **kwargs: Any) -> Callable:
            ws = idist.get_world_size()
            unreduced_attrs = {}
            if len(attrs) > 0 and ws > 1:
                for attr in attrs:
                    op_kwargs = {}
                    if ":" in attr:
                        attr, op = attr.split(":")
                        op_kwargs["op"] = op
                    t = getattr(self, attr)
                    unreduced_attrs[attr] = t
                    t_reduced = idist.all_reduce(cast(float, t) if isinstance(t, Number) else t.clone(), **op_kwargs)
                    setattr(self, attr, t_reduced)

            result = func(self, *args, **kwargs)

            for attr, value in unreduced_attrs.items():
                setattr(self, attr, value)
            return result

        return another_wrapper

    return wrapper


def reinit__is_reduced(func: Callable) -> Callable:
    @wraps(func)
    def wrapper(self: Metric, *args: Any, **kwargs: Any) -> None:
        func(self, *args, **kwargs)

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
