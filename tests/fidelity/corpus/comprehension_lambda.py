import torch

x = torch.randn(400, 400)
square = lambda t: t @ t  # noqa: E731  PLANT:lambda
ys = [torch.exp(x) for _ in range(10)]  # PLANT:comprehension
for _ in range(30):
    z = square(x)  # MEASURE:lambda
