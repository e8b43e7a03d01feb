"""A record_function block: its range is a context (no op time), the ops inside stay on their lines."""
import torch

x = torch.randn(600, 600)
w = torch.randn(600, 600)
v = torch.randn(200, 600)
for _ in range(6):
    with torch.profiler.record_function("block"):
        for _ in range(6):
            y = x @ w  # PLANT:inside
    u = v @ w  # PLANT:outside
