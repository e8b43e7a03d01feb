"""Two phases: a loading phase of many small torch calls, then a training phase whose
line is where most of the time goes. A recording budget spent on the loading phase would
miss the training line (the one run's windows spread over both). Runs about
``seconds`` (argv[1], default 3) in all; with a file name (argv[2]), writes there when the
loading phase ended, in seconds since the script's start."""

import sys
import time

import torch

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
began = time.perf_counter()
rows = []
end = began + seconds / 3
while time.perf_counter() < end:
    rows.append(torch.tensor([1.0, 2.0, 3.0]) * 2)  # LOAD
if len(sys.argv) > 2:
    with open(sys.argv[2], "w") as out:
        out.write(f"{time.perf_counter() - began:.6f}\n")
data = torch.randn(256, 256)
end = time.perf_counter() + 2 * seconds / 3
while time.perf_counter() < end:
    data = torch.tanh(data @ data) / 16  # TRAIN
print(len(rows) > 0)
