import torch


def heavy(x):
    return torch.tanh(x @ x)  # HOT
