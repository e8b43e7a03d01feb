import torch

big = torch.randn(2500, 2500)
tiny = torch.zeros(2)
product = big @ big  # PLANT:once
for _ in range(3000):
    tiny = tiny + 1
