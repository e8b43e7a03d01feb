"""Builds an optimizer where the compiler-stack guess cannot see it (no telling word in this
file): torch loads its compiler stack at this script's construction line, in the middle of the
run. Separate runs set that import aside; the one run keeps it on that line, as one-time work."""
import torch

w = torch.zeros(400, 400, requires_grad=True)
x = torch.randn(400, 400)
maker = getattr(torch, "op" + "tim").SGD
trainer = maker([w], lr=0.01)  # LOADS
for _ in range(30):
    loss = (x @ w).square().mean()  # HOT
    loss.backward()
    trainer.step()
    trainer.zero_grad()
