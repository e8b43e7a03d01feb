import torch
from helper_mod import expensive

x = torch.randn(200, 200)
for _ in range(3):
    expensive(x)
raise ValueError("planted failure")  # RAISE
