import torch

x = torch.randn(200, 200)
while True:
    y = x @ x  # HOT
