import torch
from helper_mod import expensive, explode

x = torch.randn(200, 200)
for _ in range(30):  # the work must outweigh the first call's one-time costs (CI: 3 did not)
    expensive(x)
explode(x)
