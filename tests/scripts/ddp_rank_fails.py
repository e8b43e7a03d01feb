"""Two ranks train together; rank 1 fails at step 3 (a planted line), while rank 0 waits
for it in the next all-reduce: the launcher must end rank 0, and the report name rank 1."""

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def train(rank: int) -> None:
    model = DistributedDataParallel(nn.Linear(64, 64))
    x = torch.randn(32, 64)
    for step in range(20):
        if rank == 1 and step == 3:
            raise RuntimeError("rank 1 gave up")  # the planted failure
        model(x).sum().backward()


dist.init_process_group("gloo")
train(dist.get_rank())
dist.destroy_process_group()
