"""Time in C, not in Python: each step sleeps (standing for a large op, as a CPU build's
long convolution or an LSTM over a long sequence would), then makes a few small torch
calls, a method, an operator and a function. A run takes 1.2 s or more on any machine."""

import time

import torch


def step(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    time.sleep(0.1)  # HOT
    return torch.tanh(a @ b).relu().sum()


a = torch.randn(32, 32)
b = torch.randn(32, 32)
total = 0.0
for _ in range(12):
    total += float(step(a, b))
print(f"done {total != 0.0}")
