"""A DataLoader whose __getitem__ does tensor work: that work stays on __getitem__'s line,
the loop line keeps only the collation's ops (no double count of the loader's range, and
none of its Python, which the cpu pass's instruments slow down, counted as op time)."""
import torch
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __len__(self):
        return 1536  # a body of about 0.6 s: sampling noise small against the 10-point bound

    def __getitem__(self, i):
        a = torch.full((200, 200), float(i))
        return (a @ a).sum()  # PLANT:getitem


w = torch.randn(500, 500)
for batch in DataLoader(Squares(), batch_size=8):
    out = w @ w  # PLANT:step
