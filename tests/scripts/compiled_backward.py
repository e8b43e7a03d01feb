# A module compiled with AOTAutograd's eager backend (no C++ compiler needed), trained for a
# few steps: its backward compiles lazily, at the first .backward(), inside that op. Many
# small layers: the backward's compilation (about 9 ms) outweighs its ops.
import torch
import torch.nn as nn

layers: list[nn.Module] = []
for _ in range(12):
    layers += [nn.Linear(16, 16), nn.ReLU()]
model = nn.Sequential(*layers, nn.Linear(16, 1))
compiled = torch.compile(model, backend="aot_eager")
x = torch.randn(4, 16)
for _ in range(5):
    compiled(x).sum().backward()  # HOT
