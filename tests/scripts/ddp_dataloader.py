"""DDP fed by a DataLoader with two worker processes in each rank, of the common shape
(``destroy_process_group()`` at the end, the model freed as ``main()`` returns)."""

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(512, 64), torch.randn(512, 8))
    loader = DataLoader(data, batch_size=32, num_workers=2, pin_memory=False)
    model = DistributedDataParallel(nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 8)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for inputs, targets in loader:
        loss = (model(inputs) - targets).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()
    print(f"rank {rank} done", flush=True)


if __name__ == "__main__":
    main()
