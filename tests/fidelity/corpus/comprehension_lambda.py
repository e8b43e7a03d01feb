import torch

x = torch.randn(400, 400)
square = lambda t: t @ t  # noqa: E731  PLANT:lambda
ys = [torch.exp(x).sum() for _ in range(100)]  # PLANT:comprehension
for _ in range(300):
    z = square(x)  # MEASURE:lambda
