"""A function compiled by torch.compile (TorchDynamo and AOTAutograd, the aot_eager
backend), trained inside and outside the one run's recording windows: torch compiles it
again once for the windows' line marker (its mode stack guard fails), and that version's
backward at its first .backward(), which a bare run does not. Argument: seconds of the
loop (default 3)."""

import sys
import time

import torch


@torch.compile(backend="aot_eager")
def step(x, w):
    for _ in range(30):
        x = torch.tanh(x * w + 0.1)
    return x.sum()


x = torch.randn(128, 128)
w = torch.randn(128, 128, requires_grad=True)
step(x, w).backward()  # FIRST
end = time.perf_counter() + (float(sys.argv[1]) if len(sys.argv) > 1 else 3.0)
while time.perf_counter() < end:
    step(x, w).backward()  # LOOP
