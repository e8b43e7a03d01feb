"""Small steady work, then one line that takes 320 MB for a moment, late in the run: the
process's peak RSS, placed on that line whether or not a recording window saw it."""
import time

import torch

x = torch.randn(200, 200)
end = time.perf_counter() + 2.0
while time.perf_counter() < end:
    y = x @ x  # STEADY
big = torch.ones(80_000_000)  # PEAK
del big
end = time.perf_counter() + 0.5
while time.perf_counter() < end:
    y = x @ x
