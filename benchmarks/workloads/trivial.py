import torch

x = torch.ones(3)
print(float((x * 2).sum()))
