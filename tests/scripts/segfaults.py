"""Dies of a segmentation fault (a null pointer read) after some torch work."""

import ctypes

import torch

x = torch.randn(64, 64)
y = torch.tanh(x @ x)
ctypes.string_at(0)  # CRASH
