import threading
import time

import torch

x = torch.randn(300, 300)


def spin():
    total = 0
    for i in range(3_000_000):
        total += i  # OTHER


worker = threading.Thread(target=spin, name="spinner")
worker.start()
deadline = time.perf_counter() + 0.5
while worker.is_alive() or time.perf_counter() < deadline:
    y = x @ x  # HOT
worker.join()
