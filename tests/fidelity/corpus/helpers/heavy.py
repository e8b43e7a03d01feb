import torch


def heavy(x):
    return torch.cumsum(torch.exp(x), dim=1) @ x  # PLANT:helper
