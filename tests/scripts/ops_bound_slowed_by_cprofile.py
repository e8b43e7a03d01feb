"""ops_bound.py's shape, but slower while a profile hook is on (cProfile's, where the
cpu pass records cProfile's table beside its profiler): 1.2 s of sleeping, 2 s under it."""

import sys
import time

import torch


def profiled() -> bool:
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None and monitoring.get_tool(monitoring.PROFILER_ID) is not None:
        return True
    return sys.getprofile() is not None


nap = 2.0 / 60 if profiled() else 1.2 / 60
x = torch.randn(16, 16)
for _ in range(60):
    time.sleep(nap)  # HOT
    x = torch.tanh(x)
print("done")
