import torch

a = torch.randn(600, 600)
b = torch.randn(600, 600)
for _ in range(60):
    d = a @ b  # PLANT:matmul
    e = d * d  # PLANT:mul
    d += 1  # PLANT:iadd
