"""Killed by itself under cProfile only: a cProfile hook is set there and in the cpu pass (which
counts function entries with one), but only the cpu pass runs torch's profiler."""

import os
import signal
import sys

import torch

if type(sys.getprofile()).__name__ == "Profile" and not torch.autograd._profiler_enabled():
    os.kill(os.getpid(), signal.SIGKILL)
x = torch.randn(64, 64)
for _ in range(200):
    y = torch.tanh(x @ x)  # HOT
