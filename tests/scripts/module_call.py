import torch
from torch import nn

model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 512))
x = torch.randn(256, 512)
small = torch.randn(4)
with torch.no_grad():
    for _ in range(10):
        y = model(x)  # HOT
        w = small + 1
