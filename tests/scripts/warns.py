"""torch warns (from C++) about copying a tensor with torch.tensor()."""

import torch

x = torch.randn(3)
y = torch.tensor(x)  # WARN
