"""A loop of tiny tensor ops of about 120,000 profiler events (33,000 torch calls): the
event-heavy loop at the size issue 15's check measured (start-up weighs more than at 1.1
million events)."""

import torch

x = torch.ones(4)
acc = torch.zeros(4)
for _ in range(11_000):
    y = x * 2
    z = y + 1
    acc = acc + z
print(float(acc.sum()))
