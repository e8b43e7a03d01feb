"""A leak: a list that keeps a tensor per iteration, 1,000,000 bytes each, 20 iterations."""

import torch

x = torch.randn(128, 128)
kept = []
for _step in range(20):
    y = torch.relu(x @ x)
    kept.append(torch.ones(250_000))  # PLANTED: 250,000 float32 kept per step: 20,000,000 bytes at the end
print(len(kept))
