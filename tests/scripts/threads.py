import threading

import torch


def spin():
    total = 0
    for i in range(3_000_000):
        total += i  # OTHER


worker = threading.Thread(target=spin, name="spinner")
worker.start()
x = torch.randn(300, 300)
while worker.is_alive():
    y = x @ x  # HOT
worker.join()
