import sys

import torch

try:
    answer = input("size? ")
except EOFError:
    answer = ""
rest = sys.stdin.read()
print(f"got {answer!r} and {len(rest)} more characters")
x = torch.randn(300, 300)
for _ in range(10):
    y = x @ x  # HOT
