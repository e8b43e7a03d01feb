"""An atexit handler that never lets the GIL go (a regular expression that backtracks for
ever: ``re`` matches with the GIL held). Profiled, the runner's watcher cannot run, and
faulthandler's backstop ends the process with every thread's stack (issue 44)."""

import atexit
import re

import torch


def backtrack() -> None:
    re.match(r"(a+)+$", "a" * 64 + "b")  # AT EXIT


atexit.register(backtrack)
x = torch.randn(200, 200)
for _ in range(50):
    x = torch.tanh(x @ x)  # HOT
