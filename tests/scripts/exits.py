import sys

import torch

x = torch.randn(100, 100)
y = x @ x
sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
