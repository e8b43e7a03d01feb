"""A DataLoader whose __getitem__ does tensor work: that work stays on __getitem__'s line,
the loop line keeps only the loader's own time (no double count of its range)."""
import torch
from torch.utils.data import DataLoader, Dataset


class Squares(Dataset):
    def __len__(self):
        return 384

    def __getitem__(self, i):
        a = torch.full((200, 200), float(i))
        return (a @ a).sum()  # PLANT:getitem


w = torch.randn(500, 500)
for batch in DataLoader(Squares(), batch_size=8):
    out = w @ w  # PLANT:step
