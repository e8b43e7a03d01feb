import torch

w = torch.randn(400, 400, requires_grad=True)
x = torch.randn(400, 400)
for _ in range(5):
    h = torch.cumprod(torch.sigmoid(x @ w), dim=1)  # FORWARD
    loss = h.sum()
    loss.backward()  # HOT
