"""A line that allocates a large temporary each step: 8,000,000 bytes, freed at once."""

import torch

x = torch.randn(256, 64)
w = torch.randn(64, 64)
for _step in range(30):
    scratch = torch.empty(2_000_000)  # PLANTED: 2,000,000 float32 = 8,000,000 bytes
    scratch.fill_(1.0)
    del scratch
    y = torch.relu(x @ w)
