import torch

# One intra-op thread: with two on a busy machine, every op waits for the pool's other
# thread to be scheduled, and `a + 1` and `d.mean()` then really take 34-41% of the run
# (the script timed itself, two busy loops beside it); 4-9% with one thread, busy or not.
torch.set_num_threads(1)


def work(a, b):
    c = a + 1
    d = c @ b  # HOT
    return d.mean()  # NEXT


a = torch.randn(400, 400)
b = torch.randn(400, 400)
for _ in range(120):  # the matmuls well above the module's first calls, on a busy machine too
    work(a, b)
