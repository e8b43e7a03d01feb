"""At least 500,000 autograd ops: a loop of tiny tensor operations."""

import torch

x = torch.ones(4)
acc = torch.zeros(4)
for _ in range(100_000):
    y = x * 2
    z = y + 1
    acc = acc + z
print(float(acc.sum()))
