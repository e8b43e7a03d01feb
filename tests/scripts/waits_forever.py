"""The main thread ends while a thread it started (not a daemon) waits for ever: a plain run
never exits. Profiled, the runner describes the thread and ends the process (issue 44).
With ``--endless`` the main thread never ends either (a window cuts it)."""

import sys
import threading

import torch

stop = threading.Event()


def watch() -> None:
    stop.wait()  # nobody sets it: WAITS


threading.Thread(target=watch, name="watcher").start()
x = torch.randn(400, 400) / 20
for _ in range(150):
    x = torch.tanh(x @ x @ x)  # HOT
while "--endless" in sys.argv:
    x = torch.tanh(x @ x @ x)
print("main thread done", flush=True)
