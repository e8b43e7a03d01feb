"""A model compiled by inductor whose heavy line is inside its forward (a matmul and fused
pointwise ops on a detached input: no backward of its own), trained ``sys.argv[1]`` seconds
after its first step (4) on device ``sys.argv[2]`` (cpu). Keep the lines up to ``forward``'s
end where they are: tests/fixtures/inductor/'s recorded stack traces name them."""

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
device = sys.argv[2] if len(sys.argv) > 2 else "cpu"  # (a GPU's Triton kernels: "cuda")
model = Net().to(device)
compiled = torch.compile(model)  # COMPILE
opt = torch.optim.SGD(model.parameters(), lr=1e-4)
x = torch.randn(2048, 256, device=device)
seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
end = None
while end is None or time.perf_counter() < end:
    loss = compiled(x).pow(2).mean()  # CALL
    loss.backward()  # BACKWARD
    opt.step()
    opt.zero_grad()
    if end is None:  # compiled (forward and backward): train on
        end = time.perf_counter() + seconds
