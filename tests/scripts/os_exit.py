import os

import torch

x = torch.randn(300, 300)
for _ in range(10):
    y = x @ x  # HOT
os._exit(5)
