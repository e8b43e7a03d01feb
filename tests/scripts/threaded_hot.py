"""The costly work runs in a thread the script starts (line 12), a little in the main
thread (line 27), and a thread pool's worker runs a user function too (line 16)."""

import threading
from concurrent.futures import ThreadPoolExecutor

import torch


def work(a):
    for _ in range(240):
        (a @ a).sum()  # the hot line: the thread's


def pooled(a):
    return (a[:8] * 2).sum()  # a pool's worker thread, started by the library


def main():
    a = torch.randn(300, 300)
    thread = threading.Thread(target=work, args=(a,))
    thread.start()
    thread.join()
    with ThreadPoolExecutor(max_workers=1) as pool:
        list(pool.map(pooled, [a] * 4))
    for _ in range(3):
        a + 1  # the main thread's


main()
