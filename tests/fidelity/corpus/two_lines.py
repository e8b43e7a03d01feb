import torch


def work(x):
    a = x @ x  # PLANT:heavy
    b = torch.exp(x)  # PLANT:light
    return a, b


x = torch.randn(700, 700)
for _ in range(50):
    work(x)
