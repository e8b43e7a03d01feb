"""Cheap lines right after C-heavy ones (an operator, a module call, .item()): the time stays
on the heavy lines, not on the line that runs next."""
import torch
from torch import nn

torch.manual_seed(0)
x = torch.randn(500, 500)
half = torch.randn(250, 500)
layer = nn.Linear(500, 500)
total = 0.0
for _ in range(60):  # 0.2 s: at 12 (45 ms) its op line read up to 6 points off
    d = x @ x  # PLANT:op
    n = d.shape[0] + 1
    h = layer(half)  # PLANT:module
    k = h.shape[1] + 1
    s = d.sum().item()
    total += s
