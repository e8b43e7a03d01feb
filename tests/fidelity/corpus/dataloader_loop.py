import torch
from torch.utils.data import DataLoader, Dataset


class Images(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, index):
        return torch.randn(64, 64)


weight = torch.randn(64, 2048)
for batch in DataLoader(Images(), batch_size=16):
    for _ in range(10):
        h = torch.relu(batch @ weight)  # PLANT:step
