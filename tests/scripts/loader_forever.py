"""Trains forever on batches from two DataLoader workers (a long run, cut by --duration or
--timeout). Workers killed before the main process make torch raise "DataLoader worker (pid
N) is killed by signal" in the main thread."""

import torch
from torch.utils.data import DataLoader, TensorDataset

data = TensorDataset(torch.randn(256, 32), torch.randn(256, 1))
loader = DataLoader(data, batch_size=32, num_workers=2, shuffle=True)
weight = torch.randn(32, 2048)
while True:
    for inputs, _targets in loader:
        for _ in range(50):
            h = torch.tanh(inputs @ weight)  # HOT
