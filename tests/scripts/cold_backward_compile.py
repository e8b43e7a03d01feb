"""A model compiled by inductor with its caches off, so that every run compiles cold, as a
user's first run does: its forward compiles at the first call, its backward at the first
``.backward()`` (AOTAutograd's lazy backward, outside TorchDynamo's compile session)."""

import torch
import torch._inductor.config as inductor_config

inductor_config.force_disable_caches = True
model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))
compiled = torch.compile(model)
x = torch.randn(32, 64)
for _ in range(3):
    loss = compiled(x).sum()  # CALL
    loss.backward()  # BACKWARD
