import torch

x = torch.randn(400, 400)
for _ in range(80):
    s = x.sort(dim=1)  # PLANT:sort
    m = x[0].max()
