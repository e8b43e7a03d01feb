import sys

import torch

chunk = "x" * 1023 + "\n"
for _ in range(25 * 1024):
    sys.stdout.write(chunk)
    sys.stderr.write(chunk)
print("LAST LINE")
x = torch.randn(300, 300)
for _ in range(10):
    y = x @ x  # HOT
