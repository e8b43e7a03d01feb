import pkg
import torch

x = torch.randn(400, 400)
pkg.run(x, 30)  # MEASURE:relative
