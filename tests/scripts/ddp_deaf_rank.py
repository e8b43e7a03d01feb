"""Rank 1 never ends and ignores SIGTERM, after rank 0 has finished and
left: a rank deadlocked where no signal handler runs looks like this to the launcher. It
keeps the launcher's output pipes open."""

import signal
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
dist.all_reduce(torch.ones(4))
if dist.get_rank() == 1:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        time.sleep(0.1)
