import torch

x = torch.randn(500, 500)
small = torch.randn(8)
for _ in range(400):
    y = torch.tanh(x)  # PLANT:tanh
    z = torch.abs(small)
