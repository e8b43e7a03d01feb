import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--size", type=int, required=True)
args = parser.parse_args()
x = torch.randn(args.size, args.size)
for _ in range(60):
    y = x @ x  # HOT
