import torch


def work(a, b):
    c = a + 1
    d = c @ b  # HOT
    return d.mean()  # NEXT


a = torch.randn(400, 400)
b = torch.randn(400, 400)
for _ in range(120):  # the matmuls well above the module's first calls, on a busy machine too
    work(a, b)
