"""The script's own TorchFunctionMode, whose Python handler runs at every torch call: the
timer's ticks land inside it, where the one run's windows must not push or pop the line
marker (torch pops the mode while its handler runs). Also pushes and pops a mode of its own
in a loop, above the line marker when a window is open."""

import time

import torch
from torch.overrides import TorchFunctionMode


class Counting(TorchFunctionMode):
    calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        Counting.calls += 1
        total = 0
        for i in range(200):  # Python time inside the handler
            total += i
        # the innermost line of the user's files of the torch calls below:
        return func(*args, **(kwargs or {}))  # CALL


x = torch.randn(64, 64)
end = time.perf_counter() + 2.0
with Counting():
    while time.perf_counter() < end:
        x = torch.tanh(x @ x)  # HOT
for _ in range(300):
    with Counting():
        x = torch.relu(x)
print("calls", Counting.calls > 0)
