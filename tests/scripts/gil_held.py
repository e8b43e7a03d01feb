"""A C call that keeps the GIL for tens of milliseconds (``sorted`` of a long list) next to a
pure Python loop: the sampler's thread cannot look while the GIL is held, and the timer's
tick waits for the call's end. The script times both lines itself."""

import json
import sys
import time

import torch  # noqa: F401  (the runner imports torch first, as for any script)

data = list(range(1_000_000))
spent = {"held": 0.0, "python": 0.0}
for _ in range(6):
    begin = time.perf_counter()
    s = sorted(data, reverse=True)  # HELD
    middle = time.perf_counter()
    x = 0
    for i in range(150_000):  # PYTHON
        x += i
    spent["held"] += middle - begin
    spent["python"] += time.perf_counter() - middle
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as out:
        json.dump(spent, out)
