import torch

x = torch.randn(500, 500)
small = torch.randn(8)
for _ in range(1600):  # 0.25 s: at 400 (60 ms) its wall column once read 9.6 points low
    y = torch.tanh(x)  # PLANT:tanh
    z = torch.abs(small)
