import json
import math
import sys
import time

import torch

torch.set_num_threads(1)
x = torch.randn(512, 512)
spent = {"hot": 0.0, "python": 0.0}  # the script's own clock, per line: what the sampler must match
for _ in range(20):
    begin = time.perf_counter()
    y = x @ x  # HOT
    middle = time.perf_counter()
    s = [math.sqrt(i) for i in range(40000)]  # PYTHON
    spent["hot"] += middle - begin
    spent["python"] += time.perf_counter() - middle
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as out:
        json.dump(spent, out)
