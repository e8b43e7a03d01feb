import torch


def work(x, y):
    a = x @ x  # PLANT:heavy
    b = y @ y  # PLANT:light
    return a, b


# Both lines are matrix products (compute-bound), 700^3 against 300^3 multiply-adds, so
# their ratio does not move when a neighbour loads the memory bus.
x = torch.randn(700, 700)
y = torch.randn(300, 300)
for _ in range(50):
    work(x, y)
