# A module compiled with AOTAutograd's eager backend (no C++ compiler needed), trained for a
# few steps: its backward compiles lazily, at the first .backward(), inside that op.
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 1))
compiled = torch.compile(model, backend="aot_eager")
x = torch.randn(64, 128)
for _ in range(5):
    compiled(x).sum().backward()  # HOT
