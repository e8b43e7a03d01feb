"""Two ranks that never finish: rank 0 waits in an all-reduce that rank 1 never joins
(blocked in C++, where no Python signal handler runs), rank 1 sleeps in Python."""

import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
if dist.get_rank() == 0:
    dist.all_reduce(torch.ones(4))  # waits for rank 1, for the backend's timeout (30 min)
while True:
    time.sleep(0.1)
