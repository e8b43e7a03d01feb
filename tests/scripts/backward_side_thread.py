"""A thread does forward-only work (# SIDE) while the main thread trains: torch numbers
autograd nodes per thread, so the thread's ops carry the numbers the main thread's nodes
take; `loss.backward()` (# HOT) is the backward of # FORWARD alone."""

import threading

import torch


def side(a, stop):
    while not stop.is_set():
        (a @ a).sum()  # SIDE


def main():
    a = torch.randn(200, 200)
    w = torch.randn(200, 200, requires_grad=True)
    stop = threading.Event()
    thread = threading.Thread(target=side, args=(a, stop))
    thread.start()
    for _ in range(40):
        loss = (torch.tanh(a @ w) ** 2).sum()  # FORWARD
        loss.backward()  # HOT
    stop.set()
    thread.join()


main()
