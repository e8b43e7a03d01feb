import torch

big = torch.randn(2000, 2000)
tiny = torch.zeros(2)
product = big @ big  # PLANT:once
for _ in range(5000):
    tiny = tiny + 1
