"""Runs out of memory: a list keeps 1,000,000 bytes a step, then one allocation asks for far
more than any machine has (the CPU allocator's out-of-memory error)."""

import torch

kept = []
for _step in range(12):
    kept.append(torch.ones(250_000))  # PLANTED: 12,000,000 bytes held when memory runs out
scratch = torch.ones(1000)
huge = torch.empty(2**50)  # FAILS: 4 PB
