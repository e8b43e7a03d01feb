import multiprocessing

import torch
from torch.utils.data import DataLoader, TensorDataset


def square(n):
    return n * n


def main():
    with multiprocessing.Pool(2) as pool:
        print(sum(pool.map(square, range(100))))
    data = TensorDataset(torch.randn(256, 32), torch.randn(256, 1))
    loader = DataLoader(data, batch_size=32, num_workers=2)
    weight = torch.randn(32, 4096)
    for inputs, _targets in loader:
        for _ in range(200):  # well above the workers' start-up, which the loop line waits for
            h = torch.tanh(inputs @ weight)  # HOT


if __name__ == "__main__":
    main()
