# fidelity: pass=cpu expect=call-site
import torch


@torch.jit.script
def scripted(x):
    return torch.tanh(x @ x)  # PLANT:jit


x = torch.randn(400, 400)
for _ in range(120):
    y = scripted(x)  # MEASURE:jit
