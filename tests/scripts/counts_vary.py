"""Does different work in each run: the loop count comes from a file each run increments
(as a script reading outside data, the clock or unseeded randomness would)."""

import sys
from pathlib import Path

import torch

state = Path(sys.argv[1])
runs = int(state.read_text()) if state.exists() else 0
state.write_text(str(runs + 1))


def step(x: torch.Tensor) -> torch.Tensor:
    return (x @ x).sum()


x = torch.ones(32, 32)
for _ in range(10 + 7 * runs):
    step(x)
