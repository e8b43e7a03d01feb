import torch

w = torch.randn(200, 200, requires_grad=True)
b = torch.zeros(200)
for _ in range(60):
    x = torch.ones(200, 200) * 2  # BEFORE: no autograd node, but the number the next one takes
    with torch.no_grad():
        b.add_(1)  # NO_GRAD: the same number
    h = torch.cumprod(x @ w, dim=1)  # FORWARD
    loss = h.sum()  # LOSS
    loss.backward()  # HOT
    v = loss.item()  # AFTER: already the number of the next iteration's first node
