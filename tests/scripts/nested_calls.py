"""Three levels of the script's own functions for 1.5 s: the function table of the sampled
stacks puts main, outer and inner in that order by total time, inner's time its own."""
import time

import torch

x = torch.randn(300, 300)


def inner():
    return torch.exp(x) @ x  # HOT


def outer():
    for _ in range(20):
        inner()


def main():
    end = time.perf_counter() + 1.5
    while time.perf_counter() < end:
        outer()


main()
