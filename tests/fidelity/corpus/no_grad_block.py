import torch

w = torch.randn(500, 500, requires_grad=True)
x = torch.randn(500, 500)
with torch.no_grad():
    for _ in range(100):
        y = torch.tanh(x @ w)  # PLANT:nograd
