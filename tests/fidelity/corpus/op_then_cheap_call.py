"""A line that is one operator, then a line whose only C work is a cheap call. Python runs
the sampler's timer handler at that call, not inside the operator, so a tick that arrived
during the matrix product used to be charged to the cheap line: half of the wall time
(51%, against well under 1% measured), and the cheap line shown first."""
import time

import torch

torch.manual_seed(0)
x = torch.randn(200, 200)
never = 0.0
for _ in range(800):
    y = x @ x  # PLANT:op
    if time.perf_counter() < never:  # PLANT:cheap
        break
