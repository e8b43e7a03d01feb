import math

import torch

x = torch.randn(500, 500)
for _ in range(20):
    y = x @ x  # HOT
    s = [math.sqrt(i) for i in range(20000)]  # PYTHON
