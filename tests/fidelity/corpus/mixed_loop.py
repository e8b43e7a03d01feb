# fidelity: columns=wall
"""A loop that mixes plain Python and torch: each kind of work stays on its own line."""
import torch

x = torch.randn(400, 400)
for _ in range(20):
    s = sum(j * j for j in range(100000))  # PLANT:python
    y = x @ x  # PLANT:torch
