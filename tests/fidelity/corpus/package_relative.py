import pkg
import torch

x = torch.randn(400, 400)
pkg.run(x, 180)  # MEASURE:relative
