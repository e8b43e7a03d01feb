import torch


def work(a, b):
    c = a + 1
    d = c @ b  # HOT
    return d


a = torch.randn(300, 300)
b = torch.randn(300, 300)
for _ in range(40):  # the matmuls well above the two randn (a first call costs more)
    work(a, b)
