"""A forward line whose activations are held until backward: 8 layers of tanh outputs of
2048 x 256 float32 (2,097,152 bytes each), 16,777,216 bytes at the start of backward.
``activation.py cuda`` does the same on a GPU (benchmarks/device/check.sh)."""

import sys

import torch

device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
torch.manual_seed(0)
x = torch.randn(2048, 256, device=device)
layers = [(torch.randn(256, 256, device=device) * 0.05).requires_grad_() for _ in range(8)]
for _step in range(4):
    h = x
    for w in layers:
        h = torch.tanh(h @ w)  # PLANTED: saved for backward, 2,097,152 bytes per layer
    loss = h.square().mean()
    loss.backward()
    for w in layers:
        w.grad = None
