"""A compiled function called with a new input size each time: recompiled until torch's
recompile limit, then run without compiling."""

import torch

torch._dynamo.config.recompile_limit = 3


@torch.compile(backend="eager", dynamic=False)  # COMPILE
def scaled(x):
    return (x * 2).sum()


for size in range(1, 7):
    scaled(torch.ones(size))  # CALL
