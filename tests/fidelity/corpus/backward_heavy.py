import torch

# Matrix products only (compute-bound), so that the shares do not move with memory traffic
# or page faults: forward, one product on each of two lines; backward, four (the gradients
# of both inputs of each product), all on the .backward() line.
x = torch.randn(500, 500, requires_grad=True)
w = torch.randn(500, 500, requires_grad=True)
v = torch.randn(500, 500, requires_grad=True)
for _ in range(20):
    h = x @ w
    loss = (h @ v).sum()
    loss.backward()  # PLANT:backward
