import torch

x = torch.randn(400, 400)
with torch.profiler.record_function("outer"):
    for _ in range(30):
        y = x @ x  # HOT
z = x @ x
