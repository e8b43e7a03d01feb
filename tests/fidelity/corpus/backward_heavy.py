import torch

w = torch.randn(400, 400, requires_grad=True)
x = torch.randn(400, 400)
for _ in range(100):
    h = torch.cumprod(x * w, dim=1)
    loss = h.sum()
    loss.backward()  # PLANT:backward
