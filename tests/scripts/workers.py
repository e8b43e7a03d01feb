"""A multiprocessing pool and DataLoader workers, started with the start method named by the
first argument (default fork): spawn and forkserver (Python 3.14's default on Linux) start
fresh interpreters that import the script again as ``__mp_main__``."""

import multiprocessing
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset


def square(n):
    return n * n


def main():
    method = sys.argv[1] if len(sys.argv) > 1 else "fork"
    context = multiprocessing.get_context(method)
    with context.Pool(2) as pool:
        print(sum(pool.map(square, range(100))))
    data = TensorDataset(torch.randn(256, 32), torch.randn(256, 1))
    loader = DataLoader(data, batch_size=32, num_workers=2, multiprocessing_context=context)
    weight = torch.randn(32, 4096)
    for inputs, _targets in loader:
        for _ in range(200):  # well above the workers' start-up, which the loop line waits for
            h = torch.tanh(inputs @ weight)  # HOT


if __name__ == "__main__":
    main()
