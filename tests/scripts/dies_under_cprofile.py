"""Killed by itself under cProfile only: cProfile's hook is set there (sys.monitoring's
profiler tool on Python 3.12+), and on 3.11 in the cpu pass too (which counts function
entries with one), but only the cpu pass runs torch's profiler."""

import os
import signal
import sys

import torch


def under_cprofile() -> bool:
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None and monitoring.get_tool(monitoring.PROFILER_ID) == "cProfile":
        return True
    return type(sys.getprofile()).__name__ == "Profile"


if under_cprofile() and not torch.autograd._profiler_enabled():
    os.kill(os.getpid(), signal.SIGKILL)
x = torch.randn(64, 64)
for _ in range(200):
    y = torch.tanh(x @ x)  # HOT
