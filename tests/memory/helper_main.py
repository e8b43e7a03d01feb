"""The big temporary is made inside a helper module (memory_helper.py): 12,000,000 bytes."""

import torch
from memory_helper import scratch_sum

x = torch.randn(256, 64)
total = 0.0
for _step in range(30):
    total += scratch_sum(3_000_000)
    y = torch.relu(x @ x.T)
print(total)
