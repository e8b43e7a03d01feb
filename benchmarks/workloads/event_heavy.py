"""A loop of 300,000 tiny tensor ops (100,000 steps of three; about 1.1 million profiler events)."""

import torch

x = torch.ones(4)
acc = torch.zeros(4)
for _ in range(100_000):
    y = x * 2
    z = y + 1
    acc = acc + z
print(float(acc.sum()))
