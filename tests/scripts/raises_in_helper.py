import torch
from helper_mod import expensive, explode

x = torch.randn(200, 200)
for _ in range(3):
    expensive(x)
explode(x)
