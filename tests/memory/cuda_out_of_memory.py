"""On a GPU: runs out of memory. The process may use 2 GiB of the device; a list keeps
256 MiB a step until the caching allocator raises torch.OutOfMemoryError. Recorded by
benchmarks/device/check.sh."""

import torch

torch.cuda.set_per_process_memory_fraction(2 * 2**30 / torch.cuda.get_device_properties(0).total_memory)
kept = []
for _step in range(64):
    kept.append(torch.ones(64 * 2**20, device="cuda"))  # PLANTED: 268,435,456 bytes a step, held
