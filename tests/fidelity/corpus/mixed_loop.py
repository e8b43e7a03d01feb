# fidelity: columns=wall
"""A loop that mixes plain Python and torch: each kind of work stays on its own line."""
import torch

x = torch.randn(400, 400)
for _ in range(60):  # a body of about 0.4 s: at 20 (0.14 s) the wall column read 11 points off in a CI run
    s = sum(j * j for j in range(100000))  # PLANT:python
    y = x @ x  # PLANT:torch
