import torch

x = torch.randn(400, 400)
for _ in range(300):
    y = torch.tanh(x)  # HOT
    z = torch.zeros(2)
