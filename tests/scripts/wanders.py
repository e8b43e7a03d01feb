import os
import sys
import tempfile

import torch
from helper_mod import expensive

os.chdir(tempfile.gettempdir())
sys.path.pop(0)
sys.path.insert(0, "/nonexistent")
sys.argv[:] = ["renamed.py", "--other"]
x = torch.randn(300, 300)
for _ in range(10):
    expensive(x)
