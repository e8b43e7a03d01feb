import torch

params = [torch.nn.Parameter(torch.randn(512, 512)) for _ in range(16)]
for p in params:
    p.grad = torch.randn(512, 512)
optimizer = torch.optim.Adam(params, lr=0.01)  # PLANT:build
for _ in range(60):
    optimizer.step()  # PLANT:step
