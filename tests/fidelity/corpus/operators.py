import torch

a = torch.randn(800, 800)
b = torch.randn(800, 800)
for _ in range(30):
    d = a @ b  # PLANT:matmul
    e = d * d  # PLANT:mul
    d += 1  # PLANT:iadd
