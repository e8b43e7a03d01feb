"""A step whose backward runs Python for most of its time (a custom autograd.Function's
``backward``, as a compiled backward's wrapper or a tensor hook also does), trained for
``sys.argv[1]`` seconds (3): the one run's windows must open and close outside the
backward's nodes, whose thread state the autograd engine restores when each returns."""

import sys
import time

import torch


class Slow(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        total = 0
        for i in range(40_000):  # PYTHON
            total += i
        return grad * 2 + torch.tanh(grad) * 0


x = torch.randn(128, 128, requires_grad=True)
end = time.perf_counter() + (float(sys.argv[1]) if len(sys.argv) > 1 else 3.0)
while time.perf_counter() < end:
    y = Slow.apply(x @ x)  # FORWARD
    y.sum().backward()  # BACKWARD
