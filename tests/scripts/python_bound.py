"""Time in Python: a pure-Python loop for 1.2 s (then a torch call)."""

import time

import torch


def spin(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i  # HOT
    return total


begin = time.perf_counter()
while time.perf_counter() - begin < 1.2:
    spin(2000)
print(torch.tanh(torch.ones(2)).sum().item() > 0)
