import torch

w = torch.randn(400, 400, requires_grad=True)
x = torch.randn(400, 400)
torch.cumprod(x * w, dim=1).sum().backward()  # warm-up: one-time costs land here
for _ in range(120):  # enough that the warm-up's one-time costs never outweigh the loop (CI: 40 was not)
    h = torch.cumprod(x * w, dim=1)  # FORWARD
    loss = h.sum()
    loss.backward()  # HOT
