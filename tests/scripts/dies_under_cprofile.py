"""Killed by itself under cProfile only (a profile hook is set there, not in the other passes)."""

import os
import signal
import sys

import torch

if type(sys.getprofile()).__name__ == "Profile":  # cProfile's; torch's tracer is not one
    os.kill(os.getpid(), signal.SIGKILL)
x = torch.randn(64, 64)
for _ in range(200):
    y = torch.tanh(x @ x)  # HOT
