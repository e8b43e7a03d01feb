"""torch.compile with two graph breaks (a data-dependent branch, a print) and a recompile
(a new input size), compiled by inductor (the C++ backend on a CPU)."""

import torch


def step(x):
    y = torch.tanh(x * 2)
    if y.sum().item() > 0:  # BREAK item
        y = y + 1
    print("stepped")  # BREAK print
    return y.relu()


compiled = torch.compile(step, dynamic=False)  # COMPILE
for size in (64, 64, 128):
    compiled(torch.ones(size))  # CALL
