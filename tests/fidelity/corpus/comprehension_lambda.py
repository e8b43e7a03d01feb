"""A lambda and a comprehension. Both lines are matrix products: an elementwise line (the former
`torch.exp(x).sum()`) slows when a neighbour loads the memory bus, and in CI it took 10 points
of wall share from the lambda line while the timed runs ran alone."""

import torch

x = torch.randn(400, 400)
square = lambda t: t @ t  # noqa: E731  PLANT:lambda
ys = [(x @ x).sum() for _ in range(10)]  # PLANT:comprehension
for _ in range(300):
    z = square(x)  # MEASURE:lambda
