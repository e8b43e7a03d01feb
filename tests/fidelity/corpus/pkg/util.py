import torch


def mix(x):
    return torch.sigmoid(x @ x.T)  # PLANT:relative
