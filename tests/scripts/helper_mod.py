import torch


def expensive(x):
    return torch.cumsum(torch.exp(x), dim=0) @ x.T  # HOT


def cheap(x):
    return x[0]


def explode(x):
    if x.numel() > 0:
        _fail()


def _fail():
    raise RuntimeError("failure in a helper")  # RAISE
