"""DDP of the common shape: ``main()`` builds a DistributedDataParallel model, trains, calls
``dist.destroy_process_group()``, prints and returns; the model (and DDP's reducer, which
holds the process group) is freed as ``main()`` returns. Profiled, this hung at exit
(gloo's thread joined while it waited for the GIL): issue 44. With ``--straggler``, rank 1
does extra work on one line each step."""

import sys

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    straggle = rank == 1 and "--straggler" in sys.argv
    torch.manual_seed(0)
    model = DistributedDataParallel(nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 8)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(32, 64)
    extra = torch.randn(600, 600) / 600**0.5
    for _step in range(20):
        if straggle:
            extra = torch.tanh(extra @ extra @ extra)  # the straggler's extra work
        loss = model(x).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()
    print(f"rank {rank} done", flush=True)


if __name__ == "__main__":
    main()
