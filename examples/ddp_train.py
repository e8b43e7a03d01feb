"""A DDP training loop on the CPU (gloo backend), with a planted straggler: rank 1 does
extra work on one line each step, so it reaches every all-reduce late and the other rank
waits for it inside ``loss.backward()``.

    bottleneck-lsp profile --nproc-per-node 2 examples/ddp_train.py
    bottleneck-lsp profile --nproc-per-node 2 examples/ddp_train.py --even   # no straggler

Run without a launcher (plain ``python``), it is a world of one.
"""

import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def join() -> int:
    if "WORLD_SIZE" not in os.environ:  # not started by torchrun: a world of one
        os.environ.update(RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT="29531")
    dist.init_process_group("gloo")
    return dist.get_rank()


def train(rank: int, steps: int, even: bool) -> None:
    torch.manual_seed(0)
    # a hidden 1024x1024 layer: its backward (two matmuls) makes loss.backward() the clear
    # top line of an even run, about 1.6x the forward line
    layers = nn.Sequential(
        nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)
    )
    model = DistributedDataParallel(layers)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(256, 512)
    y = torch.randint(0, 10, (256,))
    extra = torch.randn(900, 900) / 900**0.5
    for _step in range(steps):
        if rank == 1 and not even:
            extra = torch.tanh(extra @ extra @ extra)  # the straggler's extra work
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--even", action="store_true", help="every rank does the same work")
    args = parser.parse_args()
    rank = join()
    train(rank, args.steps, args.even)
    # The model (and DDP's reducer) went with train(): the process group ends here, while
    # it is still registered (freeing it from the reducer can deadlock gloo's threads).
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
