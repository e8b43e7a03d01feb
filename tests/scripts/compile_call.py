import sys

import torch

# what the fork server loaded before the script's first line
print("PRELOADED", "torch._dynamo" in sys.modules, "torch._inductor.compile_fx" in sys.modules, flush=True)
step = torch.compile(torch.nn.Linear(4, 4))  # builds, compiles nothing until called
