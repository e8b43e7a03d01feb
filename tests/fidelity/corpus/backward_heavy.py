import torch

# Few, large operations: the profiler's fixed cost per operation (the backward line runs
# four times as many as the forward lines) stays a negligible part of each one.
w = torch.randn(1000, 1000, requires_grad=True)
x = torch.randn(1000, 1000)
for _ in range(16):
    h = torch.cumprod(x * w, dim=1)
    loss = h.sum()
    loss.backward()  # PLANT:backward
