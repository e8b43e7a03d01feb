"""Killed by itself under cProfile only: cProfile's hook is set there (sys.monitoring's
profiler tool on Python 3.12+), and on 3.11 in the cpu pass too (which counts function
entries with one), but only the cpu pass has the line marker (a torch function mode;
torch's own `_profiler_enabled()` reads False there when the pass records every thread)."""

import os
import signal
import sys

import torch


def under_cprofile() -> bool:
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None and monitoring.get_tool(monitoring.PROFILER_ID) == "cProfile":
        return True
    return type(sys.getprofile()).__name__ == "Profile"


if under_cprofile() and not torch.overrides._get_current_function_mode_stack():
    os.kill(os.getpid(), signal.SIGKILL)
x = torch.randn(64, 64)
for _ in range(200):
    y = torch.tanh(x @ x)  # HOT
