import torch

x = torch.randn(100, 100)
for _ in range(2000):
    y = x @ x  # HOT
