import torch


def expensive(x):
    return torch.cumsum(torch.exp(x), dim=0) @ x.T  # HOT


def cheap(x):
    return x[0]
