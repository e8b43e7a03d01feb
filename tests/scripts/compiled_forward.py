"""A model compiled by inductor (the C++ backend on a CPU) whose heavy line is inside its
forward: a matmul and a fused chain of pointwise ops, eight times a call, on a detached
input (no backward of its own). Trains for ``sys.argv[1]`` seconds after its first step
(4 by default), so that the one run's windows record compiled steps after the compile."""

import sys
import time

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inp = nn.Linear(256, 256)
        self.out = nn.Linear(256, 1)
        self.register_buffer("mix", torch.randn(256, 256) / 16)

    def forward(self, x):  # DEF
        h = torch.relu(self.inp(x))  # LIGHT
        for _ in range(8):
            h = h + torch.tanh(h.detach() @ self.mix).sin() * 0.01  # HEAVY
        return self.out(h)  # OUT


torch.manual_seed(0)
model = Net()
compiled = torch.compile(model)  # COMPILE
opt = torch.optim.SGD(model.parameters(), lr=1e-4)
x = torch.randn(2048, 256)
seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
end = None
while end is None or time.perf_counter() < end:
    loss = compiled(x).pow(2).mean()  # CALL
    loss.backward()  # BACKWARD
    opt.step()
    opt.zero_grad()
    if end is None:  # compiled (forward and backward): train on
        end = time.perf_counter() + seconds
