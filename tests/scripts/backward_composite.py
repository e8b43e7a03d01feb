import torch
import torch.nn.functional as F

# F.linear on a 3-D input that needs grad makes several autograd nodes in one call
w = torch.randn(256, 256, requires_grad=True)
b = torch.zeros(256, requires_grad=True)
x = torch.randn(8, 64, 256)
for _ in range(30):
    e = x * 2 + b  # the linear's input needs grad
    h = F.linear(e, w, b)  # FORWARD
    loss = h.sum()
    loss.backward()  # HOT
