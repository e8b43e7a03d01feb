import torch

x = torch.randn(2)
y = (x +  # SYNTAX
