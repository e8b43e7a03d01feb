"""Appends one line to the file named by its argument each time it runs (a side effect a
profile must not repeat), with a planted hot line."""

import sys

import torch

with open(sys.argv[1], "a", encoding="utf-8") as log:
    log.write("ran\n")
x = torch.randn(200, 200)
for _ in range(30):
    y = torch.linalg.inv(x + 200 * torch.eye(200))  # HOT
print("done")
