"""A script that profiles a part of itself with torch's profiler (the API named by the first
argument: torch.profiler, the default, torch.autograd.profiler, or thread: torch.profiler in
a thread of the script's) and prints its table; on the device named by the second (cpu, the
default, or cuda)."""

import sys
import threading

import torch

api = sys.argv[1] if len(sys.argv) > 1 else "torch.profiler"
device = sys.argv[2] if len(sys.argv) > 2 else "cpu"
a = torch.randn(200, 200, device=device)
for _ in range(20):
    b = a @ a  # recorded by the pass: BEFORE
if api == "torch.profiler":
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    session = torch.profiler.profile(activities=activities)
else:
    session = torch.autograd.profiler.profile(use_device="cuda" if device == "cuda" else None)


def profiled():
    with session as prof:  # the script's own: OWN
        for _ in range(30):
            c = torch.tanh(a)
        if device == "cuda":
            torch.cuda.synchronize()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=50))


if api == "thread":
    thread = threading.Thread(target=profiled)
    thread.start()
    thread.join()
else:
    profiled()
