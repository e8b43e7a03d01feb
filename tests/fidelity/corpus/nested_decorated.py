import functools

import torch


def traced(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args)

    return wrapper


@traced
def decorated(x):
    return torch.tanh(x @ x)  # PLANT:decorated


def outer(x):
    def inner(y):
        return torch.exp(y) @ y  # PLANT:nested

    return inner(x)


x = torch.randn(300, 300)
for _ in range(200):
    decorated(x)  # MEASURE:decorated
for _ in range(100):
    outer(x)  # MEASURE:nested
