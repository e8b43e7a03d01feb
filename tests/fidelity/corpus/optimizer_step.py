# fidelity: columns=wall (Adam's step is 16 small foreach ops a call: much of its CPU time is
# dispatch between them, not the ops' own CPU time, and its op CPU column read 75-84% against
# 93-95% of the script's CPU time measured, 2026-12-06; the wall column is compared)
import torch

params = [torch.nn.Parameter(torch.randn(512, 512)) for _ in range(16)]
for p in params:
    p.grad = torch.randn(512, 512)
optimizer = torch.optim.Adam(params, lr=0.01)  # PLANT:build
for _ in range(60):
    optimizer.step()  # PLANT:step
