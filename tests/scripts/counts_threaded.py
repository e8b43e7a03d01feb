"""The same work every run, part of it in a thread: `work` runs 3 times in the main
thread and 5 times in the other (cProfile counts both on Python 3.12+, the main thread
only before)."""

import threading

import torch


def work(n):
    x = torch.ones(32, 32)
    for _ in range(n):
        x = x @ x / 32.0
    return x


def producer():
    for _ in range(5):
        work(10)


thread = threading.Thread(target=producer)
thread.start()
thread.join()  # the thread's calls done before the main thread's: no race on counts
for _ in range(3):
    work(10)
