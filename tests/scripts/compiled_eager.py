# A function compiled with TorchDynamo (the eager backend: no C++ compiler needed), called
# 30 times: one compilation, as without a profiler.
import torch


@torch.compile(backend="eager")
def step(x, w):
    return torch.relu(x @ w).sum()


x = torch.randn(128, 128)
w = torch.randn(128, 128)
for _ in range(30):
    y = step(x, w)  # HOT
print(float(y) > 0)
