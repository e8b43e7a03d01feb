import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(512, 512))

    def forward(self, x):
        h = x + 1
        return torch.tanh(h @ self.weight)  # PLANT:forward


model = Net()
x = torch.randn(512, 512)
with torch.no_grad():
    for _ in range(120):
        y = model(x)
