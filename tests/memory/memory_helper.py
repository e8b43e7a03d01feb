import torch


def scratch_sum(n):
    buf = torch.ones(n)  # PLANTED: n float32 = 4 n bytes, freed on return
    return float(buf.sum())
